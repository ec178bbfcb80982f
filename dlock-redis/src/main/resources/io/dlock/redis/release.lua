-- Release one hold, only if ARGV[1] owns the lock. One round trip, atomic.
-- KEYS[1] the lock key; ARGV[1] the owner token, ARGV[2] the release channel
-- Returns 1 when the lock was deleted, 2 when the owner still holds it (hold count > 1),
-- 0 when the owner did not hold it (expired or someone else's): then nothing is changed.
local value = redis.call('GET', KEYS[1])
if not value then
  return 0
end
local count, waiters, owner = string.match(value, '^(%d+)|(%d)|(.*)$')
if owner ~= ARGV[1] then
  return 0
end
count = tonumber(count)
if count > 1 then
  redis.call('SET', KEYS[1], (count - 1) .. '|' .. waiters .. '|' .. owner, 'KEEPTTL')
  return 2
end
redis.call('DEL', KEYS[1])
if waiters == '1' then
  redis.call('PUBLISH', ARGV[2], 'released')
end
return 1
