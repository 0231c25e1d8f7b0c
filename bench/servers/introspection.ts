/**
 * The authorization server of the Apache + mod_auth_openidc row: an RFC 7662 token
 * introspection endpoint over https, on a certificate made for this run (see
 * `bench/self-signed.ts`; Apache checks it against that certificate as its CA bundle).
 * It answers `active: true` for the one token it is given, with the claims the row's
 * `Require claim` reads (and for that token with `-outsider` appended, without them: the
 * benchmark's check that a 403 comes back), and counts its calls: with mod_auth_openidc's cache warm, none
 * happen while the rounds are measured. Usage: `introspection.ts '<IntrospectionOptions JSON>'`.
 *
 * @module
 */
import { readFileSync } from 'node:fs'
import { createServer } from 'node:https'
import type { AddressInfo } from 'node:net'
import { serveParent } from './ipc.js'

/** Ready payload of the introspection child. */
export interface IntrospectionReady {
  readonly url: string
}

/** What the introspection child is started with (JSON, its one argument). */
export interface IntrospectionOptions {
  readonly token: string
  readonly certFile: string
  readonly keyFile: string
  /** The claim the row's `Require claim` reads, and the value in it for `token`. */
  readonly claim: string
  readonly value: string
}

const { token, certFile, keyFile, claim, value } = JSON.parse(process.argv[2] ?? '{}') as IntrospectionOptions
let calls = 0

const server = createServer({ cert: readFileSync(certFile), key: readFileSync(keyFile) }, (req, res) => {
  let body = ''
  req.setEncoding('utf8')
  req.on('data', (chunk: string) => (body += chunk))
  req.on('end', () => {
    calls++
    const asked = new URLSearchParams(body).get('token')
    // `exp` an hour away: mod_auth_openidc caches the answer until then.
    const exp = Math.floor(Date.now() / 1000) + 3600
    const answer =
      asked === token
        ? { active: true, sub: 'alice', client_id: 'bench', exp, [claim]: [value] }
        : asked === `${token}-outsider`
          ? { active: true, sub: 'bob', client_id: 'bench', exp, [claim]: [] }
          : { active: false }
    const text = JSON.stringify(answer)
    res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text), 'cache-control': 'no-store' })
    res.end(text)
  })
})
await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))

serveParent({ count: () => calls }, {
  url: `https://127.0.0.1:${(server.address() as AddressInfo).port}/introspect`,
} satisfies IntrospectionReady)
