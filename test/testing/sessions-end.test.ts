/**
 * The emulator plays the provider's side of back-channel logout: ID tokens carry a `sid`,
 * and ending a user's sessions (`voot-guard emulator sessions end`, the console's button)
 * sends each client registered with a `backchannelLogoutUri` a Logout Token that
 * `verifyLogoutToken` accepts.
 */
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { decodeJwt } from 'jose'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { runCli, type CliIo } from '../../cli/index.js'
import { createOAuthClient, verifyLogoutToken } from '../../oauth/index.js'
import { defaultData, startEmulator, type Emulator } from '../../testing/index.js'

let emulator: Emulator
let receiver: Server
const received: string[] = []
const CLIENT = { clientId: 'rp', clientSecret: 'rp-secret-0123456789', redirectUris: ['http://127.0.0.1/cb'], scopes: ['openid', 'groups'] }

beforeAll(async () => {
  receiver = createServer((req, res) => {
    let body = ''
    req.setEncoding('utf8')
    req.on('data', (chunk: string) => (body += chunk))
    req.on('end', () => {
      const token = new URLSearchParams(body).get('logout_token')
      if (token !== null) received.push(token)
      res.writeHead(200).end()
    })
  })
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve))
  const uri = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/logout`
  emulator = await startEmulator({ data: { ...defaultData, clients: [...defaultData.clients, { ...CLIENT, backchannelLogoutUri: uri }] } })
})

afterAll(async () => {
  await emulator?.close()
  await new Promise<void>((resolve) => receiver?.close(() => resolve()))
})

async function cli(argv: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  let stdout = ''
  let stderr = ''
  const io: CliIo = {
    stdout: { write: (text: string) => void (stdout += text) },
    stderr: { write: (text: string) => void (stderr += text) },
    env: {},
  }
  const code = await runCli(argv, io)
  return { code, stdout, stderr }
}

describe('voot-guard emulator sessions end', () => {
  it("sends the registered client a Logout Token for the user's session, which verifyLogoutToken accepts", async () => {
    // A sign-in's ID token carries the provider session's sid.
    const client = createOAuthClient({
      issuer: emulator.authUrl,
      clientId: CLIENT.clientId,
      clientSecret: CLIENT.clientSecret,
      redirectUri: 'http://127.0.0.1/cb',
      scopes: ['openid'],
    })
    const { url, state, codeVerifier, nonce } = await client.authorizationUrl()
    const consent = await fetch(url)
    const requestId = /name="request_id" value="([^"]+)"/.exec(await consent.text())?.[1] as string
    const decided = await fetch(new URL(url).origin + new URL(url).pathname, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ request_id: requestId, user: 'alice', decision: 'approve' }),
      redirect: 'manual',
    })
    const tokens = await client.handleCallback(decided.headers.get('location') as string, {
      state,
      codeVerifier,
      ...(nonce === undefined ? {} : { nonce }),
    })
    const sid = tokens.claims?.['sid']
    expect(typeof sid).toBe('string')

    received.length = 0
    const ended = await cli(['emulator', 'sessions', 'end', 'alice', '--url', emulator.authUrl])
    expect(ended).toMatchObject({ code: 0, stdout: 'Ended 1 session of alice; told rp (200).\n' })
    expect(received).toHaveLength(1)
    const claims = await verifyLogoutToken(client, received[0] as string)
    expect(claims).toMatchObject({ iss: emulator.authUrl, sub: 'alice', sid })

    // No session known any more: the user, by sub alone.
    received.length = 0
    expect(await cli(['emulator', 'sessions', 'end', 'alice', '--url', emulator.authUrl])).toMatchObject({ code: 0 })
    expect(decodeJwt(received[0] as string)).toMatchObject({ sub: 'alice' })
    expect(decodeJwt(received[0] as string)['sid']).toBeUndefined()

    expect(await cli(['emulator', 'sessions', 'end', 'nobody', '--url', emulator.authUrl])).toMatchObject({ code: 2 })
  })

  it('the console ends them with one click', async () => {
    received.length = 0
    const origin = new URL(emulator.consoleUrl as string).origin
    const page = await fetch(emulator.consoleUrl as string)
    expect(await page.text()).toContain(`aria-label="End bob's sessions"`)
    const answer = await fetch(`${origin}/_emulator/sessions`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', origin },
      body: new URLSearchParams({ action: 'end', user: 'bob' }),
    })
    expect(answer.status).toBe(200)
    expect(await answer.text()).toContain('Ended 0 sessions of bob; told rp (200).')
    expect(decodeJwt(received[0] as string)).toMatchObject({ sub: 'bob', aud: 'rp' })
  })
})
