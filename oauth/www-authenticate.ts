/**
 * Reading the `error` attributes of a Bearer challenge (RFC 6750 section 3), as the
 * userinfo endpoint sends them with a 401 or 403.
 *
 * @module
 */

/**
 * The attributes of a Bearer challenge this client uses.
 *
 * @example
 * ```ts
 * const challenge: BearerChallenge = { error: 'invalid_token', error_description: 'expired' }
 * ```
 */
export interface BearerChallenge {
  readonly error?: string
  readonly error_description?: string
  readonly error_uri?: string
  readonly scope?: string
}

const TCHAR = /[!#$%&'*+\-.^_`|~0-9A-Za-z]/

/**
 * The attributes of the Bearer challenge in a `WWW-Authenticate` header value, or
 * `undefined` when there is no Bearer challenge.
 *
 * @example
 * ```ts
 * parseBearerChallenge('Bearer realm="x", error="invalid_token"')?.error // 'invalid_token'
 * ```
 */
export function parseBearerChallenge(header: string | readonly string[] | undefined): BearerChallenge | undefined {
  if (header === undefined) return undefined
  const value = typeof header === 'string' ? header : header.join(', ')
  const start = /(?:^|[\s,])Bearer(?:\s+|$)/i.exec(value)
  if (start === null) return undefined
  const attributes = readParams(value, start.index + start[0].length)
  return {
    ...(attributes['error'] === undefined ? {} : { error: attributes['error'] }),
    ...(attributes['error_description'] === undefined ? {} : { error_description: attributes['error_description'] }),
    ...(attributes['error_uri'] === undefined ? {} : { error_uri: attributes['error_uri'] }),
    ...(attributes['scope'] === undefined ? {} : { scope: attributes['scope'] }),
  }
}

/**
 * Reads `name=value` pairs (value a token or quoted-string, RFC 9110 section 11.2) from
 * `from` on, until the end or the start of the next challenge (a token not followed by `=`).
 */
function readParams(value: string, from: number): Record<string, string> {
  const attributes: Record<string, string> = {}
  let i = from
  const skip = (chars: RegExp): void => {
    while (i < value.length && chars.test(value[i] ?? '')) i++
  }
  const token = (): string => {
    const begin = i
    skip(TCHAR)
    return value.slice(begin, i)
  }
  for (;;) {
    skip(/[\s,]/)
    const name = token().toLowerCase()
    if (name === '') break
    skip(/\s/)
    if (value[i] !== '=') break
    i++
    skip(/\s/)
    let text = ''
    if (value[i] === '"') {
      i++
      while (i < value.length && value[i] !== '"') {
        if (value[i] === '\\') i++
        text += value[i] ?? ''
        i++
      }
      i++
    } else {
      text = token()
    }
    if (!(name in attributes)) attributes[name] = text
  }
  return attributes
}
