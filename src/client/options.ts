/**
 * Options of the groups client, their defaults and their validation.
 *
 * @module
 */
import type { Dispatcher } from 'undici'
import { isLoopbackHost } from './loopback-host.js'
import { InvalidOptionError } from '../errors.js'
import { baseUrlOption, integerOption, rejectUnknownKeys } from '../option-checks.js'
import { VERSION } from '../version.js'

/**
 * Default whole-call deadline of one upstream call, in ms.
 *
 * @example
 * ```ts
 * const timeout = options.timeout ?? DEFAULT_TIMEOUT
 * ```
 */
export const DEFAULT_TIMEOUT = 5000

/**
 * Longest accepted `timeout`, in ms (ten minutes).
 *
 * @example
 * ```ts
 * integerOption('timeout', given, { fallback: DEFAULT_TIMEOUT, min: 1, max: MAX_TIMEOUT })
 * ```
 */
export const MAX_TIMEOUT = 600_000

/**
 * Default `maxResponseBytes` (1 MiB).
 */
export const DEFAULT_MAX_RESPONSE_BYTES = 1 << 20

/**
 * Largest accepted `maxResponseBytes` (64 MiB).
 */
export const MAX_MAX_RESPONSE_BYTES = 64 << 20

/**
 * Default `User-Agent` header of every upstream call: `voot-guard/<version>`.
 */
export const DEFAULT_USER_AGENT = `voot-guard/${VERSION}`

/**
 * Options of {@link createGroupsClient}.
 *
 * @example
 * ```ts
 * const options: GroupsClientOptions = {
 *   baseUrl: 'https://groups-api.dataporten.no/groups',
 *   timeout: 3000,
 * }
 * ```
 */
export interface GroupsClientOptions {
  /**
   * The service's `{base_url}`: Feide's WITH its `/groups` prefix,
   * `https://groups-api.dataporten.no/groups`; SURFconext's (OpenConext-voot) its origin,
   * without a prefix, `https://voot.surfconext.nl`. `http:` or `https:` only; no query,
   * fragment or credentials. A trailing slash is tolerated.
   */
  baseUrl: string
  /** Deadline of one whole call (connect, headers and body), in ms. Integer 1..600000; default 5000. */
  timeout?: number | undefined
  /** Largest accepted response body, in bytes. Integer 1..(64 << 20); default 1 MiB (`1 << 20`). */
  maxResponseBytes?: number | undefined
  /**
   * The undici dispatcher for every call (a proxy agent, a `MockAgent` in tests). Default:
   * a keep-alive undici `Pool` for the base URL's origin (at most 64 connections), created
   * by the client and closed by {@link voot-guard!GroupsClient.close}. A dispatcher given here is never
   * closed by the client. Node only: on other runtimes (Workers, Vercel's Edge, Deno, Bun)
   * calls go through the global `fetch` and this option is refused with `InvalidOptionError`.
   */
  dispatcher?: Dispatcher | undefined
  /** The `User-Agent` header; default `voot-guard/<version>`. Visible ASCII and spaces, at most 256 characters. */
  userAgent?: string | undefined
  /**
   * Lets a plain `http:` `baseUrl` to a host that is not loopback through. Every bearer
   * token would cross the network in clear: only for a test rig inside a trusted network.
   * Default `false` (`http:` only to `localhost`, 127.0.0.0/8 and `[::1]`). A resolver made
   * with it while `NODE_ENV` is `production` warns once (`VOOT_GUARD_INSECURE_HTTP`).
   */
  allowInsecureHttp?: boolean | undefined
}

/**
 * {@link GroupsClientOptions} after validation, with defaults filled in.
 */
export interface ResolvedGroupsClientOptions {
  /** The normalised base URL: origin and base path, without a trailing slash. */
  readonly baseUrl: string
  /** Scheme, host and port of the base URL. */
  readonly origin: string
  /** Path of the base URL without a trailing slash (`''` for the root). */
  readonly basePath: string
  readonly timeout: number
  readonly maxResponseBytes: number
  /** The caller's dispatcher, or `undefined` when the client should create its own. */
  readonly dispatcher: Dispatcher | undefined
  readonly userAgent: string
}

// Printable ASCII only: anything else in a header value is an injection or encoding risk.
const HEADER_VALUE = /^[\x21-\x7e](?:[\x20-\x7e]*[\x21-\x7e])?$/
const MAX_USER_AGENT_LENGTH = 256
/** Every key of {@link GroupsClientOptions}. */
const OPTION_KEYS: readonly (keyof GroupsClientOptions)[] = [
  'baseUrl',
  'timeout',
  'maxResponseBytes',
  'dispatcher',
  'userAgent',
  'allowInsecureHttp',
]
/**
 * Feide's group service hosts: they serve the API under `/groups` only, so a `baseUrl`
 * without it would make every request a 404 from the service, which is a 503 here.
 */
const FEIDE_HOSTS = new Set(['groups-api.dataporten.no', 'groups-api.feide.no'])
/**
 * SURFconext's VOOT hosts (`voot.surfconext.nl`, and its test environments such as
 * `voot.test.surfconext.nl`): OpenConext-voot serves the API at the ROOT (`/me/groups`),
 * and answers 401 to any other path without a token, so a `baseUrl` with a path (the
 * `/groups` of Feide's address, most often) would look like a group service to `verify()`
 * and make every request a 503.
 */
const SURFCONEXT_VOOT_HOST = /^voot(?:\.[a-z0-9-]+)?\.surfconext\.nl$/

/**
 * Validates {@link GroupsClientOptions} and fills in the defaults. Throws
 * {@link InvalidOptionError} naming the first invalid option.
 */
export function resolveGroupsClientOptions(options: GroupsClientOptions): ResolvedGroupsClientOptions {
  if (typeof options !== 'object' || options === null) {
    throw new InvalidOptionError('baseUrl', 'the options object with a baseUrl is required')
  }
  rejectUnknownKeys('', options, OPTION_KEYS)
  const { origin, basePath } = parseBaseUrl(options.baseUrl)
  if (options.allowInsecureHttp !== undefined && typeof options.allowInsecureHttp !== 'boolean') {
    throw new InvalidOptionError('allowInsecureHttp', 'must be a boolean')
  }
  const { protocol, hostname } = new URL(origin)
  if (protocol === 'http:' && !isLoopbackHost(hostname) && options.allowInsecureHttp !== true) {
    throw new InvalidOptionError(
      'baseUrl',
      'must use https: (plain http: would send every bearer token in clear; it is allowed for loopback hosts, or with allowInsecureHttp: true inside a trusted network)',
    )
  }
  return {
    baseUrl: origin + basePath,
    origin,
    basePath,
    timeout: integerOption('timeout', options.timeout, { fallback: DEFAULT_TIMEOUT, min: 1, max: MAX_TIMEOUT }),
    maxResponseBytes: integerOption('maxResponseBytes', options.maxResponseBytes, {
      fallback: DEFAULT_MAX_RESPONSE_BYTES,
      min: 1,
      max: MAX_MAX_RESPONSE_BYTES,
    }),
    dispatcher: dispatcherOption(options.dispatcher),
    userAgent: userAgentOption(options.userAgent),
  }
}

function parseBaseUrl(value: unknown): { origin: string; basePath: string } {
  const url = new URL(baseUrlOption('baseUrl', value))
  const basePath = url.pathname.replace(/\/+$/, '')
  if (FEIDE_HOSTS.has(url.hostname) && basePath !== '/groups' && !basePath.startsWith('/groups/')) {
    throw new InvalidOptionError(
      'baseUrl',
      `${url.hostname} serves the group API under /groups: append /groups (${url.origin}/groups), or every request would fail with 503`,
    )
  }
  if (SURFCONEXT_VOOT_HOST.test(url.hostname) && basePath !== '') {
    throw new InvalidOptionError(
      'baseUrl',
      `${url.hostname} is SURFconext's VOOT (OpenConext-voot), which serves the group API at its root, not under ${basePath}: ` +
        `set baseUrl to ${url.origin} (its endpoints are ${url.origin}/me/groups and ${url.origin}/me/groups/{groupId}), or every request would fail with 503`,
    )
  }
  return { origin: url.origin, basePath }
}

function dispatcherOption(value: unknown): Dispatcher | undefined {
  if (value === undefined) return undefined
  // Duck-typed: a dispatcher from another copy of undici fails `instanceof` but works.
  if (typeof value !== 'object' || value === null || typeof (value as Dispatcher).dispatch !== 'function') {
    throw new InvalidOptionError('dispatcher', 'must be an undici Dispatcher (an object with a dispatch method)')
  }
  return value as Dispatcher
}

function userAgentOption(value: unknown): string {
  if (value === undefined) return DEFAULT_USER_AGENT
  if (typeof value !== 'string' || value.length > MAX_USER_AGENT_LENGTH || !HEADER_VALUE.test(value)) {
    throw new InvalidOptionError('userAgent', `must be 1 to ${MAX_USER_AGENT_LENGTH} visible ASCII characters (spaces allowed inside)`)
  }
  return value
}
