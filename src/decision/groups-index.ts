/**
 * The user's `me/groups` answer as decisions read it: the list, with an index by group id
 * for long lists (a short list is searched directly: a Map per cached list would cost more
 * memory than it saves time).
 *
 * @module
 */
import type { GroupWithMembership } from '../types.js'
import { nextChangeAfter } from './membership.js'

/**
 * A `me/groups` answer with its index. Built once when the answer is cached.
 */
export interface GroupsIndex {
  readonly list: readonly GroupWithMembership[]
  readonly byId: ReadonlyMap<string, GroupWithMembership> | undefined
}

/** Lists longer than this get a Map index. */
const INDEX_FROM = 16

/**
 * Builds a {@link GroupsIndex}; the first entry wins when an id is listed twice.
 */
export function indexGroups(list: readonly GroupWithMembership[]): GroupsIndex {
  if (list.length <= INDEX_FROM) return { list, byId: undefined }
  const byId = new Map<string, GroupWithMembership>()
  for (const g of list) if (!byId.has(g.id)) byId.set(g.id, g)
  return { list, byId }
}

/**
 * The listed group with id `groupId`, if any.
 */
export function findListed(index: GroupsIndex, groupId: string): GroupWithMembership | undefined {
  if (index.byId !== undefined) return index.byId.get(groupId)
  for (const g of index.list) if (g.id === groupId) return g
  return undefined
}

/**
 * The first instant after `at` at which a membership or group of the list changes activity
 * (`Infinity` when none will): until then, every rule that reads the list reads it the same way.
 */
export function listChangeAfter(index: GroupsIndex, at: number): number {
  let next = Infinity
  for (const g of index.list) {
    next = Math.min(next, nextChangeAfter(g, at), nextChangeAfter(g.membership, at))
  }
  return next
}
