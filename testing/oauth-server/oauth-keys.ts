/**
 * The emulated authorization server's ID token signing keys: RS256 key pairs made with
 * `jose`, created lazily (so emulators that never sign an ID token never pay for RSA key
 * generation), published as a JWKS, and rotatable.
 *
 * @module
 */
import { randomBytes } from 'node:crypto'
import { exportJWK, generateKeyPair, SignJWT, type CryptoKey, type JWK, type JWTPayload } from 'jose'

interface KeyPair {
  readonly kid: string
  readonly privateKey: CryptoKey
  readonly publicJwk: JWK
}

/**
 * The signing keys of one emulated authorization server.
 */
export interface SigningKeys {
  /** Signs a JWT with the current key (`alg: RS256`, `kid` set, `typ` default `JWT`). */
  sign(claims: JWTPayload, typ?: string): Promise<string>
  /** The public JWKS: the current key first, then the previous one while it is kept. */
  jwks(): Promise<{ keys: JWK[] }>
  /**
   * Replaces the current key with a new one and returns its `kid`. The old key stays in
   * the JWKS (so tokens it signed still verify) unless `keepPrevious` is `false`.
   */
  rotate(options?: { keepPrevious?: boolean }): Promise<string>
}

/**
 * Creates a lazily generated, rotatable RS256 key set.
 */
export function createSigningKeys(): SigningKeys {
  let current: Promise<KeyPair> | undefined
  let previous: KeyPair | undefined

  const currentKey = (): Promise<KeyPair> => (current ??= newKeyPair())

  return {
    async sign(claims, typ = 'JWT') {
      const key = await currentKey()
      return new SignJWT(claims).setProtectedHeader({ alg: 'RS256', kid: key.kid, typ }).sign(key.privateKey)
    },
    async jwks() {
      const keys = [(await currentKey()).publicJwk]
      if (previous !== undefined) keys.push(previous.publicJwk)
      return { keys }
    },
    async rotate(options = {}) {
      const old = current === undefined ? undefined : await current
      const next = newKeyPair()
      current = next
      previous = options.keepPrevious === false ? undefined : old
      return (await next).kid
    },
  }
}

async function newKeyPair(): Promise<KeyPair> {
  const { privateKey, publicKey } = await generateKeyPair('RS256', { modulusLength: 2048 })
  const kid = randomBytes(12).toString('base64url')
  const publicJwk: JWK = { ...(await exportJWK(publicKey)), kid, alg: 'RS256', use: 'sig' }
  return { kid, privateKey, publicJwk }
}
