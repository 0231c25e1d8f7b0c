/**
 * The OAuth client against oidc-provider (an OpenID Certified provider) over real HTTP on
 * 127.0.0.1: RFC 9207 `iss` on both flows' redirects, refresh with rotation (OpenID Connect
 * Core 12.2), `max_age` and `auth_time`, `response_mode`s the client cannot read, pushed
 * authorization requests (RFC 9126), and JWT client authentication (`private_key_jwt`
 * with RSA, P-256 and Ed25519 keys, `client_secret_jwt`) at the token and PAR endpoints.
 *
 * The user signs in through the provider's interaction endpoints, answered by a small
 * handler that logs "alice" in and grants what the client asked for.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import { inspect } from 'node:util'
import { exportJWK, generateKeyPair, type JWK } from 'jose'
import type { ClientMetadata, default as Provider } from 'oidc-provider'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { InvalidArgumentError } from '../../src/errors.js'
import { createOAuthClient, OAuthError, OAuthValidationError, type OAuthClient, type OAuthClientOptions } from '../../oauth/index.js'
import { createProvider } from '../support/oidc-provider.js'

const REDIRECT = 'https://app.example.org/callback'
const SECRET = 'basic-client-secret-0123456789'
// HS256 wants a secret at least as long as its output.
const HS_SECRET = 'hs-client-secret-0123456789-abcdefghijklmnopqrstuvwxyz'

interface Op {
  readonly issuer: string
  close(): Promise<void>
}

interface ClientKeys {
  rsa: JWK
  ec: JWK
  ed: JWK
}

let keys: ClientKeys
let op: Op
let parOp: Op

async function keyPair(alg: string, kid: string, withAlg: boolean): Promise<{ privateJwk: JWK; publicJwk: JWK }> {
  const { privateKey, publicKey } = await generateKeyPair(alg, { extractable: true })
  const extra = withAlg ? { kid, alg } : { kid }
  return { privateJwk: { ...(await exportJWK(privateKey)), ...extra }, publicJwk: { ...(await exportJWK(publicKey)), ...extra } }
}

/** Logs alice in, and grants every scope and claim the client asked for. */
async function interaction(provider: Provider, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const details = await provider.interactionDetails(req, res)
  if (details.prompt.name === 'login') {
    await provider.interactionFinished(req, res, { login: { accountId: 'alice' } }, { mergeWithLastSubmission: false })
    return
  }
  const grant =
    details.grantId === undefined
      ? new provider.Grant({ accountId: details.session?.accountId ?? 'alice', clientId: String(details.params['client_id']) })
      : await provider.Grant.find(details.grantId)
  if (grant === undefined) throw new Error('grant not found')
  const missing = details.prompt.details as { missingOIDCScope?: string[]; missingOIDCClaims?: string[] }
  if (missing.missingOIDCScope !== undefined) grant.addOIDCScope(missing.missingOIDCScope.join(' '))
  if (missing.missingOIDCClaims !== undefined) grant.addOIDCClaims(missing.missingOIDCClaims)
  const grantId = await grant.save()
  await provider.interactionFinished(req, res, { consent: { grantId } }, { mergeWithLastSubmission: true })
}

async function startOp(clientKeys: { rsa: JWK; ec: JWK; ed: JWK }, requirePar: boolean): Promise<Op> {
  const server: Server = createServer()
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  const signing = await keyPair('RS256', 'op-key', true)
  const common: Partial<ClientMetadata> = {
    redirect_uris: [REDIRECT],
    grant_types: ['authorization_code', 'refresh_token'],
    response_types: ['code'],
    require_auth_time: true,
  }
  const provider = await createProvider(issuer, {
    clients: [
      { ...common, client_id: 'basic-client', client_secret: SECRET, token_endpoint_auth_method: 'client_secret_basic' },
      { ...common, client_id: 'rsa-client', token_endpoint_auth_method: 'private_key_jwt', jwks: { keys: [clientKeys.rsa] } },
      { ...common, client_id: 'ec-client', token_endpoint_auth_method: 'private_key_jwt', jwks: { keys: [clientKeys.ec] } },
      { ...common, client_id: 'ed-client', token_endpoint_auth_method: 'private_key_jwt', jwks: { keys: [clientKeys.ed] } },
      { ...common, client_id: 'hs-client', client_secret: HS_SECRET, token_endpoint_auth_method: 'client_secret_jwt' },
    ],
    jwks: { keys: [signing.privateJwk] },
    cookies: { keys: ['a-cookie-signing-key-for-the-tests'] },
    scopes: ['openid', 'offline_access', 'groups'],
    claims: { openid: ['sub'] },
    findAccount: (_ctx, sub) => ({ accountId: sub, claims: () => ({ sub }) }),
    interactions: { url: (_ctx, details) => `/interaction/${details.uid}` },
    features: {
      devInteractions: { enabled: false },
      pushedAuthorizationRequests: { enabled: true, requirePushedAuthorizationRequests: requirePar },
    },
    rotateRefreshToken: true,
  })
  const callback = provider.callback()
  server.on('request', (req: IncomingMessage, res: ServerResponse) => {
    if (req.url?.startsWith('/interaction/') === true) {
      interaction(provider, req, res).catch((err: unknown) => res.writeHead(500).end(String(err)))
    } else {
      void callback(req, res)
    }
  })
  return {
    issuer,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections()
        server.close(() => resolve())
      }),
  }
}

beforeAll(async () => {
  const rsa = await keyPair('RS256', 'rsa-1', false)
  const ec = await keyPair('ES256', 'ec-1', false)
  const ed = await keyPair('EdDSA', 'ed-1', false)
  keys = { rsa: rsa.privateJwk, ec: ec.privateJwk, ed: ed.privateJwk }
  const publicKeys = { rsa: rsa.publicJwk, ec: ec.publicJwk, ed: { ...ed.publicJwk, alg: 'EdDSA' } }
  op = await startOp(publicKeys, false)
  parOp = await startOp(publicKeys, true)
})
afterAll(async () => {
  await op?.close()
  await parOp?.close()
})

function makeClient(at: Op, overrides: Partial<OAuthClientOptions> = {}): OAuthClient {
  return createOAuthClient({
    issuer: at.issuer,
    clientId: 'basic-client',
    clientSecret: SECRET,
    redirectUri: REDIRECT,
    scopes: ['openid', 'groups'],
    ...overrides,
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
      const eq = pair.indexOf('=')
      jar.set(pair.slice(0, eq), pair.slice(eq + 1))
    }
    const body = await res.text()
    const location = res.headers.get('location')
    if (location === null) throw new Error(`sign-in stopped at ${res.status} ${next}: ${body.slice(0, 300)}`)
    next = new URL(location, next).href
    if (next.startsWith(REDIRECT)) return next
  }
  throw new Error('too many redirects')
}

async function flow(client: OAuthClient, options: Parameters<OAuthClient['authorizationUrl']>[0] = {}) {
  const { url, ...checks } = await client.authorizationUrl(options)
  const callback = await signIn(url)
  return { url, checks, callback, tokens: await client.handleCallback(callback, checks) }
}

function onlyRequestUri(url: string): void {
  expect([...new URL(url).searchParams.keys()].sort()).toEqual(['client_id', 'request_uri'])
}

/** The error a promise rejects with (the assertions after it fail when it does not reject). */
function failure(promise: Promise<unknown>): Promise<unknown> {
  return promise.then(
    () => undefined,
    (err: unknown) => err,
  )
}

/** Every way an error could be shown: message, JSON, stack, and a deep inspection. */
function shown(err: unknown): string {
  return [String(err), JSON.stringify(err), (err as Error).stack, inspect(err, { depth: 10, showHidden: true })].join('\n')
}

describe('RFC 9207: iss on the redirect back', () => {
  it("the code flow passes with the provider's iss, and refuses a redirect without it", async () => {
    const client = makeClient(op)
    expect((await client.metadata()).authorization_response_iss_parameter_supported).toBe(true)
    const { url, ...checks } = await client.authorizationUrl()
    const callback = await signIn(url)
    expect(new URL(callback).searchParams.get('iss')).toBe(op.issuer)
    const stripped = new URL(callback)
    stripped.searchParams.delete('iss')
    const err = await failure(client.handleCallback(stripped.href, checks))
    expect(err).toMatchObject({ check: 'issuer' })
    expect((await client.handleCallback(callback, checks)).claims?.sub).toBe('alice')
  })

  it("the implicit redirect is held to the same rule, from this provider's metadata", async () => {
    const client = makeClient(op)
    const { state } = await client.implicitAuthorizationUrl({ scope: ['groups'] })
    const fragment = `#access_token=at-123&token_type=Bearer&expires_in=60&state=${state}`
    expect(() => client.parseImplicitFragment(fragment, { state })).toThrow(OAuthValidationError)
    expect(() => client.parseImplicitFragment(fragment, { state })).toThrow(expect.objectContaining({ check: 'issuer' }))
    expect(() => client.parseImplicitFragment(`${fragment}&iss=${encodeURIComponent('https://evil.example.org')}`, { state })).toThrow(
      expect.objectContaining({ check: 'issuer' }),
    )
    const tokens = client.parseImplicitFragment(`${fragment}&iss=${encodeURIComponent(op.issuer)}`, { state })
    expect(tokens.accessToken).toBe('at-123')
  })
})

describe('refresh (OpenID Connect Core 12.2) with rotation', () => {
  it('refreshes from the previous token set: same subject and authentication, rotated refresh token', async () => {
    const client = makeClient(op, { scopes: ['openid', 'offline_access', 'groups'] })
    const { tokens } = await flow(client, { params: { prompt: 'consent' } })
    expect(tokens.refreshToken).toEqual(expect.any(String))
    expect(tokens.claims?.auth_time).toEqual(expect.any(Number))
    const fresh = await client.refresh(tokens)
    expect(fresh.accessToken).not.toBe(tokens.accessToken)
    expect(fresh.refreshToken).toEqual(expect.any(String))
    expect(fresh.refreshToken).not.toBe(tokens.refreshToken)
    expect(fresh.claims).toMatchObject({ iss: op.issuer, sub: 'alice', aud: 'basic-client', auth_time: tokens.claims?.auth_time })
    expect([...fresh.scopes].sort()).toEqual([...tokens.scopes].sort())
    // A refresh token string still works.
    const again = await client.refresh(fresh.refreshToken as string)
    expect(again.claims?.sub).toBe('alice')
    // The rotated-out refresh token is spent (and its reuse revokes the grant).
    const spent = await failure(client.refresh(tokens))
    expect(spent).toBeInstanceOf(OAuthError)
    expect(spent).toMatchObject({ error: 'invalid_grant' })
    for (const secret of [tokens.refreshToken as string, SECRET]) expect(shown(spent)).not.toContain(secret)
  })
})

describe('max_age', () => {
  it('sends max_age and needs a fresh enough auth_time', async () => {
    const client = makeClient(op)
    const { url, checks, tokens } = await flow(client, { maxAge: 300 })
    expect(new URL(url).searchParams.get('max_age')).toBe('300')
    expect(checks.maxAge).toBe(300)
    expect(tokens.claims?.auth_time).toEqual(expect.any(Number))
    const viaParams = await client.authorizationUrl({ params: { max_age: '60' } })
    expect(viaParams.maxAge).toBe(60)
  })

  it('refuses an auth_time older than max_age plus the clock tolerance', async () => {
    // The client's clock runs 400 s ahead: the sign-in it just saw looks 400 s old.
    const client = makeClient(op, { now: () => Date.now() + 400_000, clockTolerance: 30_000 })
    const { url, ...checks } = await client.authorizationUrl({ maxAge: 300 })
    const err = await failure(client.handleCallback(await signIn(url), checks))
    expect(err).toBeInstanceOf(OAuthValidationError)
    expect(err).toMatchObject({ check: 'id_token' })
    expect(String(err)).toMatch(/auth_time/)
  })
})

describe('response_mode', () => {
  it.each(['form_post', 'jwt', 'query.jwt', 'fragment'])('refuses response_mode=%s, which the client cannot read', async (mode) => {
    const err = await failure(makeClient(op).authorizationUrl({ params: { response_mode: mode } }))
    expect(err).toBeInstanceOf(InvalidArgumentError)
    expect(String(err)).toMatch(/response_mode/)
  })

  it("accepts response_mode=query, the code flow's own", async () => {
    const { tokens } = await flow(makeClient(op), { params: { response_mode: 'query' } })
    expect(tokens.claims?.sub).toBe('alice')
  })
})

describe('pushed authorization requests (RFC 9126)', () => {
  it('auto: pushes when the provider requires it, and the flow completes', async () => {
    const client = makeClient(parOp)
    expect((await client.metadata()).require_pushed_authorization_requests).toBe(true)
    const { url, tokens } = await flow(client)
    onlyRequestUri(url)
    expect(new URL(url).searchParams.get('request_uri')).toMatch(/^urn:ietf:params:oauth:request_uri:/)
    expect(tokens.claims?.sub).toBe('alice')
  })

  it('auto: does not push when the provider does not require it; always: does', async () => {
    const plain = await makeClient(op).authorizationUrl()
    expect(new URL(plain.url).searchParams.get('request_uri')).toBeNull()
    const { url, tokens } = await flow(makeClient(op, { pushedAuthorizationRequests: 'always' }))
    onlyRequestUri(url)
    expect(tokens.claims?.sub).toBe('alice')
  })

  it('never: the provider that requires PAR refuses the plain request', async () => {
    const client = makeClient(parOp, { pushedAuthorizationRequests: 'never' })
    const { url, ...checks } = await client.authorizationUrl()
    expect(new URL(url).searchParams.get('request_uri')).toBeNull()
    const err = await failure(client.handleCallback(await signIn(url), checks))
    expect(err).toBeInstanceOf(OAuthError)
    expect(err).toMatchObject({ error: 'invalid_request' })
  })

  it("a refused push is an OAuthError with the provider's error, and never shows the secret", async () => {
    const wrong = 'a-wrong-client-secret-0123456789'
    const client = makeClient(op, { clientSecret: wrong, pushedAuthorizationRequests: 'always' })
    const err = await failure(client.authorizationUrl())
    expect(err).toBeInstanceOf(OAuthError)
    expect(err).toMatchObject({ error: 'invalid_client', responseStatus: 401 })
    expect(shown(err)).not.toContain(wrong)
  })
})

describe('JWT client authentication', () => {
  const cases: [string, () => Partial<OAuthClientOptions>][] = [
    [
      'private_key_jwt, RSA (RS256 by default)',
      () => ({ clientId: 'rsa-client', clientSecret: undefined, tokenEndpointAuthMethod: 'private_key_jwt', privateKey: keys.rsa }),
    ],
    ['private_key_jwt, P-256 (ES256 by default)', () => ({ clientId: 'ec-client', clientSecret: undefined, privateKey: keys.ec })],
    [
      'private_key_jwt, Ed25519 (EdDSA by default)',
      () => ({ clientId: 'ed-client', clientSecret: undefined, tokenEndpointAuthMethod: 'private_key_jwt', privateKey: keys.ed }),
    ],
    ['client_secret_jwt (HS256)', () => ({ clientId: 'hs-client', clientSecret: HS_SECRET, tokenEndpointAuthMethod: 'client_secret_jwt' })],
  ]

  it.each(cases)('%s: at the token endpoint, the PAR endpoint, and for refresh', async (_name, options) => {
    const client = makeClient(parOp, { ...options(), scopes: ['openid', 'offline_access', 'groups'] })
    const { url, tokens } = await flow(client, { params: { prompt: 'consent' } })
    onlyRequestUri(url)
    expect(tokens.claims?.aud).toBe(client.clientId)
    const fresh = await client.refresh(tokens)
    expect(fresh.claims?.sub).toBe('alice')
  })

  it('a key the provider does not know is refused as invalid_client, and never shown', async () => {
    const other = await keyPair('RS256', 'rsa-1', false)
    const client = makeClient(op, { clientId: 'rsa-client', clientSecret: undefined, privateKey: other.privateJwk })
    const { url, ...checks } = await client.authorizationUrl()
    const err = await failure(client.handleCallback(await signIn(url), checks))
    expect(err).toBeInstanceOf(OAuthError)
    expect(err).toMatchObject({ error: 'invalid_client' })
    for (const secret of [other.privateJwk.d as string, other.privateJwk.p as string]) expect(shown(err)).not.toContain(secret)
  })
})
