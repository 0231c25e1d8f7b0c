/**
 * An in-memory group service behind an undici MockAgent, for core tests that are about
 * response semantics only. Timing and HTTP behaviour are tested against real servers (the
 * emulator) instead.
 */
import { MockAgent } from 'undici'
import type { Membership } from '../../src/types.js'

export const ORIGIN = 'https://groups.test'
export const BASE_URL = `${ORIGIN}/groups`

export interface MockGroup {
  id: string
  displayName?: string
  type?: string
  membership: Membership
}

export interface MockUser {
  /** What me/groups lists (may be partial). */
  listed: MockGroup[]
  /** Extra memberships me/groups/{id} knows although me/groups leaves them out. */
  hidden?: MockGroup[]
}

export interface MockReply {
  status: number
  body?: string
  headers?: Record<string, string>
}

export interface MockUpstream {
  agent: MockAgent
  users: Map<string, MockUser>
  /** Calls per request path (pathname + search). */
  calls: Map<string, number>
  total(): number
  /** When set, answers every request with this instead of the model. */
  override: ((path: string) => MockReply | undefined) | undefined
  close(): Promise<void>
}

const JSON_HEADERS = { 'content-type': 'application/json; charset=utf-8' }

export function createMockUpstream(): MockUpstream {
  const agent = new MockAgent()
  agent.disableNetConnect()
  const upstream: MockUpstream = {
    agent,
    users: new Map(),
    calls: new Map(),
    total: () => [...upstream.calls.values()].reduce((a, b) => a + b, 0),
    override: undefined,
    close: () => agent.close(),
  }
  const pool = agent.get(ORIGIN)
  pool
    .intercept({ path: () => true, method: 'GET' })
    .reply((request) => {
      const path = request.path
      upstream.calls.set(path, (upstream.calls.get(path) ?? 0) + 1)
      const forced = upstream.override?.(path)
      if (forced !== undefined) {
        return { statusCode: forced.status, data: forced.body ?? '', responseOptions: { headers: { ...JSON_HEADERS, ...forced.headers } } }
      }
      const headers = request.headers as Record<string, string>
      const auth = headers.authorization ?? headers.Authorization ?? ''
      const user = upstream.users.get(auth.replace(/^Bearer /, ''))
      if (user === undefined) {
        return {
          statusCode: 401,
          data: '{"message":"Token is invalid"}',
          responseOptions: { headers: { ...JSON_HEADERS, 'www-authenticate': 'Bearer realm="test", error="invalid_token"' } },
        }
      }
      const url = new URL(path, ORIGIN)
      if (url.pathname === '/groups/me/groups') {
        const list = url.searchParams.get('showAll') === 'true' ? [...user.listed, ...(user.hidden ?? [])] : user.listed
        return {
          statusCode: 200,
          data: JSON.stringify(list.map((g) => ({ displayName: g.id, ...g }))),
          responseOptions: { headers: JSON_HEADERS },
        }
      }
      const match = /^\/groups\/me\/groups\/([^/]+)$/.exec(url.pathname)
      if (match !== null) {
        const id = decodeURIComponent(match[1] ?? '')
        const found = [...user.listed, ...(user.hidden ?? [])].find((g) => g.id === id)
        return found === undefined
          ? { statusCode: 404, data: '{"message":"Requested resource was not found"}', responseOptions: { headers: JSON_HEADERS } }
          : { statusCode: 200, data: JSON.stringify(found.membership), responseOptions: { headers: JSON_HEADERS } }
      }
      return { statusCode: 404, data: '{"message":"Requested resource was not found"}', responseOptions: { headers: JSON_HEADERS } }
    })
    .persist()
  return upstream
}
