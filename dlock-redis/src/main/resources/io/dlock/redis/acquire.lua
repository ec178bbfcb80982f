-- Acquire, re-enter, or report the holder. One round trip, atomic.
-- KEYS[1] the lock key, KEYS[2] the name's fencing counter (no TTL, never goes backwards)
-- ARGV[1] the owner token, ARGV[2] the lease in milliseconds
-- The lock's value is "<hold count>|<waiters flag>|<owner>"; the waiters flag tells the release
-- whether anyone may be waiting, so that an uncontended release needs no PUBLISH.
-- Returns {1, fencing token, hold count} when granted, {0, holder's remaining ms} when held.
if redis.call('SET', KEYS[1], '1|0|' .. ARGV[1], 'NX', 'PX', ARGV[2]) then
  return {1, redis.call('INCR', KEYS[2]), 1}
end
local value = redis.call('GET', KEYS[1])
local count, waiters, owner = string.match(value, '^(%d+)|(%d)|(.*)$')
if owner == ARGV[1] then
  count = tonumber(count) + 1
  redis.call('SET', KEYS[1], count .. '|' .. waiters .. '|' .. owner, 'PX', ARGV[2])
  return {1, tonumber(redis.call('GET', KEYS[2])), count}
end
if owner and waiters == '0' then
  redis.call('SET', KEYS[1], count .. '|1|' .. owner, 'KEEPTTL')
end
return {0, redis.call('PTTL', KEYS[1])}
