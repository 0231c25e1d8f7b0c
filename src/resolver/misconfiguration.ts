/**
 * Loud misconfiguration: when the address in `baseUrl` answers like no group service (a
 * 404 on `me/groups`, an HTML page, a redirect, a host that does not resolve, a TLS
 * failure), every guarded request would answer 503 and nobody would know why. The first
 * such failure of each cause is named in ONE warning, with the likely mistake, through the
 * `logger` option or `process.emitWarning` (code `VOOT_GUARD_MISCONFIGURED`), or
 * `console.warn` on a runtime without `process.emitWarning` (Workers, Vercel's Edge).
 *
 * @module
 */
import { UpstreamError } from '../errors.js'

/**
 * The `code` of voot-guard's misconfiguration warnings (`process.emitWarning`).
 *
 * @example
 * ```ts
 * process.on('warning', (warning) => {
 *   if ((warning as { code?: string }).code === MISCONFIGURED_WARNING) alertOperators(warning.message)
 * })
 * ```
 */
export const MISCONFIGURED_WARNING = 'VOOT_GUARD_MISCONFIGURED'

/**
 * The likely mistake behind an upstream failure, or `undefined` when the failure says
 * nothing about the configuration (a timeout, a 5xx, a 429 happen to healthy services).
 *
 * @example
 * ```ts
 * const found = misconfigurationHint(error, baseUrl)
 * if (found !== undefined) console.error(`${found.cause}: ${found.hint}`)
 * ```
 */
export function misconfigurationHint(error: unknown, baseUrl: string | undefined): { cause: string; hint: string } | undefined {
  if (!(error instanceof UpstreamError)) return undefined
  const at = baseUrl === undefined ? 'the group service' : baseUrl
  const shapes =
    'Dataporten serves the API under /groups (https://groups-api.dataporten.no/groups); OpenConext at the service root (https://voot.surfconext.nl)'
  if (
    error.code === 'ERR_UPSTREAM_STATUS' &&
    error.upstreamStatus === 404 &&
    (error.endpoint === 'me/groups' || error.endpoint === 'grouptypes')
  ) {
    return {
      cause: 'not_found',
      hint: `${at} answered 404 for ${error.endpoint}: baseUrl is likely missing its path prefix or has a wrong one. ${shapes}`,
    }
  }
  if (error.code === 'ERR_UPSTREAM_BODY' && /not JSON/.test(error.message)) {
    return {
      cause: 'not_json',
      hint: `${at} answered with something that is not JSON (an HTML page?): baseUrl likely points at a web site or a proxy, not at the group service's API. ${shapes}`,
    }
  }
  if (error.code === 'ERR_UPSTREAM_REDIRECT') {
    return {
      cause: 'redirect',
      hint: `${at} answered with a redirect (${String(error.upstreamStatus)}), which is never followed with a bearer token: set baseUrl to the final address (https:, the right host, the right path).`,
    }
  }
  if (error.code === 'ERR_UPSTREAM_NETWORK') {
    const code = networkCode(error.cause)
    if (code === 'ENOTFOUND' || code === 'EAI_AGAIN') {
      return { cause: 'dns', hint: `the host of ${at} does not resolve (${code}): check the host name in baseUrl.` }
    }
    if (code !== undefined && /CERT|SSL|TLS|SELF_SIGNED/.test(code)) {
      return {
        cause: 'tls',
        hint: `TLS with ${at} failed (${code}): check the host name in baseUrl and the server's certificate (or the dispatcher's CA settings).`,
      }
    }
  }
  return undefined
}

/**
 * What `verify()` says when `baseUrl` ends in a stray `/groups` under the root of an
 * OpenConext-voot service (SURFconext's VOOT): `root` is that root, found by its health.
 *
 * @example
 * ```ts
 * strayGroupsHint('https://voot.example.nl/groups', 'https://voot.example.nl')
 * ```
 */
export function strayGroupsHint(baseUrl: string | undefined, root: string): string {
  const at = baseUrl === undefined ? 'the group service' : baseUrl
  return (
    `The group service at baseUrl does not answer like one: ${at} has a stray /groups. ${root} is an OpenConext-voot service ` +
    `(SURFconext's VOOT), which serves the group API at its root and answers 401 to any other path without a token: ` +
    `set baseUrl to ${root} (its endpoints are ${root}/me/groups and ${root}/me/groups/{groupId}), or every request would fail with 503.`
  )
}

function networkCode(cause: unknown): string | undefined {
  for (let error = cause, depth = 0; typeof error === 'object' && error !== null && depth < 4; depth++) {
    const code = (error as { code?: unknown }).code
    if (typeof code === 'string' && code !== 'UND_ERR_CONNECT') return code
    error = (error as { cause?: unknown }).cause
  }
  return undefined
}

/**
 * Warns once per cause for one resolver.
 */
export function createMisconfigurationNotice(
  baseUrl: string | undefined,
  logger: { warn(message: string): void } | undefined,
): (error: unknown) => void {
  const seen = new Set<string>()
  return (error) => {
    const found = misconfigurationHint(error, baseUrl)
    if (found === undefined || seen.has(found.cause)) return
    seen.add(found.cause)
    emitResolverWarning(`voot-guard: the group service looks misconfigured: ${found.hint}`, MISCONFIGURED_WARNING, logger)
  }
}

/**
 * Sends one of the resolver's warnings: through `logger` when the application gave one,
 * else `process.emitWarning` with `code`, else (a runtime without it: Workers, Vercel's
 * Edge) `console.warn`. A logger that throws changes nothing.
 */
export function emitResolverWarning(message: string, code: string, logger: { warn(message: string): void } | undefined): void {
  // From globalThis: a runtime without Node's globals (Workers, Vercel's Edge) has no `process`.
  const runtimeProcess = (globalThis as { process?: Partial<Pick<NodeJS.Process, 'emitWarning'>> }).process
  try {
    if (logger !== undefined) logger.warn(message)
    else if (typeof runtimeProcess?.emitWarning === 'function') runtimeProcess.emitWarning(message, { code })
    else console.warn(`${message} (${code})`)
  } catch {
    // A broken logger must never change an authorization outcome.
  }
}
