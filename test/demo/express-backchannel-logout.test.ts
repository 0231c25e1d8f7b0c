/**
 * The Express login example (examples/express-login) ends its express-session when the
 * provider says so: the emulator, ending alice's sessions, posts a Logout Token to the app's
 * `/backchannel-logout`, which verifies it (`verifyLogoutToken`) and destroys her session;
 * a refused token is a 400 and ends nothing.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { start, type RunningApp } from '../../examples/express-login/app.js'
import { startEmulator, type Emulator } from '../../testing/index.js'

let emulator: Emulator
let app: RunningApp

beforeAll(async () => {
  emulator = await startEmulator()
  app = await start({ port: 0, authUrl: emulator.authUrl, baseUrl: emulator.baseUrl })
  // The demo client, told where the app hears of ended sessions.
  emulator.replaceData({
    ...emulator.data,
    clients: emulator.data.clients.map((client) =>
      client.clientId === 'demo-client' ? { ...client, backchannelLogoutUri: `${app.url}/backchannel-logout` } : client,
    ),
  })
})

afterAll(async () => {
  await app?.close()
  await emulator?.close()
})

/** Signs `user` in as a browser would (without one); the session cookie. */
async function signIn(user: string): Promise<string> {
  const login = await fetch(`${app.url}/login`, { redirect: 'manual' })
  let cookie = (login.headers.get('set-cookie') ?? '').split(';')[0] as string
  const authorize = new URL(login.headers.get('location') as string)
  const consent = await (await fetch(authorize)).text()
  const requestId = /name="request_id" value="([^"]+)"/.exec(consent)?.[1] as string
  const decided = await fetch(`${authorize.origin}${authorize.pathname}`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ request_id: requestId, user, decision: 'approve' }),
    redirect: 'manual',
  })
  const callback = await fetch(decided.headers.get('location') as string, { headers: { cookie }, redirect: 'manual' })
  expect(callback.status).toBe(302)
  cookie = (callback.headers.get('set-cookie') ?? '').split(';')[0] as string
  return cookie
}

const groupsStatus = async (cookie: string) => (await fetch(`${app.url}/groups`, { headers: { cookie }, redirect: 'manual' })).status

describe('the Express login example and back-channel logout', () => {
  it("destroys the user's express-session when the provider ends it, and refuses a bad token", async () => {
    const alice = await signIn('alice')
    const bob = await signIn('bob')
    expect(await groupsStatus(alice)).toBe(200)

    const refused = await fetch(`${app.url}/backchannel-logout`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: 'logout_token=eyJhbGciOiJub25lIn0.eyJzdWIiOiJhbGljZSJ9.',
    })
    expect(refused.status).toBe(400)
    expect(await groupsStatus(alice)).toBe(200)

    const ended = await emulator.oauth.endSessions('alice')
    expect(ended.notified).toEqual([{ clientId: 'demo-client', status: 200 }])
    // Signed out: the app sends the browser to sign in again.
    expect(await groupsStatus(alice)).toBe(302)
    expect(await groupsStatus(bob)).toBe(200)
  })
})
