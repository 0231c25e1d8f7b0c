/**
 * The gate's FastCGI authorizer, spoken to byte by byte as a web server (or a hostile peer)
 * would: the records mod_authnz_fcgi sends and what comes back, the bounds (params, time,
 * roles, multiplexing), the management records, untrusted peers; the params read as the
 * original request; the answer for Apache (Variable- headers on 200 only, no body); and
 * the `fastcgi` key of the configuration.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { connect, type AddressInfo, type Server } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { runCli } from '../../cli/index.js'
import { checkGateConfig, type GateServer } from '../../gate/index.js'
import {
  createFastCgiServer,
  decodeNameValues,
  encodeNameValues,
  encodeRecord,
  type FastCgiAuthorizer,
  type FastCgiServerOptions,
} from '../../gate/front/fastcgi.js'
import { fastCgiAnswerOf, proxyRequestOf, variableName } from '../../gate/front/fastcgi-check.js'
import type { Emulator } from '../../testing/index.js'
import { startGateEmulator, startTestGate, testGateConfig } from './support/gate-harness.js'
import { freePort } from './support/proxies.js'

const BEGIN = 1
const ABORT = 2
const END = 3
const PARAMS = 4
const STDIN = 5
const STDOUT = 6
const GET_VALUES = 9
const GET_VALUES_RESULT = 10
const UNKNOWN_TYPE = 11

const begin = (id: number, role = 2, keepConn = false) => encodeRecord(BEGIN, id, Buffer.from([0, role, keepConn ? 1 : 0, 0, 0, 0, 0, 0]))
const params = (id: number, pairs: Record<string, string>) => encodeRecord(PARAMS, id, encodeNameValues(Object.entries(pairs)))
const paramsEnd = (id: number) => encodeRecord(PARAMS, id)

interface Received {
  readonly records: { type: number; id: number; content: Buffer }[]
  /** The peer closed (or cut) the connection. */
  readonly closed: boolean
}

/** Sends `bytes` (each buffer a write of its own) and collects the records until the listener closes, or `waitMs` passes. */
function exchange(port: number, writes: readonly Buffer[], waitMs = 2_000, until?: (r: Received['records']) => boolean): Promise<Received> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1')
    let buffered = Buffer.alloc(0)
    const records: Received['records'] = []
    let done = false
    const finish = (closed: boolean) => {
      if (done) return
      done = true
      clearTimeout(timer)
      socket.destroy()
      resolve({ records, closed })
    }
    const timer = setTimeout(() => finish(false), waitMs)
    socket.on('connect', () => {
      for (const bytes of writes) socket.write(bytes)
    })
    socket.on('data', (chunk: Buffer) => {
      buffered = Buffer.concat([buffered, chunk])
      while (buffered.length >= 8) {
        const length = buffered.readUInt16BE(4)
        const total = 8 + length + (buffered[6] as number)
        if (buffered.length < total) break
        records.push({ type: buffered[1] as number, id: buffered.readUInt16BE(2), content: buffered.subarray(8, 8 + length) })
        buffered = buffered.subarray(total)
      }
      if (until?.(records) === true) finish(false)
    })
    socket.on('error', () => finish(true))
    socket.on('close', () => finish(true))
  })
}

const stdoutOf = (received: Received, id = 1) =>
  Buffer.concat(received.records.filter((r) => r.type === STDOUT && r.id === id).map((r) => r.content)).toString('latin1')
const endOf = (received: Received, id = 1) => received.records.find((r) => r.type === END && r.id === id)

const servers: Server[] = []
async function listen(authorize: FastCgiAuthorizer, options: Partial<FastCgiServerOptions> = {}): Promise<number> {
  const server = createFastCgiServer({ authorize, trusted: () => true, unavailable: 'Status: 503\r\nRetry-After: 5\r\n\r\n', ...options })
  servers.push(server)
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  return (server.address() as AddressInfo).port
}

afterAll(async () => {
  for (const server of servers) await new Promise((resolve) => server.close(resolve))
})

const echoUri: FastCgiAuthorizer = (request) => `Status: 200 OK\r\nVariable-URI: ${request.params.get('REQUEST_URI') ?? '?'}\r\n\r\n`

describe('the FastCGI listener', () => {
  it('answers an authorizer request as mod_authnz_fcgi sends it: params over several records, no stdin, then closes', async () => {
    const port = await listen(echoUri)
    const long = `/${'a'.repeat(300)}`
    const received = await exchange(port, [
      begin(1),
      params(1, { REQUEST_METHOD: 'GET' }),
      params(1, { REQUEST_URI: long, FCGI_ROLE: 'AUTHORIZER' }),
      paramsEnd(1),
    ])
    expect(stdoutOf(received)).toBe(`Status: 200 OK\r\nVariable-URI: ${long}\r\n\r\n`)
    // The stdout stream is ended by an empty record before the end of the request.
    const types = received.records.map((r) => r.type)
    expect(types.slice(-2)).toEqual([STDOUT, END])
    expect(received.records.at(-2)?.content.length).toBe(0)
    expect(endOf(received)?.content[4]).toBe(0) // FCGI_REQUEST_COMPLETE
    expect(received.closed).toBe(true)
  })

  it('reads a record split across writes and byte by byte', async () => {
    const port = await listen(echoUri)
    const bytes = Buffer.concat([begin(7), params(7, { REQUEST_URI: '/split' }), paramsEnd(7)])
    const received = await exchange(
      port,
      [...bytes].map((byte) => Buffer.from([byte])),
    )
    expect(stdoutOf(received, 7)).toContain('Variable-URI: /split')
  })

  it('keeps the connection for the next request when the web server asks (FCGI_KEEP_CONN)', async () => {
    const port = await listen(echoUri)
    const received = await exchange(
      port,
      [
        begin(1, 2, true),
        params(1, { REQUEST_URI: '/one' }),
        paramsEnd(1),
        begin(2, 2, true),
        params(2, { REQUEST_URI: '/two' }),
        paramsEnd(2),
      ],
      2_000,
      (records) => records.filter((r) => r.type === END).length === 2,
    )
    expect(stdoutOf(received, 1)).toContain('/one')
    expect(stdoutOf(received, 2)).toContain('/two')
    expect(received.closed).toBe(false)
  })

  it('refuses a role other than AUTHORIZER (a responder, a filter) with FCGI_UNKNOWN_ROLE', async () => {
    let asked = 0
    const port = await listen(() => {
      asked += 1
      return 'Status: 200\r\n\r\n'
    })
    for (const role of [1, 3]) {
      const received = await exchange(port, [begin(1, role), params(1, { REQUEST_URI: '/' }), paramsEnd(1)])
      expect(endOf(received)?.content[4]).toBe(3)
      expect(stdoutOf(received)).toBe('')
    }
    expect(asked).toBe(0)
  })

  it('serves one request at a time: a second one while the first is under way gets FCGI_CANT_MPX_CONN', async () => {
    const port = await listen(echoUri)
    const received = await exchange(port, [begin(1), begin(2), params(1, { REQUEST_URI: '/first' }), paramsEnd(1)])
    expect(endOf(received, 2)?.content[4]).toBe(1)
    expect(stdoutOf(received, 1)).toContain('/first')
  })

  it('answers FCGI_GET_VALUES (no multiplexing) and an unknown management record with FCGI_UNKNOWN_TYPE', async () => {
    const port = await listen(echoUri, { maxConnections: 7 })
    const asked = encodeNameValues([
      ['FCGI_MPXS_CONNS', ''],
      ['FCGI_MAX_CONNS', ''],
      ['SOMETHING_ELSE', ''],
    ])
    const received = await exchange(port, [encodeRecord(GET_VALUES, 0, asked), encodeRecord(42, 0, Buffer.from('x'))], 500)
    const values = received.records.find((r) => r.type === GET_VALUES_RESULT)
    expect(Object.fromEntries(decodeNameValues(values!.content)!)).toEqual({ FCGI_MPXS_CONNS: '0', FCGI_MAX_CONNS: '7' })
    const unknown = received.records.find((r) => r.type === UNKNOWN_TYPE)
    expect(unknown?.content[0]).toBe(42)
  })

  it('answers params larger than the bound with 431, never deciding on a part of them', async () => {
    let asked = 0
    const port = await listen(
      () => {
        asked += 1
        return 'Status: 200\r\n\r\n'
      },
      { maxParamsBytes: 1024 },
    )
    const big = params(1, { HTTP_COOKIE: 'x'.repeat(2000) })
    const received = await exchange(port, [begin(1), big, paramsEnd(1)])
    expect(stdoutOf(received)).toMatch(/^Status: 431 /)
    expect(asked).toBe(0)
  })

  it.for([
    [
      'a name-value length past the end of the params',
      Buffer.concat([begin(1), encodeRecord(PARAMS, 1, Buffer.from([5, 100, 65, 66])), paramsEnd(1)]),
    ],
    [
      'a four-byte length past the end',
      Buffer.concat([begin(1), encodeRecord(PARAMS, 1, Buffer.from([0x80, 0, 0, 9, 1, 65])), paramsEnd(1)]),
    ],
    ['a record of another version', Buffer.concat([Buffer.from([2, 1, 0, 1, 0, 8, 0, 0]), Buffer.alloc(8)])],
    ['a begin-request of the wrong length', encodeRecord(BEGIN, 1, Buffer.from([0, 2, 0]))],
    ['the same request begun twice', Buffer.concat([begin(1), begin(1)])],
    ['a record only an application sends (stdout)', Buffer.concat([begin(1), encodeRecord(STDOUT, 1, Buffer.from('Status: 200\r\n\r\n'))])],
  ] as const)('closes the connection on %s, without an answer', async ([, bytes]) => {
    let asked = 0
    const port = await listen(() => {
      asked += 1
      return 'Status: 200\r\n\r\n'
    })
    const received = await exchange(port, [bytes])
    expect(received.closed).toBe(true)
    expect(stdoutOf(received)).toBe('')
    expect(asked).toBe(0)
  })

  it('closes a connection whose request does not arrive in time, and one from an untrusted peer at once', async () => {
    const port = await listen(echoUri, { requestTimeout: 200 })
    const started = Date.now()
    const slow = await exchange(port, [begin(1), params(1, { REQUEST_URI: '/' })], 3_000)
    expect(slow.closed).toBe(true)
    expect(Date.now() - started).toBeLessThan(2_000)
    expect(slow.records).toEqual([])

    const closedPort = await listen(echoUri, { trusted: () => false })
    const refused = await exchange(closedPort, [begin(1), params(1, { REQUEST_URI: '/' }), paramsEnd(1)])
    expect(refused.closed).toBe(true)
    expect(refused.records).toEqual([])
  })

  it('answers 503 with Retry-After when the authorizer fails, rejects or takes too long: never an allow', async () => {
    const request = [begin(1), params(1, { REQUEST_URI: '/' }), paramsEnd(1)]
    const throws = await listen(() => {
      throw new Error('boom')
    })
    const rejects = await listen(() => Promise.reject(new Error('boom')))
    const hangs = await listen(() => new Promise<string>(() => {}), { answerTimeout: 200 })
    for (const port of [throws, rejects, hangs]) {
      expect(stdoutOf(await exchange(port, request))).toBe('Status: 503\r\nRetry-After: 5\r\n\r\n')
    }
  })

  it('drops the answer of a request the web server aborted', async () => {
    let release: (text: string) => void = () => {}
    const port = await listen(() => new Promise<string>((resolve) => (release = resolve)))
    const received = await exchange(port, [begin(1, 2, true), params(1, { REQUEST_URI: '/' }), paramsEnd(1), encodeRecord(ABORT, 1)], 500)
    release('Status: 200\r\n\r\n')
    expect(endOf(received)).toBeDefined()
    expect(stdoutOf(received)).toBe('')
  })

  it('ignores stdin and records of requests that are not under way', async () => {
    const port = await listen(echoUri)
    const received = await exchange(port, [
      encodeRecord(PARAMS, 9, encodeNameValues([['REQUEST_URI', '/other']])),
      begin(1),
      encodeRecord(STDIN, 1, Buffer.from('body')),
      params(1, { REQUEST_URI: '/mine' }),
      paramsEnd(1),
    ])
    expect(stdoutOf(received)).toContain('/mine')
    expect(stdoutOf(received, 9)).toBe('')
  })
})

describe('name-value pairs', () => {
  it('round-trips one- and four-byte lengths, and reads a name given twice as ambiguous', () => {
    const long = 'v'.repeat(70_000)
    const decoded = decodeNameValues(
      encodeNameValues([
        ['A', ''],
        ['LONG', long],
        ['B', 'æ'],
      ]),
    )!
    expect(decoded.get('A')).toBe('')
    expect(decoded.get('LONG')).toBe(long)
    expect(decoded.get('B')).toBe('æ')
    const twice = decodeNameValues(
      encodeNameValues([
        ['HTTP_AUTHORIZATION', 'Bearer a'],
        ['HTTP_AUTHORIZATION', 'Bearer b'],
      ]),
    )!
    expect(twice.has('HTTP_AUTHORIZATION')).toBe(true)
    expect(twice.get('HTTP_AUTHORIZATION')).toBeUndefined()
  })
})

describe('the params as the original request, and the answer for Apache', () => {
  const settings = { headers: { user: 'X-Voot-User', rule: 'X-Voot-Rule', token: undefined } } as Parameters<typeof fastCgiAnswerOf>[1]
  const request = (extra: Record<string, string> = {}) =>
    proxyRequestOf({
      params: new Map(
        Object.entries({
          REQUEST_METHOD: 'GET',
          REQUEST_SCHEME: 'https',
          SERVER_NAME: 'wiki.example.org',
          SERVER_PORT: '443',
          REQUEST_URI: '/admin/x?y=1',
          HTTP_HOST: 'evil.example.org',
          HTTP_X_FORWARDED_HOST: 'evil.example.org',
          ...extra,
        }),
      ),
      remoteAddress: '127.0.0.1',
    })

  it('reads the host Apache served (SERVER_NAME), never HTTP_HOST’s host or a client’s X-Forwarded-Host', () => {
    expect(request().headers).toMatchObject({
      'x-forwarded-host': 'wiki.example.org',
      'x-forwarded-uri': '/admin/x?y=1',
      'x-forwarded-proto': 'https',
    })
    expect(request().rawHeaders.filter((_, i) => i % 2 === 0)).not.toContain('host')
  })

  it('takes the port the browser wrote in Host (as nginx’s snippet does), the scheme’s default when it wrote none', () => {
    // ServerName without a port: SERVER_PORT is 80 even where Apache listens on 8000.
    const http = { REQUEST_SCHEME: 'http', SERVER_PORT: '80' }
    expect(request({ ...http, HTTP_HOST: 'evil.example.org:8000' }).headers['x-forwarded-host']).toBe('wiki.example.org:8000')
    expect(request({ ...http, HTTP_HOST: 'wiki.example.org' }).headers['x-forwarded-host']).toBe('wiki.example.org')
    expect(request({ ...http, HTTP_HOST: 'wiki.example.org:80' }).headers['x-forwarded-host']).toBe('wiki.example.org')
    expect(request({ SERVER_PORT: '443', HTTP_HOST: 'wiki.example.org:8443' }).headers['x-forwarded-host']).toBe('wiki.example.org:8443')
    expect(request({ SERVER_PORT: '8443', HTTP_HOST: 'wiki.example.org' }).headers['x-forwarded-host']).toBe('wiki.example.org')
    expect(request({ ...http, HTTP_HOST: '[::1]:8080' }).headers['x-forwarded-host']).toBe('wiki.example.org:8080')
    expect(request({ SERVER_NAME: '::1', ...http, HTTP_HOST: '[::1]:8080' }).headers['x-forwarded-host']).toBe('[::1]:8080')
  })

  it('reads SERVER_PORT only for a request without a Host header it can read', () => {
    const forwardedHost = (extra: Record<string, string>) => {
      const { headers } = request(extra)
      return headers['x-forwarded-host']
    }
    expect(forwardedHost({ HTTP_HOST: 'a:b:c', SERVER_PORT: '8443' })).toBe('wiki.example.org:8443')
    expect(forwardedHost({ HTTP_HOST: 'wiki.example.org:99999999', SERVER_PORT: '443' })).toBe('wiki.example.org')
    const noHost = proxyRequestOf({
      params: new Map(Object.entries({ REQUEST_SCHEME: 'http', SERVER_NAME: '::1', SERVER_PORT: '8080', REQUEST_URI: '/' })),
      remoteAddress: '127.0.0.1',
    })
    expect(noHost.headers['x-forwarded-host']).toBe('[::1]:8080')
    expect(
      proxyRequestOf({
        params: new Map(Object.entries({ REQUEST_SCHEME: 'http', SERVER_NAME: 'w', SERVER_PORT: '443' })),
        remoteAddress: '127.0.0.1',
      }).headers['x-forwarded-host'],
    ).toBe('w:443')
  })

  it('leaves out what is missing or not a path, so that the check answers 401', () => {
    expect(request({ REQUEST_URI: 'http://evil.example.org/admin' }).headers['x-forwarded-uri']).toBeUndefined()
    expect(request({ SERVER_PORT: 'eighty', HTTP_HOST: '' }).headers['x-forwarded-host']).toBeUndefined()
  })

  it('passes the gate’s headers for the app as Variable- headers on 200 only, and the client’s headers otherwise, without a body', () => {
    const allowed = fastCgiAnswerOf(
      { status: 200, headers: { 'x-voot-user': 'alice', 'x-voot-rule': 'admin', 'cache-control': 'no-store' } },
      settings,
    )
    expect(allowed).toBe('Status: 200 OK\r\nVariable-X_VOOT_USER: alice\r\nVariable-X_VOOT_RULE: admin\r\n\r\n')
    const refused = fastCgiAnswerOf(
      {
        status: 401,
        headers: { 'www-authenticate': 'Bearer realm="voot-gate"', 'content-type': 'application/json' },
        body: '{"error":"x"}',
      },
      settings,
    )
    expect(refused).toBe('Status: 401 Unauthorized\r\nwww-authenticate: Bearer realm="voot-gate"\r\n\r\n')
    expect(variableName('X-Voot-User')).toBe('X_VOOT_USER')
  })

  it('never writes a value that would break the response apart', () => {
    expect(fastCgiAnswerOf({ status: 200, headers: { 'x-voot-user': 'alice\r\nVariable-X_VOOT_RULE: admin' } }, settings)).toBeUndefined()
  })
})

describe('the gate with a FastCGI listener', () => {
  let emulator: Emulator
  let gate: GateServer
  beforeAll(async () => {
    emulator = await startGateEmulator()
    gate = await startTestGate(testGateConfig(emulator, { fastcgi: { listen: '127.0.0.1:0' } }))
  })
  afterAll(async () => {
    await gate?.close()
    await emulator?.close()
  })

  const apacheParams = (extra: Record<string, string>) => ({
    REQUEST_METHOD: 'GET',
    REQUEST_SCHEME: 'http',
    SERVER_NAME: '127.0.0.1',
    SERVER_PORT: '8080',
    REQUEST_URI: '/admin/reports',
    FCGI_ROLE: 'AUTHORIZER',
    FCGI_APACHE_ROLE: 'AUTHENTICATOR',
    ...extra,
  })
  const ask = (extra: Record<string, string>) =>
    exchange(Number(gate.fastcgi!.address.split(':').pop()), [begin(1), params(1, apacheParams(extra)), paramsEnd(1)]).then((r) =>
      stdoutOf(r),
    )

  it('decides on the params: a member, a non-member, no token, a browser, a client’s own X-Forwarded-Uri ignored', async () => {
    expect(await ask({ HTTP_AUTHORIZATION: `Bearer ${emulator.issueToken('alice')}` })).toBe(
      'Status: 200 OK\r\nVariable-X_VOOT_USER: alice\r\nVariable-X_VOOT_RULE: admin\r\nVariable-X_VOOT_SERVICE: \r\n\r\n',
    )
    expect(await ask({ HTTP_AUTHORIZATION: `Bearer ${emulator.issueToken('bob')}` })).toMatch(/^Status: 403 Forbidden\r\n/)
    expect(await ask({ HTTP_ACCEPT: 'application/json' })).toMatch(
      /^Status: 401 Unauthorized\r\nwww-authenticate: Bearer realm="voot-gate"\r\n/,
    )
    const browser = await ask({ HTTP_ACCEPT: 'text/html', REQUEST_URI: '/wiki?x=1' })
    expect(browser).toMatch(/^Status: 302 Found\r\n/)
    expect(browser).toContain(`location: http://127.0.0.1:8080/_gate/signin?rd=${encodeURIComponent('http://127.0.0.1:8080/wiki?x=1')}\r\n`)
    const spoofed = await ask({ HTTP_AUTHORIZATION: `Bearer ${emulator.issueToken('bob')}`, HTTP_X_FORWARDED_URI: '/public/x' })
    expect(spoofed).toMatch(/^Status: 403 /)
  })

  it('answers 401 when Apache withheld what the gate needs (the request’s target, host, scheme or method)', async () => {
    const port = Number(gate.fastcgi!.address.split(':').pop())
    for (const left of ['REQUEST_URI', 'SERVER_NAME', 'REQUEST_SCHEME', 'REQUEST_METHOD']) {
      const without: Record<string, string> = apacheParams({ HTTP_AUTHORIZATION: `Bearer ${emulator.issueToken('alice')}` })
      delete without[left]
      expect(stdoutOf(await exchange(port, [begin(1), params(1, without), paramsEnd(1)])), left).toMatch(/^Status: 401 /)
    }
  })

  it('reads fastcgi in the configuration: a listen address, loopback unless trustedProxies are named', async () => {
    const base = { service: { baseUrl: 'https://groups.example.org/groups' }, rules: [{ allow: 'signed-in' }] }
    expect(await checkGateConfig({ ...base, fastcgi: { listen: '127.0.0.1:4182' } })).toEqual([])
    const problems = async (fastcgi: unknown) =>
      (await checkGateConfig({ ...base, fastcgi })).map((p) => `${p.path.join('.')}: ${p.message}`)
    expect(await problems({ listen: '0.0.0.0:4182' })).toEqual([
      'fastcgi.listen: listens on 0.0.0.0, not on loopback: name the web servers\' addresses in "trustedProxies"',
    ])
    expect(await problems({ listn: '127.0.0.1:4182' })).toEqual(
      expect.arrayContaining([expect.stringMatching(/^fastcgi.listn: unknown key/)]),
    )
    expect(await problems({ listen: 'nowhere' })).toEqual(['fastcgi.listen: must be "host:port", such as "127.0.0.1:4182" or "[::1]:4182"'])
    expect(await problems({ listen: '127.0.0.1:4181' })).toEqual([
      'fastcgi.listen: uses the port of "listen" (4181): the FastCGI authorizer needs one of its own',
    ])
    expect(await problems({})).toEqual(['fastcgi.listen: is required, such as "127.0.0.1:4182"'])
    expect(await checkGateConfig({ ...base, trustedProxies: ['10.0.0.0/8'], fastcgi: { listen: '0.0.0.0:4182' } })).toEqual([])
  })

  it('voot-guard gate says where the FastCGI authorizer listens, and it answers there until the gate stops', async () => {
    const [httpPort, fastcgiPort] = [await freePort(), await freePort()]
    const dir = await mkdtemp(join(tmpdir(), 'voot-gate-fastcgi-'))
    const file = join(dir, 'gate.yaml')
    await writeFile(
      file,
      `listen: 127.0.0.1:${httpPort}\nfastcgi: { listen: "127.0.0.1:${fastcgiPort}" }\nservice: { baseUrl: "${emulator.baseUrl}", allowInsecureHttp: true }\nrules:\n  - allow: anyone\n`,
    )
    const stop = new AbortController()
    let stdout = ''
    const code = runCli(['gate', '--config', file], {
      stdout: { write: (text: string) => (stdout += text) },
      stderr: { write: () => {} },
      env: {},
      signal: stop.signal,
    })
    try {
      await expect.poll(() => stdout, { timeout: 10_000 }).toContain(`on fcgi://127.0.0.1:${fastcgiPort}/`)
      const answer = await exchange(fastcgiPort, [begin(1), params(1, apacheParams({})), paramsEnd(1)])
      expect(stdoutOf(answer)).toMatch(/^Status: 200 OK\r\n/)
    } finally {
      stop.abort()
      expect(await code).toBe(0)
      await rm(dir, { recursive: true, force: true })
    }
    const after = await exchange(fastcgiPort, [begin(1), params(1, apacheParams({})), paramsEnd(1)], 500)
    expect(after.records).toEqual([])
  })
})
