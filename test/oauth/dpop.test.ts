/**
 * DPoP (RFC 9449) against oidc-provider over real HTTP on 127.0.0.1, with server nonces
 * required: the token from the code flow, refresh and client credentials is bound to the
 * client's key (`cnf.jkt` is its thumbprint), userinfo is called with proofs, the same
 * token is refused as a plain Bearer, and a `use_dpop_nonce` answer is retried once.
 */
import { randomBytes } from 'node:crypto'
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import { calculateJwkThumbprint, exportJWK, generateKeyPair, type GenerateKeyPairResult } from 'jose'
import type Provider from 'oidc-provider'
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { InvalidOptionError } from '../../src/errors.js'
import { createOAuthClient, OAuthError, type OAuthClient, type TokenSet } from '../../oauth/index.js'
import { createProvider } from '../support/oidc-provider.js'

const REDIRECT = 'https://app.example.org/callback'
const SECRET = 'dpop-client-secret-0123456789'

let provider: Provider
let server: Server
let issuer: string
let dpop: GenerateKeyPairResult
let thumbprint: string
/** Every request the provider answered, as `METHOD path status`. */
let log: string[] = []

/** Logs alice in and grants what the client asked for. */
async function interaction(req: IncomingMessage, res: ServerResponse): Promise<void> {
  const details = await provider.interactionDetails(req, res)
  if (details.prompt.name === 'login') {
    await provider.interactionFinished(req, res, { login: { accountId: 'alice' } }, { mergeWithLastSubmission: false })
    return
  }
  const grant = new provider.Grant({ accountId: 'alice', clientId: String(details.params['client_id']) })
  grant.addOIDCScope(String(details.params['scope']))
  await provider.interactionFinished(req, res, { consent: { grantId: await grant.save() } }, { mergeWithLastSubmission: true })
}

beforeAll(async () => {
  server = createServer()
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  const signing = await generateKeyPair('RS256', { extractable: true })
  provider = await createProvider(issuer, {
    clients: [
      {
        client_id: 'dpop-client',
        client_secret: SECRET,
        redirect_uris: [REDIRECT],
        grant_types: ['authorization_code', 'refresh_token', 'client_credentials'],
        response_types: ['code'],
        dpop_bound_access_tokens: true,
      },
    ],
    jwks: { keys: [{ ...(await exportJWK(signing.privateKey)), kid: 'op-key', alg: 'RS256' }] },
    cookies: { keys: ['a-cookie-signing-key-for-the-tests'] },
    scopes: ['openid', 'offline_access', 'groups'],
    claims: { openid: ['sub'] },
    findAccount: (_ctx, sub) => ({ accountId: sub, claims: () => ({ sub }) }),
    interactions: { url: (_ctx, details) => `/interaction/${details.uid}` },
    issueRefreshToken: () => true,
    features: {
      devInteractions: { enabled: false },
      clientCredentials: { enabled: true },
      userinfo: { enabled: true },
      dPoP: { enabled: true, nonceSecret: randomBytes(32), requireNonce: () => true },
    },
  })
  const callback = provider.callback()
  server.on('request', (req: IncomingMessage, res: ServerResponse) => {
    res.on('finish', () => log.push(`${req.method ?? ''} ${(req.url ?? '').split('?')[0] ?? ''} ${res.statusCode}`))
    if (req.url?.startsWith('/interaction/') === true) {
      interaction(req, res).catch((err: unknown) => res.writeHead(500).end(String(err)))
    } else {
      void callback(req, res)
    }
  })
  dpop = await generateKeyPair('ES256')
  thumbprint = await calculateJwkThumbprint(await exportJWK(dpop.publicKey))
})
afterAll(async () => {
  server.closeAllConnections()
  await new Promise<void>((resolve) => server.close(() => resolve()))
})
beforeEach(() => {
  log = []
})

function makeClient(withDpop = true): OAuthClient {
  return createOAuthClient({
    issuer,
    clientId: 'dpop-client',
    clientSecret: SECRET,
    redirectUri: REDIRECT,
    scopes: ['openid', 'offline_access', 'groups'],
    ...(withDpop ? { dpop } : {}),
  })
}

/** Follows the redirects of a sign-in (with a cookie jar) until the provider sends the user back. */
async function signIn(url: string): Promise<string> {
  const jar = new Map<string, string>()
  let next = url
  for (let hop = 0; hop < 12; hop++) {
    const cookie = [...jar].map(([name, value]) => `${name}=${value}`).join('; ')
    const res = await fetch(next, { redirect: 'manual', headers: cookie === '' ? {} : { cookie } })
    for (const line of res.headers.getSetCookie()) {
      const pair = line.split(';')[0] ?? ''
      jar.set(pair.slice(0, pair.indexOf('=')), pair.slice(pair.indexOf('=') + 1))
    }
    await res.text()
    const location = res.headers.get('location')
    if (location === null) throw new Error(`sign-in stopped at ${res.status} ${next}`)
    next = new URL(location, next).href
    if (next.startsWith(REDIRECT)) return next
  }
  throw new Error('too many redirects')
}

async function signedIn(client: OAuthClient): Promise<TokenSet> {
  const { url, ...checks } = await client.authorizationUrl({ params: { prompt: 'consent' } })
  return client.handleCallback(await signIn(url), checks)
}

/** The thumbprint (`cnf.jkt`) the provider bound an access token to. */
async function boundTo(accessToken: string): Promise<string | undefined> {
  const token = (await provider.AccessToken.find(accessToken)) ?? (await provider.ClientCredentials.find(accessToken))
  return token?.jkt
}

const tokenCalls = (): string[] => log.filter((line) => line.startsWith('POST /token'))

describe('DPoP with server nonces', () => {
  it('binds the code flow token to the key, after one retry with the server nonce', async () => {
    const tokens = await signedIn(makeClient())
    expect(tokens.tokenType).toBe('DPoP')
    expect(await boundTo(tokens.accessToken)).toBe(thumbprint)
    expect(tokens.claims?.sub).toBe('alice')
    // The first proof had no nonce: the provider answered use_dpop_nonce, and the client tried once more.
    expect(tokenCalls()).toEqual(['POST /token 400', 'POST /token 200'])
  })

  it('calls userinfo with a proof; the same token as a plain Bearer is refused', async () => {
    const client = makeClient()
    const tokens = await signedIn(client)
    expect(await client.userinfo(tokens)).toMatchObject({ sub: 'alice' })
    const { userinfo_endpoint: userinfo } = await client.metadata()
    const plain = await fetch(userinfo ?? '', { headers: { authorization: `Bearer ${tokens.accessToken}` } })
    expect(plain.status).toBe(401)
    const err = await makeClient(false)
      .userinfo(tokens.accessToken)
      .catch((error: unknown) => error)
    expect(err).toBeInstanceOf(OAuthError)
    expect(err).toMatchObject({ error: 'invalid_token', status: 401 })
    expect(String(err)).not.toContain(tokens.accessToken)
  })

  it('refreshes with a proof: the new token is bound to the same key', async () => {
    const client = makeClient()
    const tokens = await signedIn(client)
    expect(tokens.refreshToken).toEqual(expect.any(String))
    log = []
    const fresh = await client.refresh(tokens)
    expect(fresh.tokenType).toBe('DPoP')
    expect(fresh.accessToken).not.toBe(tokens.accessToken)
    expect(await boundTo(fresh.accessToken)).toBe(thumbprint)
    // The nonce of the last answer is remembered: no second round trip.
    expect(tokenCalls()).toEqual(['POST /token 200'])
  })

  it('binds a client credentials token too', async () => {
    const tokens = await makeClient().clientCredentials({ scope: 'groups' })
    expect(tokens.tokenType).toBe('DPoP')
    expect(await boundTo(tokens.accessToken)).toBe(thumbprint)
  })

  it("without a dpop key, a client of a provider that requires DPoP gets the provider's refusal", async () => {
    const err = await makeClient(false)
      .clientCredentials({ scope: 'groups' })
      .catch((error: unknown) => error)
    expect(err).toBeInstanceOf(OAuthError)
    expect(err).toMatchObject({ error: 'invalid_grant' })
    expect(String(err)).not.toContain(SECRET)
  })

  it('refuses a dpop option that is not a key pair, and a misspelt one with a suggestion', () => {
    const base = { issuer, clientId: 'dpop-client', clientSecret: SECRET }
    expect(() => createOAuthClient({ ...base, dpop: { privateKey: dpop.privateKey } as never })).toThrow(InvalidOptionError)
    expect(() => createOAuthClient({ ...base, dPoP: dpop } as never)).toThrow(/dPoP: is not an option \(did you mean dpop\?\)/)
  })
})
