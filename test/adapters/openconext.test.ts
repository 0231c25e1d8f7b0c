/**
 * The adapter contract on the emulator's OpenConext dialect (SURFconext): routes at the
 * service root, URN ids, the five roles. The same framework table as
 * adapters-contract.test.ts, with the routes naming OpenConext groups: what differs from
 * Dataporten is the roles, so these rows are about them (a prospect passes nothing, a
 * manager sits between member and admin), plus the challenge and the 503.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { request } from 'undici'
import { PROJECT_BOARD_GROUP_ID, startEmulator, type Emulator } from '../../testing/index.js'
import { FRAMEWORKS, startApp, withRouteGroups, type RunningApp } from '../support/apps.js'

let emulator: Emulator
beforeAll(async () => {
  emulator = await startEmulator({ dialect: 'openconext' })
})
afterAll(async () => {
  await emulator.close()
})

async function status(url: string, user?: string): Promise<{ status: number; body: string; challenge: string | undefined }> {
  const headers: Record<string, string> = user === undefined ? {} : { authorization: `Bearer ${emulator.issueToken(user)}` }
  const response = await request(url, { headers })
  const challenge = response.headers['www-authenticate']
  return { status: response.statusCode, body: await response.body.text(), challenge: typeof challenge === 'string' ? challenge : undefined }
}

describe.each(FRAMEWORKS)('%s adapter on the OpenConext dialect', (framework) => {
  let app: RunningApp
  beforeAll(async () => {
    const groups = { held: PROJECT_BOARD_GROUP_ID, none: 'urn:collab:group:surfteams.nl:nl:surfnet:diensten:nobody' }
    app = await withRouteGroups(groups, () => startApp(framework, { baseUrl: emulator.baseUrl, realm: 'r', timeout: 1000 }))
  })
  afterAll(async () => {
    await app.close()
  })

  it('an admin passes requireGroup(id, "admin"); a manager and a prospect do not', async () => {
    expect((await status(`${app.url}/admin`, 'alice')).status).toBe(200)
    expect((await status(`${app.url}/admin`, 'carol')).status).toBe(403)
    const prospect = await status(`${app.url}/admin`, 'bob')
    expect(prospect.status).toBe(403)
    expect(JSON.parse(prospect.body)).toMatchObject({ error: 'forbidden' })
  })

  it('"any role" lets a manager through and refuses a prospect and a non-member', async () => {
    expect((await status(`${app.url}/member`, 'carol')).status).toBe(200)
    expect((await status(`${app.url}/member`, 'bob')).status).toBe(403) // a prospect: an invitee
    expect((await status(`${app.url}/member`, 'erin')).status).toBe(403) // a 404 from the service
    expect((await status(`${app.url}/any`, 'alice')).status).toBe(200)
    expect((await status(`${app.url}/all`, 'alice')).status).toBe(403)
  })

  it('401 with the challenge without a token, 503 when the service fails', async () => {
    const none = await status(`${app.url}/member`)
    expect(none.status).toBe(401)
    expect(none.challenge).toBe('Bearer realm="r"')
    const token = emulator.issueToken('frank')
    emulator.faults.add({ kind: 'status', status: 500 }, { token, times: 1 })
    const response = await request(`${app.url}/member`, { headers: { authorization: `Bearer ${token}` } })
    expect(response.statusCode).toBe(503)
    expect(await response.body.text()).not.toContain(token)
    emulator.faults.clear()
  })
})
