/**
 * The shape of the gate's configuration, as written in `gate.yaml` (or given to
 * `createGate`), and the settings it is read into.
 *
 * @module
 */
import type { Requirement } from '../../src/index.js'
import type { GateServicesSettings } from './service.js'
import type { GateFixtures, GatePolicyTest, PolicySettings } from './policy-config.js'

/**
 * A duration: a string such as `30s`, `8h`, `1h30m`, `250ms`, or a number of seconds.
 *
 * @example
 * ```ts
 * const ttl: GateDuration = '60s'
 * ```
 */
export type GateDuration = string | number

/**
 * What a rule requires: exactly one of `group`, `anyOf`, `allOf`, `groupOfType`, with an
 * optional least `role` (and, with several group services, an optional `service`).
 *
 * @example
 * ```ts
 * const staff: GateRequirement = { group: 'fc:org:example.org', role: 'admin' }
 * ```
 */
export type GateRequirement = (
  | { readonly group: string }
  | { readonly anyOf: readonly GateGroupEntry[] }
  | { readonly allOf: readonly GateGroupEntry[] }
  | { readonly groupOfType: string }
) & {
  /** The least role. Default: any. */
  readonly role?: string
  /**
   * With `services`: the service of every group named that does not name its own, for ids
   * that `groupPrefixes` does not assign. A service that contradicts a group's prefix is a problem.
   */
  readonly service?: string
}

/**
 * One group of an `anyOf` or `allOf`: its id, or, with several group services, its id and
 * the service it is on (for an id that `groupPrefixes` does not assign, beside groups of
 * other services).
 *
 * @example
 * ```ts
 * const board: GateRequirement = { anyOf: ['fc:org:example.org', { group: 'urn:mace:example.nl:board', service: 'surf' }], role: 'admin' }
 * ```
 */
export type GateGroupEntry = string | { readonly group: string; readonly service: string }

/**
 * One rule: which requests it matches (`host`, `path`, `methods`) and what they need
 * (`allow: anyone`, `allow: signed-in`, or `require`). The first matching rule decides; a
 * request no rule matches is refused (403).
 *
 * @example
 * ```ts
 * const rule: GateRule = { id: 'staff', host: 'wiki.example.org', path: '/admin/**', require: { group: 'fc:org:example.org', role: 'admin' } }
 * ```
 */
export interface GateRule {
  /** Named in the `rule` header and the metrics. Default: the rule's index. */
  readonly id?: string
  /** `wiki.example.org` or `*.example.org` (one or more labels). Default: any host. */
  readonly host?: string
  /**
   * A glob: `*` is one path segment, `**` any number (so `/admin/**` matches `/admin` too);
   * `{name}` is one segment bound to a parameter (letters, digits, `_`, `-`, `.`) that
   * `require`'s group ids may name (`fc:fs:fs:emne:example.org:{course}:1`). Default: every path.
   */
  readonly path?: string
  /** Narrows a parameter of `path` with a regular expression, anchored: `{ course: "[A-Z]{3}[0-9]{4}" }`. */
  readonly params?: Readonly<Record<string, string>>
  /** Methods, such as `[GET, HEAD]` (any case): those of RFC 9110 and of `extensionMethods`. Default: all. */
  readonly methods?: readonly string[]
  /** `anyone` (no credentials needed) or `signed-in` (a valid personal token). */
  readonly allow?: 'anyone' | 'signed-in'
  /** A group requirement. */
  readonly require?: GateRequirement
}

/**
 * The gate's configuration (the content of `gate.yaml`). See docs/gate.md.
 *
 * @example
 * ```ts
 * const config: GateConfig = {
 *   service: { baseUrl: 'https://groups-api.dataporten.no/groups' },
 *   rules: [{ path: '/admin/**', require: { group: 'fc:org:example.org', role: 'admin' } }, { allow: 'signed-in' }],
 * }
 * ```
 */
export interface GateConfig {
  /** `host:port`. Default `127.0.0.1:4181`; a host other than loopback requires `trustedProxies`. */
  readonly listen?: string
  /** CIDRs whose forwarded headers are believed. Default `127.0.0.1/32` and `::1/128`. */
  readonly trustedProxies?: readonly string[]
  /** A FastCGI authorizer listener for Apache httpd's mod_authnz_fcgi: `{ listen: "127.0.0.1:4182" }`. Default: none. */
  readonly fastcgi?: { readonly listen: string }
  /** The resolver's options (`baseUrl`, `timeout`, `roles`, `cache`, ...); durations as strings or seconds. Not with `services`. */
  readonly service?: Readonly<Record<string, unknown>> & { readonly baseUrl: string }
  /**
   * `voot-guard/oauth` client options (`issuer` or `authUrl`, `clientId`, `clientSecret`,
   * `scopes`, `redirectUri`), and the gate's `backchannelLogout: true` (serve
   * `POST /_gate/backchannel-logout`) and `endSession: true` (sign-out continues at the
   * provider's `end_session_endpoint`). Not with `services`.
   */
  readonly oauth?: Readonly<Record<string, unknown>> & { readonly clientId: string }
  /**
   * Several group services instead of `service` and `oauth`: by name, each with its
   * `service` and `oauth`, a `label` for the sign-in page, and the `hosts`, `paths` and JWT
   * `issuers` whose bearer tokens go to it. See docs/gate.md, "Several group services".
   */
  readonly services?: Readonly<Record<string, GateServiceConfig>>
  /** With `services`: group id prefixes and the service they belong to, such as `{ "fc:": feide, "urn:collab:": surf }`. */
  readonly groupPrefixes?: Readonly<Record<string, string>>
  /** The session cookie: `secrets` (the first seals, every one opens), `name`, `maxAge` (default `8h`). */
  readonly cookie?: { readonly name?: string; readonly secrets: readonly string[]; readonly maxAge?: GateDuration }
  /** The shared tier of `voot-guard/redis`. */
  readonly redis?: { readonly url: string; readonly secret: string; readonly prefix?: string }
  /** Hosts an absolute `rd` may name besides those the rules name. */
  readonly redirectHosts?: readonly string[]
  /**
   * Refuse (403, before any rule) a request to a host that no rule's `host` and no
   * `redirectHosts` entry names, so a client cannot pick which host's rules judge it.
   * Default: `true` when any rule has a `host`, else `false`.
   */
  readonly strictHosts?: boolean
  /**
   * Names of the headers sent to the app: `user` (default `X-Voot-User`), `rule` (default
   * `X-Voot-Rule`), `service` (default `X-Voot-Service`: the group service the user came
   * with, by its name under `services`; empty with one service or when unknown, since each
   * provider's `sub` is its own namespace); `token: true` also passes the access token.
   */
  readonly headers?: { readonly user?: string; readonly rule?: string; readonly service?: string; readonly token?: boolean | string }
  /**
   * The decision log: `decisions` (`stdout`, `stderr` or a file's path), `allowed` (`all`, the
   * default; `none`; or a fraction: which allowed checks are written, denials and errors always
   * are), `user` (`sub`, the default, or `hash`: a keyed hash instead of the `sub`).
   */
  readonly log?: { readonly decisions: string; readonly allowed?: 'all' | 'none' | number; readonly user?: 'sub' | 'hash' }
  /** Methods a rule may name besides RFC 9110's (`GET`, `HEAD`, `POST`, `PUT`, `PATCH`, `DELETE`, `OPTIONS`, `TRACE`, `CONNECT`), such as `[PROPFIND, MKCOL]`. */
  readonly extensionMethods?: readonly string[]
  /** Ordered; first match wins; no match denies. A rule no request can reach (an earlier one takes all its requests) is refused. */
  readonly rules: readonly GateRule[]
  /** Who is in what, for the policy `tests` only (never used to decide a real request). */
  readonly fixtures?: GateFixtures
  /** Policy tests, run offline by `voot-guard gate --test` (and `--check`). */
  readonly tests?: readonly GatePolicyTest[]
}

/**
 * One group service of a gate with several (`services.<name>`).
 *
 * @example
 * ```ts
 * const feide: GateServiceConfig = { label: 'Feide', service: { baseUrl: 'https://groups-api.dataporten.no/groups' }, hosts: ['no.example.org'] }
 * ```
 */
export interface GateServiceConfig {
  /** What the sign-in page calls it. Default: its name. */
  readonly label?: string
  /** The resolver's options, as the single-service `service`. */
  readonly service: Readonly<Record<string, unknown>> & { readonly baseUrl: string }
  /** Its sign-in, as the single-service `oauth`. Default: none (its users come with bearer tokens). */
  readonly oauth?: Readonly<Record<string, unknown>> & { readonly clientId: string }
  /** Hosts (`no.example.org`, `*.example.org`) whose bearer tokens go to this service. */
  readonly hosts?: readonly string[]
  /** Path globs whose bearer tokens go to this service (the first service that matches). */
  readonly paths?: readonly string[]
  /** JWT access token issuers (`iss`) whose tokens go to this service. */
  readonly issuers?: readonly string[]
}

/** A rule, compiled. */
export interface CompiledRule {
  readonly id: string
  /** Lower-case host, `*.suffix`, or `undefined` for any. */
  readonly host: string | undefined
  /** A wildcard host's suffix with its dot (`.example.org` of `*.example.org`), made once; `undefined` otherwise. */
  readonly hostSuffix: string | undefined
  readonly path: RegExp | undefined
  /** The path glob as written, for people (whoami); `undefined`: every path. */
  readonly glob: string | undefined
  readonly methods: ReadonlySet<string> | undefined
  /**
   * `anyone`, or the requirement (`authenticated()` for `signed-in`); for a rule with
   * parameters, its requirement as written (`{course}` in its ids), for people.
   */
  readonly decision: 'anyone' | Requirement
  /** A rule with parameters: the path's values, or `undefined` when a value is out of bounds (the rule does not match). */
  readonly bind?: ((path: string) => Readonly<Record<string, string>> | undefined) | undefined
  /** A rule with parameters: the requirement for a path it matches, its ids filled in (throws `InvalidGroupIdError` for one too long). */
  readonly requirementAt?: ((path: string) => Requirement) | undefined
}

/**
 * The configuration, validated, with defaults filled in and durations in ms.
 *
 * @example
 * ```ts
 * const problems = new ProblemList()
 * const settings: GateSettings = readGateSettings(parsedYaml, problems)
 * if (problems.items.length === 0) console.log(settings.listen.port)
 * ```
 */
export interface GateSettings {
  readonly listen: { readonly host: string; readonly port: number }
  readonly trustedProxies: readonly string[]
  /** The FastCGI authorizer's address, when configured. */
  readonly fastcgi: { readonly listen: { readonly host: string; readonly port: number } } | undefined
  /** Options for `createGuardCore` (empty with `services`). */
  readonly service: Readonly<Record<string, unknown>>
  readonly oauth: Readonly<Record<string, unknown>> | undefined
  /** Several group services; `undefined` with one `service`. */
  readonly services: GateServicesSettings | undefined
  readonly cookie: { readonly name: string | undefined; readonly secrets: readonly string[]; readonly maxAge: number }
  readonly redis: { readonly url: string; readonly secret: string; readonly prefix: string | undefined } | undefined
  readonly redirectHosts: readonly string[]
  /** Whether a request to a host no rule nor `redirectHosts` names is refused (see {@link GateConfig.strictHosts}). */
  readonly strictHosts: boolean
  readonly headers: { readonly user: string; readonly rule: string; readonly service: string; readonly token: string | undefined }
  /** The decision log; `undefined`: none. */
  readonly log: DecisionLogSettings | undefined
  readonly rules: readonly GateRule[]
  /** The policy tests and their fixtures. */
  readonly policy: PolicySettings
}

/** What the log writes to: `stdout`, `stderr`, or a file appended to (reopened on reload, for logrotate). */
export type DecisionLogTarget = 'stdout' | 'stderr' | { readonly file: string }

/** The `log` settings, read. */
export interface DecisionLogSettings {
  readonly decisions: DecisionLogTarget
  /** The share of allowed checks written: 1 (`all`), 0 (`none`) or a fraction. Denials and errors: always. */
  readonly allowed: number
  readonly user: 'sub' | 'hash'
}
