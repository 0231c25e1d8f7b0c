/**
 * Where `rd` may send a browser after sign-in or sign-out: a relative path on the same
 * host, or an absolute URL to a host the rules or `redirectHosts` name (or the host the
 * sign-in came through). Everything else is an open redirect and is refused.
 *
 * @module
 */
import { isLoopbackHostname } from './loopback.js'

const UNSAFE = /[\u0000-\u001f\u007f\\\s]/

/**
 * The URL to redirect to, or `undefined` when `rd` is not allowed.
 *
 * @example
 * ```ts
 * safeRedirect('/wiki/page', isKnown, 'wiki.example.org')            // '/wiki/page'
 * safeRedirect('//evil.example', isKnown, 'wiki.example.org')        // undefined
 * safeRedirect('https://evil.example/', isKnown, 'wiki.example.org') // undefined
 * ```
 */
export function safeRedirect(rd: string, isKnownHost: (host: string) => boolean, currentHost: string): string | undefined {
  if (rd.length === 0 || rd.length > 4096 || UNSAFE.test(rd)) return undefined
  if (rd.startsWith('/')) {
    if (rd.startsWith('//')) return undefined
    // A relative path must stay on this host whatever a URL parser makes of it.
    const parsed = new URL(rd, 'https://gate.invalid')
    return parsed.host === 'gate.invalid' ? rd : undefined
  }
  if (!URL.canParse(rd)) return undefined
  const url = new URL(rd)
  if (url.username !== '' || url.password !== '') return undefined
  if (url.protocol !== 'https:' && !(url.protocol === 'http:' && isLoopbackHostname(url.hostname))) return undefined
  if (!/^https?:\/\/[^/?#\\@]+(?:[/?#]|$)/i.test(rd)) return undefined
  const host = url.hostname.toLowerCase()
  return host === currentHost || isKnownHost(host) ? url.href : undefined
}
