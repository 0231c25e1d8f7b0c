/**
 * Every proxy config the repository ships (examples/gate/: nginx, Caddy, HAProxy, Apache
 * httpd, and the "Try it" Caddyfile; docs/gate.md shows them byte for byte, test/gate/docs.test.ts)
 * routes the gate's pages: run with its real proxy, a browser's request that the gate refuses
 * gets the HTML forbidden page (never the check's raw JSON), and `/_gate/whoami` reaches the
 * gate. A config added to examples/gate/ fails the first test until it is run here too.
 */
import { mkdtemp, readdir, readFile, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Emulator } from '../../testing/index.js'
import type { GateServer } from '../../gate/index.js'
import { PAGE_CSP } from '../../gate/pages/page-html.js'
import { gatePort, startGateEmulator, startTestGate, testGateConfig } from './support/gate-harness.js'
import { APACHE, startApache } from './support/apache.js'
import { HAPROXY, startHaproxy } from './support/haproxy.js'
import { CADDY, freePort, needBinary, NGINX, run, startCaddy, startEchoApp, startNginx, type RunningProxy } from './support/proxies.js'
import { send } from './support/raw-request.js'

const EXAMPLES = new URL('../../examples/gate/', import.meta.url)

let emulator: Emulator
let gate: GateServer
let app: Awaited<ReturnType<typeof startEchoApp>>

/** examples/gate/emulator.Caddyfile (the "Try it" one: its own stand-in app) with the test's ports. */
async function startTryItCaddy(gateAt: number): Promise<RunningProxy> {
  const port = await freePort()
  const dir = await mkdtemp(join(tmpdir(), 'voot-gate-try-caddy-'))
  const text = await readFile(new URL('emulator.Caddyfile', EXAMPLES), 'utf8')
  const config = text.replace('http://127.0.0.1:8000 {', `http://127.0.0.1:${port} {`).replaceAll('127.0.0.1:4181', `127.0.0.1:${gateAt}`)
  if (/127\.0\.0\.1:(8000|4181)/.test(config)) throw new Error('examples/gate/emulator.Caddyfile changed: an address of it is left')
  const file = join(dir, 'Caddyfile')
  await writeFile(file, config)
  return run(CADDY, ['run', '--config', file, '--adapter', 'caddyfile'], port, dir, config, {
    HOME: dir,
    XDG_DATA_HOME: join(dir, 'data'),
    XDG_CONFIG_HOME: join(dir, 'config'),
  })
}

/** Each shipped proxy config: its binary, and how the test runs it in front of the gate. */
const SNIPPETS: Readonly<Record<string, { readonly binary: string; readonly start: () => Promise<RunningProxy> }>> = {
  'nginx.conf': { binary: NGINX, start: () => startNginx({ gatePort: gatePort(gate), appPort: app.port }) },
  Caddyfile: { binary: CADDY, start: () => startCaddy({ gatePort: gatePort(gate), appPort: app.port }) },
  'emulator.Caddyfile': { binary: CADDY, start: () => startTryItCaddy(gatePort(gate)) },
  'haproxy.cfg': { binary: HAPROXY, start: () => startHaproxy({ gatePort: gatePort(gate), appPort: app.port }) },
  'apache.conf': {
    binary: APACHE,
    start: () => startApache({ gatePort: gatePort(gate), appPort: app.port, fastcgiPort: Number(gate.fastcgi!.address.split(':').pop()) }),
  },
}

beforeAll(async () => {
  emulator = await startGateEmulator()
  // With the FastCGI authorizer's listener, for Apache httpd.
  gate = await startTestGate(testGateConfig(emulator, { fastcgi: { listen: '127.0.0.1:0' } }))
  app = await startEchoApp()
}, 30_000)

afterAll(async () => {
  await gate?.close()
  await app?.close()
  await emulator?.close()
})

/** What a browser sends (bob's bearer token stands in for his session: the pages read both). */
const browser = (user: string) => ({ accept: 'text/html,application/xhtml+xml', authorization: `Bearer ${emulator.issueToken(user)}` })

describe('the shipped proxy configs', () => {
  it('are all run here: every nginx, Caddy, HAProxy and Apache config of examples/gate/', async () => {
    const configs = (await readdir(EXAMPLES)).filter((file) => /(^|\.)Caddyfile$|\.conf$|\.cfg$/.test(file))
    expect(configs.sort()).toEqual(Object.keys(SNIPPETS).sort())
  })

  it.for(Object.keys(SNIPPETS))(
    '%s shows a refused browser the forbidden page and routes /_gate/whoami to the gate',
    { timeout: 60_000 },
    async (file, ctx) => {
      const snippet = SNIPPETS[file]!
      needBinary(ctx, snippet.binary)
      const proxy = await snippet.start()
      try {
        // Bob is a member, not an admin: the gate refuses /admin/reports.
        const refused = await send(proxy.url, '/admin/reports', { headers: browser('bob') })
        expect(refused.status, refused.body).toBe(403)
        expect(refused.headers['content-type']).toContain('text/html')
        expect(refused.headers['content-security-policy']).toBe(PAGE_CSP)
        expect(refused.body).toContain('You do not have access to this page')
        expect(refused.body).toContain('This resource requires the role admin or higher in the group fc:org:example.org.')

        const whoami = await send(proxy.url, '/_gate/whoami', { headers: browser('bob') })
        expect(whoami.status, whoami.body).toBe(200)
        expect(whoami.headers['content-type']).toContain('text/html')
        // The gate's page, not the app's answer to a path it was let through to.
        expect(whoami.headers['content-security-policy']).toBe(PAGE_CSP)
        expect(whoami.body).toContain('/admin/**')
      } finally {
        await proxy.stop()
      }
    },
  )
})
