/**
 * Group logos: the real Dataporten service serves `groups/{groupid}/logo` as an image. In
 * the emulator's data a group's logo is a `data:` URL in its `logo` field; that field is
 * the emulator's own bookkeeping, so it is served only as the image, never inside a
 * group's JSON.
 *
 * @module
 */
import type { Answer } from './answer.js'
import type { EmulatorGroup } from './data.js'

/** `data:image/<subtype>[;base64],<payload>`: only images, since only images are served. */
const IMAGE_DATA_URL = /^data:(image\/[a-z0-9][a-z0-9.+-]*)(;base64)?,(.*)$/is

/**
 * A decoded logo: its content type and bytes.
 *
 * @example
 * ```ts
 * const logo: GroupLogo = { contentType: 'image/png', bytes: Buffer.from(png) }
 * ```
 */
export interface GroupLogo {
  readonly contentType: string
  readonly bytes: Buffer
}

/**
 * Decodes an image `data:` URL (base64 or percent-encoded), or `undefined` when the text
 * is not one.
 *
 * @example
 * ```ts
 * parseLogo('data:image/svg+xml,%3Csvg%2F%3E') // { contentType: 'image/svg+xml', bytes: <Buffer 3c 73 76 67 2f 3e> }
 * parseLogo('https://example.org/logo.png')   // undefined
 * ```
 */
export function parseLogo(text: string): GroupLogo | undefined {
  const match = IMAGE_DATA_URL.exec(text)
  if (match === null) return undefined
  const [, contentType = '', base64, payload = ''] = match
  if (base64 !== undefined) {
    // Buffer.from(…, 'base64') skips what is not base64; a strict check keeps typos loud.
    if (!/^[A-Za-z0-9+/]*={0,2}$/.test(payload) || payload.length % 4 !== 0) return undefined
    return { contentType: contentType.toLowerCase(), bytes: Buffer.from(payload, 'base64') }
  }
  try {
    return { contentType: contentType.toLowerCase(), bytes: Buffer.from(decodeURIComponent(payload), 'utf8') }
  } catch {
    return undefined
  }
}

/**
 * The answer to `groups/{groupid}/logo` for a visible group: the image with its content
 * type, or `undefined` (a 404) when the group has no logo.
 *
 * @example
 * ```ts
 * return logoAnswer(group) ?? NOT_FOUND
 * ```
 */
export function logoAnswer(group: EmulatorGroup): Answer | undefined {
  const logo = typeof group.logo === 'string' ? parseLogo(group.logo) : undefined
  if (logo === undefined) return undefined
  return { status: 200, headers: { 'content-type': logo.contentType, 'cache-control': 'public, max-age=3600' }, body: logo.bytes }
}

/**
 * A group as its JSON is served: without the emulator's `logo` field (a large `data:` URL
 * that the real service does not put in a group's JSON).
 *
 * @example
 * ```ts
 * jsonAnswer(200, servedGroup(group))
 * ```
 */
export function servedGroup(group: EmulatorGroup): EmulatorGroup {
  if (!Object.hasOwn(group, 'logo')) return group
  const { logo: _logo, ...rest } = group
  return rest as EmulatorGroup
}
