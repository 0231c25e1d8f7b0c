/**
 * The `curl` lines the demo prints: one way of writing them for the app's guide and the
 * gate's, quoted for a POSIX shell.
 *
 * @module
 */
import { shellQuote } from '../cli/shell-quote.js'

/**
 * `curl -i [-X METHOD] [-H 'Name: value' ...] 'url'`, every word quoted for the shell.
 *
 * @example
 * ```ts
 * curlCommand('GET', 'http://127.0.0.1:3000/api/me', { Authorization: 'Bearer abc' })
 * // curl -i -H 'Authorization: Bearer abc' 'http://127.0.0.1:3000/api/me'
 * ```
 */
export function curlCommand(method: string, url: string, headers: Readonly<Record<string, string>>): string {
  const parts = ['curl', '-i']
  if (method !== 'GET') parts.push('-X', method)
  for (const [name, value] of Object.entries(headers)) parts.push('-H', shellQuote(`${name}: ${value}`))
  parts.push(shellQuote(url))
  return parts.join(' ')
}
