/**
 * The check endpoints as Traefik (forwardAuth) and Envoy (HTTP ext_authz) call them, from
 * their documented requests (neither is packaged by Debian), and what a peer outside
 * `trustedProxies` gets: nothing believed, 401.
 *
 * Traefik's forwardAuth sends a GET to `address` with the original request's headers and
 * X-Forwarded-Method, -Proto, -Host, -Uri, -For; a 2xx lets the request on with the
 * `authResponseHeaders`, any other answer goes to the client as it is.
 * Envoy's ext_authz (http_service, path_prefix /_gate/ext-authz) sends the original method,
 * the prefix followed by the original path and query, the original Host, and the allowed
 * headers; a 2xx lets the request on with `allowed_upstream_headers`, any other answer goes
 * to the client (with `status_on_error` for a gate it cannot reach).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Emulator } from '../../testing/index.js'
import type { GateServer } from '../../gate/index.js'
import { startGateEmulator, startTestGate, testGateConfig } from './support/gate-harness.js'
import { ATTACK_PATHS } from './support/attack-paths.js'
import { send } from './support/raw-request.js'

let emulator: Emulator
let gate: GateServer
let distrustful: GateServer
let passing: GateServer

beforeAll(async () => {
  emulator = await startGateEmulator()
  const rules = [
    { id: 'public', host: 'app.example.org', path: '/public/**', allow: 'anyone' as const },
    { id: 'admin', host: 'app.example.org', path: '/admin/**', require: { group: 'fc:org:example.org', role: 'admin' } },
    {
      id: 'api-write',
      host: '*.example.org',
      path: '/api/**',
      methods: ['POST', 'PUT', 'DELETE'],
      require: { group: 'fc:org:example.org', role: 'admin' },
    },
    { id: 'signed-in', host: '*.example.org', allow: 'signed-in' as const },
  ]
  gate = await startTestGate(testGateConfig(emulator, { rules }))
  // redirectHosts names its own address: strictHosts would refuse a sign-in there otherwise.
  distrustful = await startTestGate(testGateConfig(emulator, { rules, trustedProxies: ['10.0.0.0/8'], redirectHosts: ['127.0.0.1'] }))
  passing = await startTestGate(
    testGateConfig(emulator, { rules, headers: { user: 'Remote-User', service: 'Remote-Service', token: true } }),
  )
}, 30_000)

afterAll(async () => {
  await gate?.close()
  await distrustful?.close()
  await passing?.close()
  await emulator?.close()
})

const bearer = (token: string) => ({ authorization: `Bearer ${token}` })

/** What Traefik sends for a client's request (https://app.example.org + uri). */
function traefik(uri: string, method = 'GET', host = 'app.example.org', extra: Record<string, string> = {}) {
  return {
    'x-forwarded-method': method,
    'x-forwarded-proto': 'https',
    'x-forwarded-host': host,
    'x-forwarded-uri': uri,
    'x-forwarded-for': '203.0.113.7',
    ...extra,
  }
}

describe('Traefik forwardAuth (GET /_gate/forward-auth)', () => {
  it('allows a member with the headers for authResponseHeaders', async () => {
    const answer = await send(gate.url, '/_gate/forward-auth', {
      headers: traefik('/admin/x?y=1', 'GET', 'app.example.org', bearer(emulator.issueToken('alice'))),
    })
    expect(answer.status).toBe(200)
    expect(answer.headers['x-voot-user']).toBe('alice')
    expect(answer.headers['x-voot-rule']).toBe('admin')
  })

  it('answers 403 to a non-member, 401 to an API client, 302 to a browser', async () => {
    const denied = await send(gate.url, '/_gate/forward-auth', {
      headers: traefik('/admin/x', 'GET', 'app.example.org', bearer(emulator.issueToken('bob'))),
    })
    expect(denied.status).toBe(403)
    expect(JSON.parse(denied.body)).toMatchObject({ error: 'forbidden' })
    const api = await send(gate.url, '/_gate/forward-auth', { headers: traefik('/admin/x') })
    expect(api.status).toBe(401)
    expect(api.headers['www-authenticate']).toBe('Bearer realm="voot-gate"')
    const browser = await send(gate.url, '/_gate/forward-auth', {
      headers: traefik('/wiki', 'GET', 'wiki.example.org', { accept: 'text/html' }),
    })
    expect(browser.status).toBe(302)
    expect(browser.headers.location).toBe(`https://wiki.example.org/_gate/signin?rd=${encodeURIComponent('https://wiki.example.org/wiki')}`)
    // A POST from a browser is not sent away to sign in: its body would be lost.
    const post = await send(gate.url, '/_gate/forward-auth', {
      headers: traefik('/wiki', 'POST', 'wiki.example.org', { accept: 'text/html' }),
    })
    expect(post.status).toBe(401)
  })

  it('matches the method and host the headers name, not its own', async () => {
    const token = emulator.issueToken('bob')
    const read = await send(gate.url, '/_gate/forward-auth', { headers: traefik('/api/items', 'GET', 'api.example.org', bearer(token)) })
    expect(read.status).toBe(200)
    expect(read.headers['x-voot-rule']).toBe('signed-in')
    const write = await send(gate.url, '/_gate/forward-auth', { headers: traefik('/api/items', 'POST', 'api.example.org', bearer(token)) })
    expect(write.status).toBe(403)
    const other = await send(gate.url, '/_gate/forward-auth', { headers: traefik('/x', 'GET', 'example.net', bearer(token)) })
    expect(other.status).toBe(403)
    expect(JSON.parse(other.body).error_description).toBe('The gate serves no such host')
  })

  it('ignores its own query string (Caddy appends the client’s) and X-Original-* headers', async () => {
    const answer = await send(gate.url, '/_gate/forward-auth?x-forwarded-uri=/public/x', {
      headers: { ...traefik('/admin/x'), 'x-original-url': 'https://app.example.org/public/x', 'x-original-method': 'GET' },
    })
    expect(answer.status).toBe(401)
  })

  it('answers 401 when a header is missing or repeated, never a guess', async () => {
    const { 'x-forwarded-uri': _uri, ...noUri } = traefik('/public/x')
    expect((await send(gate.url, '/_gate/forward-auth', { headers: noUri })).status).toBe(401)
    const twice = await send(gate.url, '/_gate/forward-auth', {
      headers: { ...traefik('/public/x'), 'X-Forwarded-Host': ['app.example.org', 'evil.example'] },
    })
    expect(twice.status).toBe(401)
    expect((await send(gate.url, '/_gate/forward-auth', { headers: traefik('/public/x') })).status).toBe(200)
  })

  it('answers 503 with Retry-After while the group service is down', async () => {
    const reset = emulator.faults.add({ kind: 'reset' })
    try {
      const answer = await send(gate.url, '/_gate/forward-auth', {
        headers: traefik('/admin/x', 'GET', 'app.example.org', bearer(emulator.issueToken('alice'))),
      })
      expect(answer.status).toBe(503)
      expect(answer.headers['retry-after']).toBe('5')
    } finally {
      emulator.faults.remove(reset)
    }
  })
})

describe('Envoy HTTP ext_authz (any method /_gate/ext-authz/<path>)', () => {
  it('decides on the original method, path and Host', async () => {
    const token = emulator.issueToken('alice')
    const allowed = await send(gate.url, '/_gate/ext-authz/admin/x?y=1', {
      method: 'DELETE',
      headers: { host: 'app.example.org', ...bearer(token) },
    })
    expect(allowed.status).toBe(200)
    expect(allowed.headers['x-voot-user']).toBe('alice')
    const bob = emulator.issueToken('bob')
    const write = await send(gate.url, '/_gate/ext-authz/api/items', {
      method: 'POST',
      headers: { host: 'api.example.org', ...bearer(bob) },
    })
    expect(write.status).toBe(403)
    const read = await send(gate.url, '/_gate/ext-authz/api/items', {
      method: 'GET',
      headers: { host: 'api.example.org:8443', ...bearer(bob) },
    })
    expect(read.status).toBe(200)
  })

  it('sends a browser to sign in and refuses ambiguous paths', async () => {
    const browser = await send(gate.url, '/_gate/ext-authz/wiki', { headers: { host: 'wiki.example.org', accept: 'text/html' } })
    expect(browser.status).toBe(302)
    expect(browser.headers.location).toBe(`https://wiki.example.org/_gate/signin?rd=${encodeURIComponent('https://wiki.example.org/wiki')}`)
    const token = emulator.issueToken('alice')
    for (const path of ['/public/../admin', '/public/%2e%2e/admin', '//admin', '/public%2fadmin']) {
      const answer = await send(gate.url, `/_gate/ext-authz${path}`, { headers: { host: 'app.example.org', ...bearer(token) } })
      expect(answer.status, path).toBe(403)
    }
  })

  it('answers 503 with Retry-After while the group service is down (a response, not status_on_error)', async () => {
    const reset = emulator.faults.add({ kind: 'reset' })
    try {
      const answer = await send(gate.url, '/_gate/ext-authz/admin', {
        headers: { host: 'app.example.org', ...bearer(emulator.issueToken('alice')) },
      })
      expect(answer.status).toBe(503)
      expect(answer.headers['retry-after']).toBe('5')
    } finally {
      emulator.faults.remove(reset)
    }
  })
})

describe('a peer outside trustedProxies', () => {
  it('gets 401 on every check endpoint, whatever its headers and token say', async () => {
    const token = emulator.issueToken('alice')
    const nginx = { 'x-original-url': 'https://app.example.org/admin/x', 'x-original-method': 'GET', ...bearer(token) }
    expect((await send(gate.url, '/_gate/auth-request', { headers: nginx })).status).toBe(200)
    expect((await send(distrustful.url, '/_gate/auth-request', { headers: nginx })).status).toBe(401)
    const forward = traefik('/public/x', 'GET', 'app.example.org', bearer(token))
    expect((await send(distrustful.url, '/_gate/forward-auth', { headers: forward })).status).toBe(401)
    expect((await send(distrustful.url, '/_gate/ext-authz/public/x', { headers: { host: 'app.example.org' } })).status).toBe(401)
  })

  it('cannot choose the host a sign-in comes back to with X-Forwarded-Host', async () => {
    const answer = await send(distrustful.url, '/_gate/signin?rd=%2F', {
      headers: { 'x-forwarded-host': 'evil.example', 'x-forwarded-proto': 'https' },
    })
    expect(answer.status).toBe(302)
    const redirectUri = new URL(answer.headers.location as string).searchParams.get('redirect_uri')
    expect(redirectUri).toBe(`${distrustful.url}/_gate/callback`)
  })
})

describe('headers', () => {
  it('names them as configured, passes the token only with token: true, and sends them empty when unknown', async () => {
    const token = emulator.issueToken('alice')
    const allowed = await send(passing.url, '/_gate/forward-auth', {
      headers: traefik('/admin/x', 'GET', 'app.example.org', bearer(token)),
    })
    expect(allowed.status).toBe(200)
    expect(allowed.headers['remote-user']).toBe('alice')
    expect(allowed.headers['x-voot-user']).toBeUndefined()
    expect(allowed.headers['x-voot-token']).toBe(token)
    // One group service: the service header is sent, empty, under its configured name.
    expect(allowed.headers['remote-service']).toBe('')
    expect(allowed.headers['x-voot-service']).toBeUndefined()
    const open = await send(passing.url, '/_gate/forward-auth', { headers: traefik('/public/x', 'GET', 'app.example.org', bearer(token)) })
    expect(open.headers['remote-user']).toBe('')
    expect(open.headers['x-voot-token']).toBe('')
    const plain = await send(gate.url, '/_gate/forward-auth', { headers: traefik('/admin/x', 'GET', 'app.example.org', bearer(token)) })
    expect(plain.headers['x-voot-token']).toBeUndefined()
  })
})

describe('a check request with a body', () => {
  it('is answered, the body left unread, and the connection stays usable', async () => {
    const token = emulator.issueToken('alice')
    const { request } = await import('node:http')
    const url = new URL(gate.url)
    const agent = new (await import('node:http')).Agent({ keepAlive: true, maxSockets: 1 })
    const once = () =>
      new Promise<number>((resolve, reject) => {
        const req = request(
          {
            host: url.hostname,
            port: url.port,
            path: '/_gate/ext-authz/admin/x',
            method: 'POST',
            agent,
            headers: { host: 'app.example.org', authorization: `Bearer ${token}`, 'content-length': '100000' },
          },
          (res) => {
            res.resume()
            res.on('end', () => resolve(res.statusCode ?? 0))
          },
        )
        req.on('error', reject)
        req.end('x'.repeat(100_000))
      })
    expect(await once()).toBe(200)
    expect(await once()).toBe(200)
    agent.destroy()
  })
})

describe('every check endpoint refuses a path with C1 controls, Unicode format or line characters, or a trailing space or dot', () => {
  it.for(ATTACK_PATHS)('%s (%s): 403 on auth-request, forward-auth and ext-authz', async ([path]) => {
    const token = bearer(emulator.issueToken('bob'))
    const nginx = await send(gate.url, '/_gate/auth-request', {
      headers: { 'x-original-url': `https://app.example.org${path}`, 'x-original-method': 'GET', ...token },
    })
    const traefikAnswer = await send(gate.url, '/_gate/forward-auth', { headers: traefik(path, 'GET', 'app.example.org', token) })
    const envoy = await send(gate.url, `/_gate/ext-authz${path}`, { headers: { host: 'app.example.org', ...token } })
    // A raw byte above 0x7f in the request line is refused by Node's parser (400) before the gate.
    const raw = /[^\u0000-\u007f]/.test(path)
    if (raw) expect(envoy.status).toBe(400)
    for (const answer of raw ? [nginx, traefikAnswer] : [nginx, traefikAnswer, envoy]) {
      expect(answer.status).toBe(403)
      expect(JSON.parse(answer.body).error_description).toMatch(/ambiguous/)
    }
  })
})

describe('the host judged is the host the proxy routed by', () => {
  const bob = () => bearer(emulator.issueToken('bob'))

  it('Envoy: the Host (:authority) it routed by; a host no rule names is refused before any rule (strictHosts)', async () => {
    expect((await send(gate.url, '/_gate/ext-authz/admin/x', { headers: { host: 'app.example.org', ...bob() } })).status).toBe(403)
    expect((await send(gate.url, '/_gate/ext-authz/admin/x', { headers: { host: 'other.example.org', ...bob() } })).status).toBe(200)
    const unknown = await send(gate.url, '/_gate/ext-authz/public/x', { headers: { host: 'evil.example.com' } })
    expect(unknown.status).toBe(403)
    expect(JSON.parse(unknown.body).error_description).toBe('The gate serves no such host')
  })

  it('Traefik: X-Forwarded-Host, which it sets from the Host it routed by; unknown hosts refused', async () => {
    const unknown = await send(gate.url, '/_gate/forward-auth', { headers: traefik('/public/x', 'GET', 'evil.example.com') })
    expect(unknown.status).toBe(403)
    expect((await send(gate.url, '/_gate/forward-auth', { headers: traefik('/public/x') })).status).toBe(200)
  })

  it('ingress-nginx: /_gate/auth-request/<$host> refuses an X-Original-URL naming another host', async () => {
    const ask = (path: string, url: string) =>
      send(gate.url, path, { headers: { 'x-original-url': url, 'x-original-method': 'GET', ...bob() } })
    const mismatch = await ask('/_gate/auth-request/app.example.org', 'https://other.example.org/admin/x')
    expect(mismatch.status).toBe(403)
    expect(JSON.parse(mismatch.body).error_description).toMatch(/another host than the one the proxy routed/)
    // The same host (its port and case aside) is judged as usual.
    expect((await ask('/_gate/auth-request/app.example.org', 'https://APP.example.org:8443/admin/x')).status).toBe(403)
    expect((await ask('/_gate/auth-request/other.example.org', 'https://other.example.org:8443/admin/x')).status).toBe(200)
    // HTTP/1.0 without Host: $http_host is empty, the routed host is the one judged.
    expect((await ask('/_gate/auth-request/app.example.org', 'https:///admin/x')).status).toBe(403)
    // Without the routed host, an empty authority names nothing; a malformed routed host is refused.
    expect((await ask('/_gate/auth-request', 'https:///admin/x')).status).toBe(401)
    expect((await ask('/_gate/auth-request/a..b', 'https://a..b/admin/x')).status).toBe(401)
  })
})
