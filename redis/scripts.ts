/**
 * The Lua scripts of the shared tier. Each touches only keys of one token (one hash tag, so
 * one Redis Cluster slot) and runs atomically.
 *
 * @module
 */

/**
 * Reads an entry with its remaining lifetime in one step (so the lifetime belongs to the
 * value read). KEYS: entry, lock. Returns `{value, pttl}`, or `{'', lockExists}` when the
 * entry is absent (a waiter stops waiting once the lock is gone).
 */
export const READ_SCRIPT = `
local v = redis.call('GET', KEYS[1])
if v then return {v, redis.call('PTTL', KEYS[1])} end
return {'', redis.call('EXISTS', KEYS[2])}
`

/**
 * Writes a membership entry and records it in the token's index set, which bounds a token's
 * membership keys: when the set is full, names of expired entries are pruned; if it is
 * still full the entry is not written (returns 0). The set lives as long as its longest
 * entry. KEYS: entry, index. ARGV: value, ttl ms, max entries.
 */
export const WRITE_MEMBERSHIP_SCRIPT = `
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
return 1
`

/**
 * Drops every entry of one token (the fixed ones, the membership entries its index names,
 * the index) and publishes the invalidation. KEYS: groups, groupsAll, invalid, index.
 * ARGV: channel, message.
 */
export const DROP_TOKEN_SCRIPT = `
for _, k in ipairs(redis.call('SMEMBERS', KEYS[4])) do redis.call('UNLINK', k) end
redis.call('UNLINK', KEYS[1], KEYS[2], KEYS[3], KEYS[4])
return redis.call('PUBLISH', ARGV[1], ARGV[2])
`

/** Releases a lock only if this instance still owns it. KEYS: lock. ARGV: owner. */
export const RELEASE_LOCK_SCRIPT = `
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0
`
