/**
 * A group logo in the emulator's data: an image `data:` URL, decoded into the content type
 * and bytes that `groups/{groupid}/logo` serves.
 *
 * @module
 */

/** `data:image/<subtype>[;base64],<payload>`: only images, since only images are served. */
const IMAGE_DATA_URL = /^data:(image\/[a-z0-9][a-z0-9.+-]*)(;base64)?,(.*)$/is

/**
 * A decoded logo: its content type and bytes.
 */
export interface GroupLogo {
  readonly contentType: string
  readonly bytes: Buffer
}

/**
 * Decodes an image `data:` URL (base64 or percent-encoded), or `undefined` when the text
 * is not one.
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
