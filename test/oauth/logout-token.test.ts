/**
 * `verifyLogoutToken` against a real provider stand-in on 127.0.0.1 (its discovery
 * document and JWKS): a Logout Token that section 2.6 of OpenID Connect Back-Channel Logout
 * 1.0 accepts is accepted once, and each token of the spec's list of refusals is refused.
 */
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { exportJWK, generateKeyPair, SignJWT, type CryptoKey, type JWK, type JWTPayload } from 'jose'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { InvalidArgumentError } from '../../src/errors.js'
import { BACKCHANNEL_LOGOUT_EVENT, createOAuthClient, verifyLogoutToken, type OAuthClient } from '../../oauth/index.js'

let server: Server
let issuer: string
let signing: { privateKey: CryptoKey; jwk: JWK }
let stranger: CryptoKey

beforeAll(async () => {
  const pair = await generateKeyPair('RS256')
  signing = { privateKey: pair.privateKey, jwk: { ...(await exportJWK(pair.publicKey)), kid: 'k1', alg: 'RS256', use: 'sig' } }
  stranger = (await generateKeyPair('RS256')).privateKey
  server = createServer((req, res) => {
    const body =
      req.url === '/.well-known/openid-configuration'
        ? {
            issuer,
            authorization_endpoint: `${issuer}/authorize`,
            token_endpoint: `${issuer}/token`,
            jwks_uri: `${issuer}/jwks`,
            backchannel_logout_supported: true,
          }
        : req.url === '/jwks'
          ? { keys: [signing.jwk] }
          : undefined
    res.writeHead(body === undefined ? 404 : 200, { 'content-type': 'application/json' }).end(JSON.stringify(body ?? {}))
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
})

afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())))

function client(): OAuthClient {
  return createOAuthClient({ issuer, clientId: 'my-client', clientSecret: 'client-secret-value-0123456789', scopes: ['openid'] })
}

let counter = 0
function logoutToken(
  claims: JWTPayload = {},
  options: { header?: Record<string, unknown>; key?: CryptoKey; drop?: readonly string[] } = {},
): Promise<string> {
  const now = Math.floor(Date.now() / 1000)
  const payload: JWTPayload = {
    iss: issuer,
    aud: 'my-client',
    iat: now,
    exp: now + 120,
    jti: `jti-${++counter}-${Math.random()}`,
    sid: 'provider-session-1',
    events: { [BACKCHANNEL_LOGOUT_EVENT]: {} },
    ...claims,
  }
  for (const name of options.drop ?? []) delete payload[name]
  return new SignJWT(payload)
    .setProtectedHeader({ alg: 'RS256', kid: 'k1', typ: 'logout+jwt', ...options.header })
    .sign(options.key ?? signing.privateKey)
}

async function refusal(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise
  } catch (error) {
    return error
  }
  throw new Error('the logout token was accepted')
}

describe('verifyLogoutToken', () => {
  it('accepts a logout token of the spec once, and returns who ended which session', async () => {
    const oauth = client()
    const token = await logoutToken({ sub: 'alice' })
    const claims = await verifyLogoutToken(oauth, token)
    expect(claims).toMatchObject({ iss: issuer, sub: 'alice', sid: 'provider-session-1' })
    expect(typeof claims.jti).toBe('string')
    expect(typeof claims.iat).toBe('number')
    // The same token again is a replay.
    expect(await refusal(verifyLogoutToken(oauth, token))).toMatchObject({ check: 'logout_token', status: 400 })
    // sub alone, sid alone, and a token typed JWT or not typed at all are all accepted.
    expect(await verifyLogoutToken(oauth, await logoutToken({ sub: 'bob' }, { drop: ['sid'] }))).toMatchObject({ sub: 'bob' })
    expect(await verifyLogoutToken(oauth, await logoutToken({}, { header: { typ: 'JWT' } }))).toMatchObject({ sid: 'provider-session-1' })
    expect(await verifyLogoutToken(oauth, await logoutToken({}, { drop: ['exp'] }))).toMatchObject({ sid: 'provider-session-1' })
  })

  const now = () => Math.floor(Date.now() / 1000)
  it.each<[string, () => Promise<string>, string]>([
    ['signed with a key not in the JWKS', () => logoutToken({}, { key: stranger }), 'signature'],
    ['from another issuer', () => logoutToken({ iss: 'https://evil.example.org' }), '"iss"'],
    ['for another client', () => logoutToken({ aud: 'someone-else' }), '"aud"'],
    ['for several clients without azp', () => logoutToken({ aud: ['my-client', 'other'] }), '"azp"'],
    ['issued in the future', () => logoutToken({ iat: now() + 3_600 }), 'future'],
    ['issued long ago', () => logoutToken({ iat: now() - 3_600, exp: now() + 60 }), 'too old'],
    ['without iat', () => logoutToken({}, { drop: ['iat'] }), '"iat"'],
    ['expired', () => logoutToken({ iat: now() - 200, exp: now() - 100 }), 'expired'],
    ['without jti', () => logoutToken({}, { drop: ['jti'] }), '"jti"'],
    ['without events', () => logoutToken({}, { drop: ['events'] }), '"events"'],
    ['with another event', () => logoutToken({ events: { 'http://example.org/other': {} } }), 'back-channel logout event'],
    [
      'with an event that is not an object',
      () => logoutToken({ events: { [BACKCHANNEL_LOGOUT_EVENT]: true } }),
      'back-channel logout event',
    ],
    ['naming neither sid nor sub', () => logoutToken({}, { drop: ['sid'] }), 'neither'],
    ['carrying a nonce', () => logoutToken({ nonce: 'n-0S6_WzA2Mj' }), 'nonce'],
    ['typed as something else', () => logoutToken({}, { header: { typ: 'at+jwt' } }), 'typ'],
    [
      'unsigned (alg none)',
      async () =>
        `${Buffer.from('{"alg":"none"}').toString('base64url')}.${Buffer.from(JSON.stringify({ iss: issuer, aud: 'my-client', iat: now(), jti: 'x', sid: 's', events: { [BACKCHANNEL_LOGOUT_EVENT]: {} } })).toString('base64url')}.`,
      'not valid',
    ],
    ['not a JWT', async () => 'not-a-jwt', 'malformed'],
    ['encrypted (five parts)', async () => 'eyJhbGciOiJSU0EtT0FFUCJ9.a.b.c.d', 'not a signed JWT'],
  ])('refuses a logout token %s', async (_name, make, words) => {
    const error = await refusal(verifyLogoutToken(client(), await make()))
    expect(error).toMatchObject({ check: 'logout_token', status: 400 })
    expect((error as Error).message).toContain(words)
  })

  it('refuses a client it did not make', async () => {
    const fake = { ...client() } as OAuthClient
    expect(await refusal(verifyLogoutToken(fake, await logoutToken()))).toBeInstanceOf(InvalidArgumentError)
  })
})
