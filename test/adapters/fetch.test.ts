/**
 * What the fetch adapter offers beyond the contract table: the global `Response`,
 * `protect` (its checks, the arguments it passes on, its synchronous warm path), delegated
 * `HttpError`s, and credentials read from Web `Headers`.
 */
import { Response as UndiciResponse } from 'undici'
import { afterAll, beforeAll, describe, expect, expectTypeOf, it } from 'vitest'
import { createGuard, type FetchGuard } from '../../adapters/fetch/index.js'
import { authorizationOfHeaders } from '../../src/adapter-kit.js'
import { isHttpError } from '../../adapters/fetch/index.js'
import { anyOf, group, type VootContext } from '../../src/index.js'
import { ADHOC_GROUP_ID, ORG_ID, startEmulator, type Emulator } from '../../testing/index.js'

let emulator: Emulator
let guard: FetchGuard
beforeAll(async () => {
  emulator = await startEmulator()
  guard = createGuard({ baseUrl: emulator.baseUrl, realm: 'fetch' })
})
afterAll(async () => {
  await guard.resolver.close()
  await emulator.close()
})

const requestAs = (authorization?: string): Request =>
  new Request('http://app.example/x', authorization === undefined ? {} : { headers: { authorization } })

describe('a guard called on a request', () => {
  it('resolves with the VootContext when allowed', async () => {
    const voot = await guard.requireGroup(ORG_ID, 'admin')(requestAs(`Bearer ${emulator.issueToken('alice')}`))
    expect(voot).not.toBeInstanceOf(Response)
    expect((voot as VootContext).decision).toMatchObject({ allowed: true, reason: 'member' })
  })

  it("resolves with the refusal, an instance of the runtime's global Response (not undici's)", async () => {
    const token = emulator.issueToken('bob')
    const refusal = await guard.requireGroup(ORG_ID, 'admin')(requestAs(`Bearer ${token}`))
    expect(refusal).toBeInstanceOf(globalThis.Response)
    expect(refusal instanceof UndiciResponse).toBe(false)
    const response = refusal as Response
    expect(response.status).toBe(403)
    expect(response.headers.get('content-type')).toBe('application/json; charset=utf-8')
    const text = await response.text()
    expect(JSON.parse(text)).toMatchObject({ error: 'forbidden' })
    expect(text).not.toContain(token)
  })

  it('answers 400 for two Authorization headers joined into one value by Headers', async () => {
    const headers = new Headers([
      ['authorization', `Bearer ${emulator.issueToken('alice')}`],
      ['authorization', 'Bearer someone-else'],
    ])
    const refusal = (await guard.authenticate()(new Request('http://app.example/', { headers }))) as Response
    expect(refusal.status).toBe(400)
    expect(refusal.headers.get('www-authenticate')).toBe('Bearer realm="fetch", error="invalid_request"')
  })
})

describe('protect', () => {
  it('passes every argument after the request to the handler, after voot', async () => {
    const handler = guard.protect(
      group(ORG_ID),
      (request: Request, voot: VootContext, context: { params: { id: string } }, extra: number) =>
        Response.json({ url: request.url, reason: voot.decision.reason, id: context.params.id, extra }),
    )
    expectTypeOf(handler).parameters.toEqualTypeOf<[Request, { params: { id: string } }, number]>()
    guard.protect(guard.authenticate(), (_request, voot) => {
      expectTypeOf(voot).toEqualTypeOf<VootContext>()
      return new Response()
    })
    const response = await handler(requestAs(`Bearer ${emulator.issueToken('bob')}`), { params: { id: '7' } }, 42)
    expect(await response.json()).toEqual({ url: 'http://app.example/x', reason: 'member', id: '7', extra: 42 })
  })

  it('takes a guard of the same guard object or a requirement, and refuses anything else when declared', () => {
    const handler = (): Response => new Response('ok')
    expect(() => guard.protect(guard.requireGroup(ORG_ID), handler)).not.toThrow()
    expect(() => guard.protect(anyOf(group(ORG_ID), group(ADHOC_GROUP_ID)), handler)).not.toThrow()
    const other = createGuard({ baseUrl: emulator.baseUrl })
    expect(() => guard.protect(other.requireGroup(ORG_ID), handler)).toThrow(/same guard object/)
    expect(() => guard.protect(async () => new Response(), handler)).toThrow(/same guard object/)
    expect(() => guard.protect({ kind: 'group', groupId: ORG_ID } as never, handler)).toThrow(/requirement/)
    expect(() => guard.protect(group(ORG_ID), 'handler' as never)).toThrow(/handler/)
  })

  it('returns the refusal without calling the handler', async () => {
    let calls = 0
    const handler = guard.protect(guard.requireAllGroups([ORG_ID, ADHOC_GROUP_ID], 'owner'), () => {
      calls++
      return new Response('ok')
    })
    const response = await handler(requestAs(`Bearer ${emulator.issueToken('bob')}`))
    expect(response.status).toBe(403)
    expect((await handler(requestAs())).headers.get('www-authenticate')).toBe('Bearer realm="fetch"')
    expect(calls).toBe(0)
  })

  it('calls the handler synchronously on a warm cache (no promise in between)', async () => {
    const handler = guard.protect(guard.requireGroup(ORG_ID, 'admin'), () => new Response('ok'))
    const request = requestAs(`Bearer ${emulator.issueToken('alice')}`)
    const cold = handler(request)
    expect(cold).toBeInstanceOf(Promise)
    expect((await cold).status).toBe(200)
    const warm = handler(request)
    expect(warm).toBeInstanceOf(Response)
  })
})

describe('authenticate({ optional: true })', () => {
  it('resolves with undefined without credentials, and as authenticate() with any', async () => {
    const maybe = guard.authenticate({ optional: true })
    expectTypeOf(maybe).returns.resolves.toEqualTypeOf<VootContext | Response | undefined>()
    expect(await maybe(requestAs())).toBeUndefined()
    expect(((await maybe(requestAs(`Bearer ${emulator.issueToken('erin')}`))) as VootContext).decision.reason).toBe('authenticated')
    for (const [authorization, status] of [
      ['', 401],
      ['Basic x', 401],
      ['Bearer', 400],
      ['Bearer unknown-token', 401],
    ] as const) {
      const refusal = await maybe(requestAs(authorization))
      expect(refusal).toBeInstanceOf(Response)
      expect((refusal as Response).status).toBe(status)
    }
  })

  it('protect runs the handler with voot undefined, synchronously, and keeps the refusals', async () => {
    let seen: VootContext | undefined | null = null
    const handler = guard.protect(guard.authenticate({ optional: true }), (_request, voot) => {
      expectTypeOf(voot).toEqualTypeOf<VootContext | undefined>()
      seen = voot
      return new Response(voot === undefined ? 'stranger' : 'member')
    })
    const anonymous = handler(requestAs())
    expect(anonymous).toBeInstanceOf(Response)
    expect(seen).toBeUndefined()
    expect(await (await handler(requestAs(`Bearer ${emulator.issueToken('alice')}`))).text()).toBe('member')
    expect((await handler(requestAs('Basic x'))).status).toBe(401)
    guard.protect(guard.authenticate(), (_request, voot) => {
      expectTypeOf(voot).toEqualTypeOf<VootContext>()
      return new Response()
    })
  })
})

describe("errorHandling: 'delegate'", () => {
  it("rejects with the adapter kit's HttpError: status, headers, toResponse()", async () => {
    const delegating = createGuard({ baseUrl: emulator.baseUrl, realm: 'd', errorHandling: 'delegate' })
    const token = emulator.issueToken('erin')
    const error: unknown = await delegating
      .requireGroup(ORG_ID)(requestAs(`Bearer ${token}`))
      .catch((e: unknown) => e)
    expect(isHttpError(error)).toBe(true)
    if (!isHttpError(error)) return
    expect(error).toMatchObject({ code: 'ERR_FORBIDDEN', status: 403, expose: true })
    expect(Object.keys(error)).not.toContain('toResponse')
    const response = error.toResponse()
    expect(response).toBeInstanceOf(Response)
    expect(response.status).toBe(403)
    expect(await response.json()).toMatchObject({ error: 'forbidden' })
    const protectedHandler = delegating.protect(group(ORG_ID), () => new Response())
    const missing: unknown = await Promise.resolve(requestAs('Basic x'))
      .then(protectedHandler)
      .catch((e: unknown) => e)
    expect(missing).toMatchObject({ status: 401, headers: { 'www-authenticate': 'Bearer realm="d"' } })
    expect(JSON.stringify(missing) + String(missing)).not.toContain(token)
    await delegating.resolver.close()
  })
})

describe('authorizationOfHeaders', () => {
  const of = (...values: string[]) => authorizationOfHeaders(new Headers(values.map((v) => ['authorization', v] as [string, string])))

  it.each([
    [[], undefined],
    [['Bearer abc'], 'Bearer abc'],
    [
      ['Bearer a', 'Bearer b'],
      ['Bearer a', 'Bearer b'],
    ],
    [
      ['Basic eA==', 'Bearer b'],
      ['Basic eA==', 'Bearer b'],
    ],
    [['Digest a=b, c="x, Bearer y"'], 'Digest a=b, c="x, Bearer y"'],
    [
      ['Digest a=b', 'Negotiate'],
      ['Digest a=b', 'Negotiate'],
    ],
    [['Digest a = "\\"q, r", b=c'], 'Digest a = "\\"q, r", b=c'],
  ])('%j -> %j', (values, expected) => {
    expect(of(...values)).toEqual(expected)
  })
})
