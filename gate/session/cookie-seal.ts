/**
 * Sealing cookie values: AES-256-GCM under a key derived per purpose (the session, the
 * sign-in state) from each of the configured secrets with HKDF-SHA256, authenticated
 * together with the cookie's name, so that a value sealed for one purpose or one cookie
 * never opens as another. The first secret seals; every secret opens (rotation).
 *
 * @module
 */
import { createCipheriv, createDecipheriv, hkdfSync, randomBytes } from 'node:crypto'

const VERSION = 1
const IV_BYTES = 12
const TAG_BYTES = 16
const SALT = 'voot-guard gate cookie'

/** Seals and opens the values of one purpose's cookies. */
export interface CookieSealer {
  /** The sealed value (base64url), for the cookie named `name`. */
  seal(name: string, plaintext: string): string
  /** The plaintext, or `undefined` when the value is forged, truncated, for another name or purpose, or sealed with an unknown secret. */
  open(name: string, value: string): string | undefined
}

/**
 * A sealer for one purpose.
 *
 * @example
 * ```ts
 * const sessions = createCookieSealer(['first secret of at least 32 characters'], 'session')
 * const value = sessions.seal('__Host-voot-gate', JSON.stringify(session))
 * ```
 */
export function createCookieSealer(secrets: readonly string[], purpose: string): CookieSealer {
  if (secrets.length === 0) throw new Error('createCookieSealer(): at least one secret is needed')
  const keys = secrets.map((secret) => Buffer.from(hkdfSync('sha256', secret, SALT, `purpose:${purpose}`, 32)))
  const aad = (name: string) => Buffer.from(`${purpose}\u0000${name}`, 'utf8')

  return {
    seal(name, plaintext) {
      const iv = randomBytes(IV_BYTES)
      const cipher = createCipheriv('aes-256-gcm', keys[0] as Buffer, iv)
      cipher.setAAD(aad(name))
      const body = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()])
      return Buffer.concat([Buffer.of(VERSION), iv, body, cipher.getAuthTag()]).toString('base64url')
    },
    open(name, value) {
      if (value.length > 8192 || !/^[A-Za-z0-9_-]+$/.test(value)) return undefined
      const bytes = Buffer.from(value, 'base64url')
      if (bytes.length < 1 + IV_BYTES + TAG_BYTES || bytes[0] !== VERSION) return undefined
      const iv = bytes.subarray(1, 1 + IV_BYTES)
      const body = bytes.subarray(1 + IV_BYTES, bytes.length - TAG_BYTES)
      const tag = bytes.subarray(bytes.length - TAG_BYTES)
      const bound = aad(name)
      for (const key of keys) {
        try {
          const decipher = createDecipheriv('aes-256-gcm', key, iv, { authTagLength: TAG_BYTES })
          decipher.setAAD(bound)
          decipher.setAuthTag(tag)
          return Buffer.concat([decipher.update(body), decipher.final()]).toString('utf8')
        } catch {
          // Not this key: try the next one.
        }
      }
      return undefined
    },
  }
}
