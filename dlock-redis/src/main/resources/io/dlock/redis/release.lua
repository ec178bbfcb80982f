-- Release one hold, only if ARGV[1] owns the grant with fencing token ARGV[4]. One round trip,
-- atomic.
-- KEYS[1] the lock key; ARGV[1] the owner token, ARGV[2] the release channel, ARGV[3] request id,
-- ARGV[4] the grant's fencing token
-- The token matters for owner ids: one owner id can be granted the lock again (by another thread or
-- process) after an earlier grant expired behind its holders' backs; the earlier grant's late
-- release must not take a hold of the newer one.
-- Returns 1 when the lock was deleted, 2 when the owner still holds it (holds > 1),
-- 0 when the owner did not hold that grant (expired, someone else's, or a newer grant): then
-- nothing is changed.
local value = redis.call('GET', KEYS[1])
if not value then
  return 0
end
local holds, waiters, token, request, rest, owner =
  string.match(value, '^(%d+)|(%d)|(%d+)|([^|]*)|(%d*|[^|]*)|(.*)$')
if owner ~= ARGV[1] or token ~= ARGV[4] then
  return 0
end
holds = tonumber(holds)
if request == ARGV[3] then
  return 2 -- this very release, replayed after a reconnect: it already took its hold away
end
if holds > 1 then
  redis.call('SET', KEYS[1], (holds - 1) .. '|' .. waiters .. '|' .. token .. '|' .. ARGV[3] .. '|' .. rest .. '|' .. owner, 'KEEPTTL')
  return 2
end
redis.call('DEL', KEYS[1])
if waiters == '1' then
  redis.call('PUBLISH', ARGV[2], 'released')
end
return 1
