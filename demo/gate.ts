/**
 * The gate's demo (`npm start -- --gate`): the gate (`voot-guard/gate`) on the emulator,
 * and `curl` lines that play what a proxy sends it: nginx's `auth_request` sub-request,
 * Traefik's and Caddy's forward auth, Envoy's ext_authz. Each line is data too, so that a
 * test replays exactly what a newcomer would paste.
 *
 * @module
 */
import { curlCommand } from './curl-command.js'
import { withPortFallback } from '../cli/port-fallback.js'
import { startGateServer, type GateConfig, type GateServer } from '../gate/index.js'
import { defaultData, ORG_ID, startEmulator, type Emulator } from '../testing/index.js'

/** The gate's preferred port, as in the default `listen`. */
export const DEMO_GATE_PORT = 4181

/** One line of the gate demo: a proxy's sub-request to the gate, and what the gate answers. */
export interface DemoGateCurlLine {
  /** Which proxy this plays and what it shows. */
  readonly description: string
  /** The status the gate answers with. */
  readonly expectedStatus: number
  /** The gate's `X-Voot-User` on a 200 (`''` when empty). */
  readonly expectedUser?: string
  /** The shell command, ready to paste. */
  readonly command: string
  /** The request: method, URL and headers. */
  readonly method: string
  readonly url: string
  readonly headers: Readonly<Record<string, string>>
}

/** A running gate demo. */
export interface DemoGate {
  readonly gateUrl: string
  readonly emulator: Emulator
  readonly gate: GateServer
  readonly curlLines: readonly DemoGateCurlLine[]
  /** What the demo prints: the rules and the curl lines. */
  readonly guide: string
  close(): Promise<void>
}

/** Options of {@link startDemoGate}. */
export interface DemoGateOptions {
  /** The gate's port; default 4181, or any free port when it is taken; `0` any. */
  readonly port?: number
  /** The emulator's port; default any free port. */
  readonly emulatorPort?: number
}

/** The OAuth client the demo registers for the gate; any loopback port matches its redirect URI. */
const DEMO_GATE_CLIENT = {
  clientId: 'voot-gate-demo',
  clientSecret: 'voot-gate-demo-secret',
  name: 'voot-guard gate (demo)',
  redirectUris: ['http://127.0.0.1/_gate/callback', 'http://localhost/_gate/callback'],
  scopes: ['openid', 'userid', 'profile', 'groups'],
}

/** The demo's rules, as the guide lists them. */
const RULES: GateConfig['rules'] = [
  { id: 'public', path: '/public/**', allow: 'anyone' },
  { id: 'staff', path: '/admin/**', require: { group: ORG_ID, role: 'admin' } },
  { id: 'courses', path: '/courses/**', require: { groupOfType: 'fc:fs:emne' } },
  { id: 'signed-in', allow: 'signed-in' },
]

/**
 * The curl lines for a gate at `gateUrl`, with a token per user and a token whose group
 * lookups fail (the emulator answers 500 for it).
 */
export function demoGateCurlLines(gateUrl: string, tokens: Readonly<Record<string, string>>, faultToken: string): DemoGateCurlLine[] {
  const app = 'https://app.example.org'
  const bearer = (user: string) => ({ Authorization: `Bearer ${tokens[user] ?? ''}` })
  const nginx = (path: string, extra: Record<string, string> = {}) => ({
    'X-Original-URL': `${app}${path}`,
    'X-Original-Method': 'GET',
    ...extra,
  })
  const forward = (path: string, extra: Record<string, string> = {}) => ({
    'X-Forwarded-Method': 'GET',
    'X-Forwarded-Proto': 'https',
    'X-Forwarded-Host': 'app.example.org',
    'X-Forwarded-Uri': path,
    ...extra,
  })
  const line = (
    description: string,
    expect: { readonly status: number; readonly user?: string },
    request: { readonly method?: string; readonly path: string; readonly headers: Record<string, string> },
  ): DemoGateCurlLine => {
    const method = request.method ?? 'GET'
    const url = `${gateUrl}${request.path}`
    return {
      description,
      expectedStatus: expect.status,
      ...(expect.user === undefined ? {} : { expectedUser: expect.user }),
      method,
      url,
      headers: request.headers,
      command: curlCommand(method, url, request.headers),
    }
  }
  const auth = '/_gate/auth-request'
  const fwd = '/_gate/forward-auth'
  return [
    line(
      'nginx auth_request: alice (employee) on /admin: 200, X-Voot-User: alice',
      { status: 200, user: 'alice' },
      { path: auth, headers: nginx('/admin/reports', bearer('alice')) },
    ),
    line(
      'nginx auth_request: bob (student) on /admin: 403, not a member (never 401)',
      { status: 403 },
      { path: auth, headers: nginx('/admin/reports', bearer('bob')) },
    ),
    line(
      'nginx auth_request: a browser without a session: 401 with Location: .../_gate/signin?rd=...',
      { status: 401 },
      { path: auth, headers: nginx('/wiki', { Accept: 'text/html' }) },
    ),
    line(
      'nginx auth_request: /admin/../public is refused before any rule: 403',
      { status: 403 },
      { path: auth, headers: nginx('/admin/../public/x', bearer('alice')) },
    ),
    line(
      'nginx auth_request: the group service fails for this token: 503 with Retry-After',
      { status: 503 },
      { path: auth, headers: nginx('/admin/reports', { Authorization: `Bearer ${faultToken}` }) },
    ),
    line(
      'Traefik/Caddy forward auth: bob on a page for anyone signed in: 200',
      { status: 200, user: 'bob' },
      { path: fwd, headers: forward('/wiki', bearer('bob')) },
    ),
    line(
      'Traefik/Caddy forward auth: a browser without a session: 302 to sign in',
      { status: 302 },
      { path: fwd, headers: forward('/wiki', { Accept: 'text/html' }) },
    ),
    line(
      'Envoy ext_authz: bob (enrolled in courses) on /courses: 200',
      { status: 200, user: 'bob' },
      { method: 'POST', path: '/_gate/ext-authz/courses/INF1000', headers: { Host: 'app.example.org', ...bearer('bob') } },
    ),
    line(
      'Envoy ext_authz: erin (no groups) on /courses: 403',
      { status: 403 },
      { path: '/_gate/ext-authz/courses/INF1000', headers: { Host: 'app.example.org', ...bearer('erin') } },
    ),
    line('anyone on /public: 200 without a token', { status: 200, user: '' }, { path: auth, headers: nginx('/public/index.html') }),
    line('readiness: the group service answers', { status: 200 }, { path: '/_gate/readyz', headers: {} }),
  ]
}

/**
 * How long the demo's gate keeps an answer of the group service (`service.cache.ttl`): short,
 * so that a change made in the emulator's console shows within a few seconds.
 */
export const DEMO_GATE_TTL_MS = 5000

function formatGuide(gateUrl: string, emulator: Emulator, lines: readonly DemoGateCurlLine[]): string {
  return [
    'voot-guard gate is running on the emulator (see docs/gate.md)',
    '',
    `  gate          ${gateUrl}`,
    `  group service ${emulator.baseUrl}`,
    `  OAuth server  ${emulator.authUrl}`,
    `  console       ${emulator.consoleUrl ?? '(none)'}   (memberships, faults, tokens)`,
    '',
    `Try it in a browser (the gate keeps an answer ${DEMO_GATE_TTL_MS / 1000} s here, 60 s by default):`,
    `  1. Sign in as Alice Hansen at ${gateUrl}/_gate/signin?rd=/_gate/whoami : she passes "staff" (/admin/**).`,
    `  2. In the console, remove alice from ${ORG_ID}; reload whoami within ${DEMO_GATE_TTL_MS / 1000} s: she no longer does (/admin is a 403).`,
    '',
    'Rules (first match wins; no match is 403):',
    '  /public/**     anyone',
    `  /admin/**      group ${ORG_ID}, role admin (employees)`,
    '  /courses/**    any group of type fc:fs:emne (enrolled in a course)',
    '  everything     anyone signed in',
    '',
    'A proxy asks the gate about each request. These curl lines send what nginx, Traefik,',
    'Caddy and Envoy send (the original request in their headers):',
    '',
    ...lines.flatMap((line) => [`  # ${line.description}`, `  ${line.command}`, '']),
    'Stop with Ctrl-C.',
    '',
  ].join('\n')
}

/**
 * Starts the emulator and the gate on it, and returns the curl lines to try.
 *
 * @example
 * ```ts
 * const demo = await startDemoGate()
 * process.stdout.write(demo.guide)
 * ```
 */
export async function startDemoGate(options: DemoGateOptions = {}): Promise<DemoGate> {
  const emulator = await startEmulator({
    port: options.emulatorPort ?? 0,
    data: { ...defaultData, clients: [...defaultData.clients, DEMO_GATE_CLIENT] },
  })
  const config: GateConfig = {
    service: { baseUrl: emulator.baseUrl, cache: { ttl: `${DEMO_GATE_TTL_MS}ms`, negativeTtl: `${DEMO_GATE_TTL_MS}ms` } },
    oauth: { issuer: emulator.authUrl, clientId: DEMO_GATE_CLIENT.clientId, clientSecret: DEMO_GATE_CLIENT.clientSecret },
    // A throwaway secret: sessions of the demo end with it.
    cookie: { secrets: [`demo-${crypto.randomUUID()}-${crypto.randomUUID()}`] },
    redirectHosts: ['app.example.org'],
    rules: RULES,
  }
  const start = (port: number) => startGateServer(config, { port, logger: { warn: () => {} } })
  let gate: GateServer
  try {
    // A port asked for is that port or an error; the default one falls back to any free port.
    gate = options.port === undefined ? await withPortFallback(DEMO_GATE_PORT, start) : await start(options.port)
  } catch (error) {
    await emulator.close()
    throw error
  }
  const tokens = Object.fromEntries(emulator.data.users.map((user) => [user.id, emulator.issueToken(user.id)]))
  const faultToken = emulator.issueToken('alice')
  emulator.faults.add({ kind: 'status', status: 500 }, { token: faultToken })
  const curlLines = demoGateCurlLines(gate.url, tokens, faultToken)
  return {
    gateUrl: gate.url,
    emulator,
    gate,
    curlLines,
    guide: formatGuide(gate.url, emulator, curlLines),
    async close() {
      await gate.close()
      await emulator.close()
    },
  }
}
