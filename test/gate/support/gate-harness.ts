/**
 * The gate on the emulator, for the gate's tests: the emulator (group service and OAuth
 * server, with a client registered for the gate's callback on loopback), and a gate on a
 * free port with the rules below.
 */
import { defaultData, ORG_ID, startEmulator, type Emulator } from '../../../testing/index.js'
import { startGateServer, type GateConfig, type GateServer } from '../../../gate/index.js'

/** The gate's OAuth client at the emulator; any loopback port matches its redirect URI. */
export const GATE_CLIENT = {
  clientId: 'voot-gate',
  clientSecret: 'voot-gate-secret',
  name: 'voot-guard gate',
  redirectUris: ['http://127.0.0.1/_gate/callback', 'http://localhost/_gate/callback'],
  scopes: ['openid', 'userid', 'profile', 'groups'],
}

/** The cookie secrets of the test gate. */
export const COOKIE_SECRETS = ['test-gate-cookie-secret-number-one-0123456789', 'test-gate-cookie-secret-number-two-0123456789']

/** The test rules: public, employees only (admin on the org), a course, everything else signed in. */
export function testRules(): GateConfig['rules'] {
  return [
    { id: 'public', path: '/public/**', allow: 'anyone' },
    { id: 'admin', path: '/admin/**', require: { group: ORG_ID, role: 'admin' } },
    { id: 'courses', path: '/courses/**', methods: ['GET', 'HEAD'], require: { groupOfType: 'fc:fs:emne' } },
    { id: 'signed-in', path: '/**', allow: 'signed-in' },
  ]
}

/** The test gate's configuration. */
export function testGateConfig(emulator: Emulator, overrides: Partial<GateConfig> = {}): GateConfig {
  return {
    listen: '127.0.0.1:0',
    service: { baseUrl: emulator.baseUrl, allowInsecureHttp: true, timeout: '2s', retries: 0 },
    oauth: {
      issuer: emulator.authUrl,
      clientId: GATE_CLIENT.clientId,
      clientSecret: GATE_CLIENT.clientSecret,
      scopes: ['openid', 'groups'],
    },
    cookie: { secrets: COOKIE_SECRETS },
    rules: testRules(),
    ...overrides,
  }
}

/** Starts the emulator with the gate's client registered. */
export function startGateEmulator(): Promise<Emulator> {
  return startEmulator({ data: { ...defaultData, clients: [...defaultData.clients, GATE_CLIENT] } })
}

/** Starts a gate on a free port. */
export async function startTestGate(config: GateConfig): Promise<GateServer> {
  const running = await startGateServer(config, { logger: { warn: () => {} } })
  return running
}

/** The port of a running gate. */
export function gatePort(running: GateServer): number {
  return Number(new URL(running.url).port)
}
