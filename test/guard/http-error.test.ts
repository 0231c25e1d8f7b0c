/**
 * The renderer of the HTTP contract: the contract's JSON by default, RFC 9457 problem
 * details for a client whose `Accept` names `application/problem+json`, on every status,
 * with the challenge and `Retry-After` kept, and a body text adapters write verbatim.
 */
import { describe, expect, it } from 'vitest'
import { createHttpErrorRenderer, prefersProblemDetails } from '../../src/guard/http-error.js'
import {
  ForbiddenError,
  InsufficientScopeError,
  InvalidArgumentError,
  InvalidTokenError,
  TokenMalformedError,
  TokenMissingError,
  UpstreamError,
} from '../../src/index.js'

const renderer = createHttpErrorRenderer({ realm: 'api', retryAfter: 7 })
const DOCS = 'https://github.com/voot-guard/voot-guard/blob/main/docs/http-contract.md#'

/** Every error of the contract, as the guard core rejects with it. */
const CASES = [
  ['unauthorized', 401, new TokenMissingError(), { 'www-authenticate': 'Bearer realm="api"' }],
  ['invalid_request', 400, new TokenMalformedError(), { 'www-authenticate': 'Bearer realm="api", error="invalid_request"' }],
  ['invalid_token', 401, new InvalidTokenError(), { 'www-authenticate': 'Bearer realm="api", error="invalid_token"' }],
  [
    'insufficient_scope',
    403,
    new InsufficientScopeError(),
    { 'www-authenticate': 'Bearer realm="api", error="insufficient_scope", scope="groups"' },
  ],
  ['forbidden', 403, new ForbiddenError('This resource requires membership in the group fc:adhoc:1', { reason: 'not_member' }), {}],
  [
    'temporarily_unavailable',
    503,
    new UpstreamError('ERR_UPSTREAM_STATUS', 'HTTP 500 from me/groups', { upstreamStatus: 500 }),
    { 'retry-after': '7' },
  ],
] as const

describe('prefersProblemDetails', () => {
  it.each([
    ['application/problem+json', true],
    ['Application/Problem+JSON', true],
    ['application/json, application/problem+json', true],
    ['application/problem+json; q=0.9, application/json; q=0.5', true],
    ['application/problem+json;q=1.0, */*;q=0.1', true],
    ['text/html, application/problem+json;q=0.001', true],
    [undefined, false],
    [null, false],
    ['', false],
    ['*/*', false],
    ['application/*', false],
    ['application/json', false],
    ['application/json, application/problem+json;q=0.5', false],
    ['application/problem+json;q=0', false],
    ['application/problem+json;q=0.000', false],
    ['application/problem+json;q=2', false],
    ['application/problem+json;q=abc', false],
    ['application/problem+jsonx', false],
    ['text/html', false],
  ])('%j: %s', (accept, expected) => {
    expect(prefersProblemDetails(accept)).toBe(expected)
  })
})

describe('renderer.answer', () => {
  it.each(CASES)('%s: the contract JSON without Accept, with application/json and */*', (error, status, given, headers) => {
    const http = renderer.toHttpError(given)
    for (const accept of [undefined, null, 'application/json', '*/*', 'text/html, */*;q=0.8']) {
      const answer = renderer.answer(http, accept)
      expect(answer?.status).toBe(status)
      expect(answer?.headers).toEqual({ ...headers, 'content-type': 'application/json; charset=utf-8', 'cache-control': 'no-store' })
      expect(Object.keys(answer?.body ?? {})).toEqual(['error', 'error_description'])
      expect(answer?.body.error).toBe(error)
      expect(answer?.text).toBe(JSON.stringify(answer?.body))
    }
  })

  it.each(CASES)('%s: problem details when Accept names application/problem+json', (error, status, given, headers) => {
    const answer = renderer.answer(renderer.toHttpError(given), 'application/problem+json, application/json;q=0.9')
    expect(answer?.status).toBe(status)
    expect(answer?.headers).toEqual({ ...headers, 'content-type': 'application/problem+json; charset=utf-8', 'cache-control': 'no-store' })
    const body = JSON.parse(answer?.text ?? '') as Record<string, unknown>
    expect(body).toEqual({
      type: DOCS + error,
      title: expect.any(String),
      status,
      detail: body.error_description,
      error,
      error_description: expect.any(String),
    })
    expect(answer?.body).toEqual(body)
  })

  it("a forbidden answer's detail is the error's message; a 503's is the fixed text, never the upstream's", () => {
    const forbidden = renderer.answer(CASES[4][2], 'application/problem+json')
    expect(forbidden?.body).toMatchObject({
      detail: 'This resource requires membership in the group fc:adhoc:1',
      title: 'Group requirement not met',
    })
    expect(forbidden?.text).not.toContain('not_member')
    const unavailable = renderer.answer(renderer.toHttpError(CASES[5][2]), 'application/problem+json')
    expect(unavailable?.text).not.toContain('HTTP 500')
    expect(unavailable?.body).toMatchObject({ detail: 'The group service is temporarily unavailable; try again later' })
  })

  it('answers nothing for an error outside the contract, whatever the Accept', () => {
    expect(renderer.answer(new InvalidArgumentError('bug'), 'application/problem+json')).toBeUndefined()
    expect(renderer.answer(new Error('bug'), 'application/problem+json')).toBeUndefined()
  })
})
