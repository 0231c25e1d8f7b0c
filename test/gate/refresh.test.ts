/**
 * An expired session with a refresh token: the check endpoint sends the browser to
 * `/_gate/signin`, which refreshes it at the provider's token endpoint (the emulator's OAuth
 * server issues no refresh tokens, so a small stand-in provider answers the refresh grant
 * with a token of the emulator's) and sends the browser straight back with a new cookie.
 */
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Emulator } from '../../testing/index.js'
import type { GateServer } from '../../gate/index.js'
import { createSessionCookies } from '../../gate/session/session.js'
import { COOKIE_SECRETS, startGateEmulator, startTestGate, testGateConfig } from './support/gate-harness.js'
import { send } from './support/raw-request.js'

let emulator: Emulator
let gate: GateServer
let provider: Server
let providerUrl: string
const grants: URLSearchParams[] = []

beforeAll(async () => {
  emulator = await startGateEmulator()
  provider = createServer((req, res) => {
    let body = ''
    req.setEncoding('utf8')
    req.on('data', (chunk: string) => (body += chunk))
    req.on('end', () => {
      const form = new URLSearchParams(body)
      if (req.url !== '/oauth/token' || form.get('grant_type') !== 'refresh_token' || form.get('refresh_token') !== 'refresh-1') {
        res.writeHead(400, { 'content-type': 'application/json' }).end('{"error":"invalid_grant"}')
        return
      }
      grants.push(form)
      const answer = {
        access_token: emulator.issueToken('alice'),
        token_type: 'Bearer',
        expires_in: 3600,
        refresh_token: 'refresh-2',
        scope: 'groups',
      }
      res.writeHead(200, { 'content-type': 'application/json', 'cache-control': 'no-store' }).end(JSON.stringify(answer))
    })
  })
  await new Promise<void>((resolve) => provider.listen(0, '127.0.0.1', resolve))
  providerUrl = `http://127.0.0.1:${(provider.address() as AddressInfo).port}`
  gate = await startTestGate(
    testGateConfig(emulator, {
      oauth: { authUrl: providerUrl, discovery: false, clientId: 'voot-gate', clientSecret: 'voot-gate-secret', scopes: ['groups'] },
    }),
  )
}, 30_000)

afterAll(async () => {
  await gate?.close()
  await new Promise((resolve) => provider?.close(resolve))
  await emulator?.close()
})

const HOST = { scheme: 'http' as const, host: '127.0.0.1' }
const cookies = createSessionCookies({ name: undefined, secrets: COOKIE_SECRETS, maxAge: 8 * 3_600_000 }, Date.now)

function check(cookie: string) {
  return send(gate.url, '/_gate/auth-request', {
    headers: { 'x-original-url': `${gate.url}/admin/x`, 'x-original-method': 'GET', accept: 'text/html', cookie },
  })
}

describe('an expired session with a refresh token', () => {
  it('is sent to sign in, refreshed there, and let through with the new cookie', async () => {
    const old = emulator.issueToken('alice')
    const expired = cookies.writeSession(
      { accessToken: old, expiresAt: Date.now() - 1_000, refreshToken: 'refresh-1', sub: 'alice', issuedAt: Date.now() - 3_600_000 },
      HOST,
    ) as string
    const cookie = expired.split(';')[0] as string

    const first = await check(cookie)
    expect(first.status).toBe(401)
    const location = new URL(first.headers.location as string)
    expect(location.pathname).toBe('/_gate/signin')

    const signIn = await send(gate.url, `${location.pathname}${location.search}`, { headers: { cookie } })
    expect(signIn.status).toBe(302)
    expect(signIn.headers.location).toBe(`${gate.url}/admin/x`)
    expect(grants).toHaveLength(1)
    const fresh = ((signIn.headers['set-cookie'] as string[])[0] as string).split(';')[0] as string
    expect(fresh).not.toBe(cookie)

    const again = await check(fresh)
    expect(again.status).toBe(200)
    expect(again.headers['x-voot-user']).toBe('alice')
    // The session keeps its start: the refresh does not extend it past maxAge.
    const session = cookies.readSession(fresh, HOST)
    expect(session?.refreshToken).toBe('refresh-2')
    expect(session?.accessToken).not.toBe(old)
    expect(Date.now() - (session?.issuedAt ?? 0)).toBeGreaterThanOrEqual(3_600_000)
  })

  it('starts a new sign-in when the refresh is refused', async () => {
    const expired = cookies.writeSession(
      {
        accessToken: emulator.issueToken('alice'),
        expiresAt: Date.now() - 1_000,
        refreshToken: 'revoked',
        sub: 'alice',
        issuedAt: Date.now(),
      },
      HOST,
    ) as string
    const signIn = await send(gate.url, '/_gate/signin?rd=%2Fadmin%2Fx', { headers: { cookie: expired.split(';')[0] as string } })
    expect(signIn.status).toBe(302)
    expect(new URL(signIn.headers.location as string).pathname).toBe('/oauth/authorization')
  })
})
