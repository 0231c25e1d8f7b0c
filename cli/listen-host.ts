/**
 * What the emulator's `--host` exposes: on loopback only this machine reaches it; on any
 * other address, everyone who can reach that address gets its tokens.
 *
 * @module
 */
import { isLoopbackHost } from '../oauth/endpoint-url.js'

/**
 * Whether a listen address (`127.0.0.1`, `::1`, `localhost`, `0.0.0.0`, a host name) keeps
 * a server on the loopback interface. Decided from the argument, before anything binds:
 * `0.0.0.0`, `::` and every name other than `localhost` count as exposed.
 */
export function isLoopbackListenHost(host: string): boolean {
  const trimmed = host.trim()
  // A bare IPv6 address needs brackets to parse as a URL host; the URL parser then
  // normalises forms such as `127.1` or `0:0:0:0:0:0:0:1`.
  const bracketed = trimmed.includes(':') && !trimmed.startsWith('[') ? `[${trimmed}]` : trimmed
  if (!URL.canParse(`http://${bracketed}/`)) return false
  return isLoopbackHost(new URL(`http://${bracketed}/`).hostname)
}

/**
 * The warning `voot-guard emulator --host <not loopback>` prints to stderr.
 */
export function exposedHostWarning(host: string): string {
  return (
    `voot-guard emulator: warning: --host ${JSON.stringify(host)} is not a loopback address. ` +
    'Anyone who can reach it gets tokens from the emulator (for every user of its data set, ' +
    'without a password) and reads every group. Use it on a trusted network only; ' +
    'the default --host 127.0.0.1 keeps it to this machine.\n'
  )
}
