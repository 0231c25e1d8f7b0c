/**
 * Random values for one authorization request, and the PKCE S256 challenge (RFC 7636).
 *
 * @module
 */
import { createHash, randomBytes } from 'node:crypto'

/**
 * A fresh random value for `state`, `nonce` or a PKCE `code_verifier`: 32 random bytes,
 * base64url-encoded (43 characters of the RFC 7636 unreserved set).
 *
 * @example
 * ```ts
 * const verifier = randomValue()
 * ```
 */
export function randomValue(): string {
  return randomBytes(32).toString('base64url')
}

/**
 * The S256 `code_challenge` of a `code_verifier`: BASE64URL(SHA256(ASCII(verifier))).
 *
 * @example
 * ```ts
 * codeChallenge('dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk') // 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM'
 * ```
 */
export function codeChallenge(verifier: string): string {
  return createHash('sha256').update(verifier, 'ascii').digest('base64url')
}

// RFC 7636 section 4.1: 43 to 128 characters of [A-Z] / [a-z] / [0-9] / "-" / "." / "_" / "~"
const VERIFIER = /^[A-Za-z0-9\-._~]{43,128}$/

/**
 * Whether `value` is a syntactically valid PKCE `code_verifier`.
 *
 * @example
 * ```ts
 * isCodeVerifier(randomValue()) // true
 * ```
 */
export function isCodeVerifier(value: unknown): value is string {
  return typeof value === 'string' && VERIFIER.test(value)
}
