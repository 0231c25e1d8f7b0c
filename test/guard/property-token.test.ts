/**
 * Properties of the `Authorization` parser and of what reaches the network: for any
 * header value, the parser returns a well-formed token or throws one of our two typed
 * errors (never anything else, never echoing the header), and no request ever leaves
 * with a token that is not RFC 6750 `b64token` of at most 4096 characters.
 */
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import fc from 'fast-check'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createGuardCore, type GuardCore } from '../../src/adapter-kit.js'
import {
  createMembershipResolver,
  extractBearerToken,
  group,
  TokenMalformedError,
  TokenMissingError,
  VootError,
  type MembershipResolver,
} from '../../src/index.js'
import { MAX_TOKEN_LENGTH } from '../../src/internal.js'

const B64TOKEN = /^[A-Za-z0-9\-._~+/]+=*$/
const wellFormed = (token: string): boolean => token.length >= 1 && token.length <= MAX_TOKEN_LENGTH && B64TOKEN.test(token)

const TOKEN_CHARS = 'ABCXYZabcxyz0189-._~+/='.split('')
const HOSTILE_CHARS = [' ', '\t', '\r', '\n', '\u0000', '"', ',', ';', '\\', 'é', '\u2028', '😀', '%', ':', '=']

/** Tokens that are mostly b64token with, sometimes, something hostile mixed in. */
const tokenish = fc.oneof(
  fc.string({ unit: fc.constantFrom(...TOKEN_CHARS), maxLength: 40 }),
  fc.string({ unit: fc.constantFrom(...TOKEN_CHARS, ...HOSTILE_CHARS), maxLength: 40 }),
  fc.string({ unit: 'binary', maxLength: 30 }),
  fc.integer({ min: MAX_TOKEN_LENGTH - 2, max: MAX_TOKEN_LENGTH + 2 }).map((n) => 'a'.repeat(n)),
)

/** Values an `Authorization` header (as Node or a framework reports it) can take. */
const headerValue: fc.Arbitrary<string | string[] | undefined> = fc.oneof(
  fc.constant(undefined),
  fc.string({ unit: 'binary', maxLength: 50 }),
  fc
    .tuple(
      fc.constantFrom('Bearer', 'bearer', 'BEARER', 'Basic', 'Bearer:', 'Bearerx', 'Token', ''),
      fc.constantFrom(' ', '  ', '', '\t', ' \t'),
      tokenish,
      fc.constantFrom('', ' ', '  trailing', '\t'),
    )
    .map(([scheme, space, token, tail]) => `${scheme}${space}${token}${tail}`),
  fc.array(fc.string({ maxLength: 20 }), { maxLength: 3 }),
)

describe('the Authorization parser', () => {
  it('returns a well-formed token or throws TokenMissingError/TokenMalformedError, never echoing the header', () => {
    fc.assert(
      fc.property(headerValue, (header) => {
        let token: string
        try {
          token = extractBearerToken(header)
        } catch (error) {
          expect(error instanceof TokenMissingError || error instanceof TokenMalformedError).toBe(true)
          const { status, message } = error as VootError
          expect([400, 401]).toContain(status)
          // The message is a fixed sentence: whatever the header held is not in it.
          if (typeof header === 'string') {
            const secret = header.replace(/^\S*\s*/, '').trim()
            if (secret.length >= 6) expect(message).not.toContain(secret)
          }
          return
        }
        expect(wellFormed(token)).toBe(true)
        expect(typeof header === 'string' && header.includes(token)).toBe(true)
      }),
      { numRuns: 2000 },
    )
  })

  it('accepts every well-formed token in a Bearer header, unchanged', () => {
    fc.assert(
      fc.property(
        fc.string({ unit: fc.constantFrom(...TOKEN_CHARS.filter((c) => c !== '=')), minLength: 1, maxLength: 200 }),
        fc.nat({ max: 3 }),
        fc.constantFrom('Bearer ', 'bearer ', 'BEARER  '),
        (body, padding, scheme) => {
          const token = body + '='.repeat(padding)
          expect(extractBearerToken(`${scheme}${token}`)).toBe(token)
        },
      ),
      { numRuns: 500 },
    )
  })
})

describe('what reaches the network', () => {
  let server: Server
  let baseUrl: string
  const received: (string | undefined)[] = []
  let resolver: MembershipResolver
  let core: GuardCore

  beforeAll(async () => {
    // Answers 401 to everything: every token is "unknown", so each one costs one request.
    server = createServer((req, res) => {
      received.push(req.headers.authorization)
      res.writeHead(401, { 'content-type': 'application/json', 'www-authenticate': 'Bearer realm="x", error="invalid_token"' })
      res.end('{"message":"Token is invalid"}')
    })
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
    baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/groups`
    resolver = createMembershipResolver({ baseUrl, cache: { negativeTtl: 0 } })
    core = createGuardCore({ resolver })
  })
  afterAll(async () => {
    await resolver.close()
    server.closeAllConnections()
    await new Promise<void>((resolve) => server.close(() => resolve()))
  })

  it('through the guard: only well-formed tokens are sent, exactly as given; every failure is one of ours', async () => {
    await fc.assert(
      fc.asyncProperty(headerValue, async (header) => {
        const before = received.length
        const outcome = await Promise.resolve(core.authorizeNow({ authorization: header }, group('fc:org:example.org'))).then(
          () => undefined,
          (error: unknown) => error,
        )
        expect(outcome).toBeInstanceOf(VootError)
        const sent = received.slice(before)
        let parsed: string | undefined
        try {
          parsed = extractBearerToken(header)
        } catch {
          parsed = undefined
        }
        if (parsed === undefined) {
          expect(sent).toEqual([])
          expect([400, 401]).toContain((outcome as VootError).status)
        } else {
          expect(sent).toEqual([`Bearer ${parsed}`])
          expect((outcome as VootError).code).toBe('ERR_TOKEN_INVALID')
        }
      }),
      { numRuns: 150 },
    )
  })

  it('through the resolver with any string as token: typed errors only, nothing malformed sent', async () => {
    await fc.assert(
      fc.asyncProperty(tokenish, async (token) => {
        const before = received.length
        const error = await resolver.check(token, group('fc:org:example.org')).then(
          () => undefined,
          (e: unknown) => e,
        )
        expect(error).toBeInstanceOf(VootError)
        for (const header of received.slice(before)) {
          expect(header).toBe(`Bearer ${token}`)
          expect(wellFormed(token)).toBe(true)
        }
        if (!wellFormed(token)) expect(received.length).toBe(before)
        expect(String((error as Error).message)).not.toContain(token.length >= 6 ? token : '\u0000never')
      }),
      { numRuns: 150 },
    )
  })
})
