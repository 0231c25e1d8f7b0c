/**
 * Controls for the coalescing figure: what hand-written code does with 1,000 concurrent
 * requests for one token. `naive` asks the group service on every request; `cacheOnly`
 * caches answers but has no single-flight, so concurrent misses each make their own call.
 *
 * @module
 */
import { createHash } from 'node:crypto'
import type { RequestHandler } from 'express'
import { createGroupsClient, extractBearerToken, type GroupsClient, type GroupWithMembership, type Membership } from '../../src/index.js'

function decide(groups: readonly GroupWithMembership[], membership: () => Promise<Membership | null>, groupId: string): Promise<boolean> {
  if (groups.some((g) => g.id === groupId && g.membership.active !== false)) return Promise.resolve(true)
  return membership().then((m) => m !== null && m.active !== false)
}

function handler(
  lookups: (token: string) => { groups(): Promise<readonly GroupWithMembership[]>; membership(): Promise<Membership | null> },
  groupId: string,
): RequestHandler {
  return (req, res, next) => {
    let token: string
    try {
      token = extractBearerToken(req.headers.authorization)
    } catch {
      res.status(401).end()
      return
    }
    const bound = lookups(token)
    bound
      .groups()
      .then((groups) => decide(groups, () => bound.membership(), groupId))
      .then(
        (allowed) => (allowed ? next() : void res.status(403).json({ error: 'forbidden' })),
        () => void res.status(503).json({ error: 'temporarily_unavailable' }),
      )
  }
}

/** The two controls, over one plain groups client. */
export function createNaiveGuards(
  baseUrl: string,
  groupId: string,
): { naive: RequestHandler; cacheOnly: RequestHandler; client: GroupsClient } {
  const client = createGroupsClient({ baseUrl })
  const cache = new Map<string, unknown>()
  const digest = (token: string): string => createHash('sha256').update(token).digest('base64url')
  async function cached<T>(key: string, load: () => Promise<T>): Promise<T> {
    if (cache.has(key)) return cache.get(key) as T
    const value = await load()
    cache.set(key, value)
    return value
  }
  return {
    client,
    naive: handler((token) => ({ groups: () => client.myGroups(token), membership: () => client.myMembership(token, groupId) }), groupId),
    cacheOnly: handler(
      (token) => ({
        groups: () => cached(`${digest(token)} g`, () => client.myGroups(token)),
        membership: () => cached(`${digest(token)} m`, () => client.myMembership(token, groupId)),
      }),
      groupId,
    ),
  }
}
