/**
 * `trustedProxies`: the peers whose forwarded headers the gate believes.
 *
 * @module
 */
import { BlockList, isIP } from 'node:net'

/** An address and prefix length, or `undefined` when `text` is not a CIDR (or a bare address). */
export function parseCidr(text: string): { address: string; prefix: number; family: 'ipv4' | 'ipv6' } | undefined {
  const [address = '', prefixText, extra] = text.trim().split('/')
  if (extra !== undefined) return undefined
  const version = isIP(address)
  if (version === 0) return undefined
  const max = version === 4 ? 32 : 128
  const prefix = prefixText === undefined ? max : /^\d{1,3}$/.test(prefixText) ? Number(prefixText) : Number.NaN
  if (!Number.isInteger(prefix) || prefix < 0 || prefix > max) return undefined
  return { address, prefix, family: version === 4 ? 'ipv4' : 'ipv6' }
}

/**
 * Whether a peer address is trusted. IPv4 peers that reach a dual-stack socket as
 * `::ffff:a.b.c.d` are checked as the IPv4 address they are.
 */
export type TrustCheck = (remoteAddress: string | undefined) => boolean

/**
 * Builds the check for a list of CIDRs (already validated).
 *
 * @example
 * ```ts
 * const trusted = createTrustCheck(['127.0.0.1/32', '10.0.0.0/8'])
 * trusted(req.socket.remoteAddress)
 * ```
 */
export function createTrustCheck(cidrs: readonly string[]): TrustCheck {
  const list = new BlockList()
  for (const text of cidrs) {
    const cidr = parseCidr(text)
    if (cidr !== undefined) list.addSubnet(cidr.address, cidr.prefix, cidr.family)
  }
  // `BlockList.check` builds a SocketAddress per call; a gate hears from a few proxies.
  const known = new Map<string, boolean>()
  return (remoteAddress) => {
    if (remoteAddress === undefined) return false
    let trusted = known.get(remoteAddress)
    if (trusted === undefined) {
      if (known.size >= 1024) known.clear()
      trusted = check(remoteAddress)
      known.set(remoteAddress, trusted)
    }
    return trusted
  }

  function check(remoteAddress: string): boolean {
    const mapped = /^::ffff:(\d{1,3}(?:\.\d{1,3}){3})$/i.exec(remoteAddress)
    if (mapped !== null) return list.check(mapped[1] as string, 'ipv4')
    const version = isIP(remoteAddress)
    if (version === 0) return false
    return list.check(remoteAddress, version === 4 ? 'ipv4' : 'ipv6')
  }
}
