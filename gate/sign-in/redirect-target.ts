/**
 * Where `rd` may send a browser after sign-in or sign-out: a relative path on the same
 * host, or an absolute URL to a host the rules name exactly, a `redirectHosts` entry, or
 * the host the sign-in came through. Everything else is an open redirect and is refused.
 *
 * @module
 */
import { isLoopbackHost } from '../../src/internal.js'

// Anything but printable ASCII: an IDN written in Unicode, a full-width or ideographic dot
// (U+3002 reads as "." to the URL standard), spaces and controls. Browsers would rewrite
// such a URL before going there; the gate refuses it rather than judge a host the browser
// would not visit.
const UNSAFE = /[^\u0021-\u007e]|\\/
const AUTHORITY = /^https?:\/\/([^/?#@]+)(?:[/?#]|$)/i

/** The request `rd` came with: its scheme and host (lower-case, no port). */
export interface RedirectOrigin {
  readonly scheme: 'http' | 'https'
  readonly host: string
}

/**
 * The URL to redirect to, or `undefined` when `rd` is not allowed. An absolute `rd` must be
 * written as the URL standard writes it (its authority unchanged by parsing: no `%`, no
 * IPv4 shorthand, no trailing dot, no default port), `https:`, or `http:` to a loopback host
 * when the request itself was plain http on loopback.
 *
 * @example
 * ```ts
 * const from = { scheme: 'https', host: 'wiki.example.org' } as const
 * safeRedirect('/wiki/page', isKnown, from)            // '/wiki/page'
 * safeRedirect('//evil.example', isKnown, from)        // undefined
 * safeRedirect('https://evil.example/', isKnown, from) // undefined
 * ```
 */
export function safeRedirect(rd: string, isRedirectHost: (host: string) => boolean, from: RedirectOrigin): string | undefined {
  if (rd.length === 0 || rd.length > 4096 || UNSAFE.test(rd)) return undefined
  if (rd.startsWith('/')) {
    if (rd.startsWith('//')) return undefined
    // A relative path must stay on this host whatever a URL parser makes of it.
    const parsed = new URL(rd, 'https://gate.invalid')
    return parsed.host === 'gate.invalid' ? rd : undefined
  }
  const authority = AUTHORITY.exec(rd)?.[1]
  if (authority === undefined || !URL.canParse(rd)) return undefined
  const url = new URL(rd)
  if (url.username !== '' || url.password !== '') return undefined
  // The host compared is the one a browser goes to, and it must read as written.
  if (url.host !== authority.toLowerCase()) return undefined
  const host = url.hostname
  const loopbackHttp = from.scheme === 'http' && isLoopbackHost(from.host)
  if (url.protocol !== 'https:' && !(url.protocol === 'http:' && loopbackHttp && isLoopbackHost(host))) return undefined
  return host === from.host || isRedirectHost(host) ? url.href : undefined
}
