/**
 * The Lua scripts of the shared tier. Each touches only keys of one token (one hash tag, so
 * one Redis Cluster slot) and runs atomically.
 *
 * A token's generation (key `v`) is a random nonce that every value of the token is bound
 * to (`value-codec.ts`). A read returns it, creating it when the token has none; a write
 * names the generation its lookup read before asking the group service and is refused when
 * the token has another one now; dropping the token's entries drops it. So an answer
 * fetched before an invalidation is never written after it, and a value written before
 * it, restored later, does not authenticate under the generation that follows.
 *
 * @module
 */

/**
 * Reads an entry with its remaining lifetime and the token's generation in one step (so
 * both belong to the value read). Creates the generation (ARGV[1]) when there is none, and
 * keeps it at least ARGV[2] ms, the time a lookup may take between its read and its write.
 * KEYS: entry, lock, generation. Returns `{value, pttl, generation}`, or
 * `{'', lockExists, generation}` when the entry is absent (a waiter stops waiting once the
 * lock is gone).
 */
export const READ_SCRIPT = `
local g = redis.call('GET', KEYS[3])
if not g then
  g = ARGV[1]
  redis.call('SET', KEYS[3], g, 'PX', ARGV[2])
elseif redis.call('PTTL', KEYS[3]) < tonumber(ARGV[2]) then
  redis.call('PEXPIRE', KEYS[3], ARGV[2])
end
local v = redis.call('GET', KEYS[1])
if v then return {v, redis.call('PTTL', KEYS[1]), g} end
return {'', redis.call('EXISTS', KEYS[2]), g}
`

/**
 * The token's generation, created as in {@link READ_SCRIPT} when there is none: for a
 * write whose key object was never read. KEYS: generation. ARGV: new generation, ms.
 */
export const GENERATION_SCRIPT = `
local g = redis.call('GET', KEYS[1])
if not g then
  g = ARGV[1]
  redis.call('SET', KEYS[1], g, 'PX', ARGV[2])
end
return g
`

/**
 * Writes an entry (me/groups, showAll) if the token's generation is still ARGV[3], and
 * keeps the generation at least as long as the entry. KEYS: entry, generation. ARGV: value,
 * ttl ms, generation. Returns 1, or 0 when the generation changed (nothing written).
 */
export const WRITE_SCRIPT = `
if redis.call('GET', KEYS[2]) ~= ARGV[3] then return 0 end
redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
if redis.call('PTTL', KEYS[2]) < tonumber(ARGV[2]) then redis.call('PEXPIRE', KEYS[2], ARGV[2]) end
return 1
`

/**
 * Writes a membership entry as {@link WRITE_SCRIPT} does, and records it in the token's
 * index set, which bounds a token's membership keys: when the set is full, names of
 * expired entries are pruned; if it is still full the entry is not written (returns 0).
 * The set lives as long as its longest entry. KEYS: entry, index, generation. ARGV: value,
 * ttl ms, max entries, generation.
 */
export const WRITE_MEMBERSHIP_SCRIPT = `
if redis.call('GET', KEYS[3]) ~= ARGV[4] then return 0 end
if redis.call('SISMEMBER', KEYS[2], KEYS[1]) == 0 then
  local max = tonumber(ARGV[3])
  if redis.call('SCARD', KEYS[2]) >= max then
    for _, k in ipairs(redis.call('SMEMBERS', KEYS[2])) do
      if redis.call('EXISTS', k) == 0 then redis.call('SREM', KEYS[2], k) end
    end
    if redis.call('SCARD', KEYS[2]) >= max then return 0 end
  end
  redis.call('SADD', KEYS[2], KEYS[1])
end
redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
if redis.call('PTTL', KEYS[2]) < tonumber(ARGV[2]) then redis.call('PEXPIRE', KEYS[2], ARGV[2]) end
if redis.call('PTTL', KEYS[3]) < tonumber(ARGV[2]) then redis.call('PEXPIRE', KEYS[3], ARGV[2]) end
return 1
`

/**
 * Drops every entry of one token (the fixed ones, the membership entries its index names,
 * the index, the generation) and publishes the invalidation. KEYS: groups, groupsAll,
 * invalid, index, generation. ARGV: channel, message.
 */
export const DROP_TOKEN_SCRIPT = `
for _, k in ipairs(redis.call('SMEMBERS', KEYS[4])) do redis.call('UNLINK', k) end
redis.call('UNLINK', KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5])
return redis.call('PUBLISH', ARGV[1], ARGV[2])
`

/** Releases a lock only if this instance still owns it. KEYS: lock. ARGV: owner. */
export const RELEASE_LOCK_SCRIPT = `
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0
`
