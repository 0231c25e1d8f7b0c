/**
 * Back-channel logout from an independent OpenID provider: panva's oidc-provider (OpenID
 * Certified, its `backchannelLogout` feature) sends its own Logout Token to the gate's
 * `POST /_gate/backchannel-logout`; the gate verifies it (`verifyLogoutToken`) and ends the
 * sessions of that provider session, and only those.
 */
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { exportJWK, generateKeyPair } from 'jose'
import type { default as Provider } from 'oidc-provider'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { GateServer } from '../../gate/index.js'
import { createSessionCookies, type GateSession } from '../../gate/session/session.js'
import type { Emulator } from '../../testing/index.js'
import { createProvider } from '../support/oidc-provider.js'
import { COOKIE_SECRETS, startGateEmulator, startTestGate, testGateConfig } from './support/gate-harness.js'
import { send } from './support/raw-request.js'

let server: Server
let issuer: string
let provider: Provider
let emulator: Emulator
let gate: GateServer

beforeAll(async () => {
  server = createServer()
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  emulator = await startGateEmulator()
  gate = await startTestGate(
    testGateConfig(emulator, {
      oauth: { issuer, clientId: 'voot-gate', clientSecret: 'voot-gate-secret-0123456789', backchannelLogout: true },
    }),
  )
  const { privateKey } = await generateKeyPair('RS256', { extractable: true })
  provider = await createProvider(issuer, {
    clients: [
      {
        client_id: 'voot-gate',
        client_secret: 'voot-gate-secret-0123456789',
        redirect_uris: [`${gate.url}/_gate/callback`],
        backchannel_logout_uri: `${gate.url}/_gate/backchannel-logout`,
        backchannel_logout_session_required: true,
      },
    ],
    jwks: { keys: [{ ...(await exportJWK(privateKey)), kid: 'op-key', alg: 'RS256', use: 'sig' }] },
    cookies: { keys: ['a-cookie-signing-key-for-the-tests'] },
    findAccount: (_ctx, sub) => ({ accountId: sub, claims: () => ({ sub }) }),
    features: { devInteractions: { enabled: false }, backchannelLogout: { enabled: true } },
    // Its SSRF guard refuses loopback addresses, where the test's gate listens: its own fetch without the guard.
    fetch: (url, options) => {
      const { dispatcher: _guard, ...rest } = options as RequestInit & { dispatcher?: unknown }
      return fetch(url, rest)
    },
  })
  server.on('request', provider.callback())
})

afterAll(async () => {
  await gate?.close()
  await emulator?.close()
  server?.closeAllConnections()
  await new Promise<void>((resolve) => server?.close(() => resolve()))
})

const origin = { scheme: 'http', host: '127.0.0.1' } as const
const cookies = createSessionCookies({ name: undefined, secrets: COOKIE_SECRETS, maxAge: 3_600_000 }, Date.now)

/** A session cookie of alice, as a sign-in at the provider would have made it (with its sid). */
function sessionCookie(providerSid: string): string {
  const session: GateSession = {
    accessToken: emulator.issueToken('alice'),
    expiresAt: Date.now() + 3_600_000,
    refreshToken: undefined,
    sub: 'alice',
    issuedAt: Date.now() - 1_000,
    issuer,
    providerSid,
  }
  return (cookies.writeSession(session, origin) as string).split(';')[0] as string
}

async function status(cookie: string): Promise<number> {
  const answer = await send(gate.url, '/_gate/auth-request', {
    headers: { 'x-original-url': 'http://127.0.0.1/anything', 'x-original-method': 'GET', cookie },
  })
  return answer.status
}

describe("oidc-provider's back-channel logout at the gate", () => {
  it('ends the sessions of the provider session its Logout Token names', async () => {
    const ended = sessionCookie('op-session-1')
    const other = sessionCookie('op-session-2')
    expect(await status(ended)).toBe(200)
    expect(await status(other)).toBe(200)

    const client = await provider.Client.find('voot-gate')
    // Resolves only when the gate answered 200 (or 204): it throws otherwise.
    await (client as unknown as { backchannelLogout(sub: string, sid: string): Promise<void> }).backchannelLogout('alice', 'op-session-1')

    expect(await status(ended)).toBe(401)
    expect(await status(other)).toBe(200)
  })
})
