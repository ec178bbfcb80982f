-- Release one hold, only if ARGV[1] owns the grant with fencing token ARGV[4]. One round trip,
-- atomic.
-- KEYS[1] the lock key, KEYS[2] this request's memory key; ARGV[1] the owner token, ARGV[2] the
-- release channel, ARGV[3] request id, ARGV[4] the grant's fencing token, ARGV[5] how long to
-- remember this request, in milliseconds
-- The token matters for owner ids: one owner id can be granted the lock again (by another thread or
-- process) after an earlier grant expired behind its holders' backs; the earlier grant's late
-- release must not take a hold of the newer one.
-- A release that the client library sent twice (re-sent after a reconnect) answers as the first
-- run did and changes nothing, even if other holds of the same owner id changed the lock between
-- the two runs, or the first run deleted it.
-- Returns 1 when the lock was deleted, 2 when the owner still holds it (holds > 1),
-- 0 when the owner did not hold that grant (expired, someone else's, or a newer grant): then
-- nothing is changed.
local seen = redis.call('GET', KEYS[2])
if seen then
  return tonumber(seen)
end
local function answer(code)
  redis.call('SET', KEYS[2], code, 'PX', ARGV[5])
  return code
end
local value = redis.call('GET', KEYS[1])
if not value then
  return answer(0)
end
local holds, waiters, token, request, rest, owner =
  string.match(value, '^(%d+)|(%d)|(%d+)|([^|]*)|(%d*|[^|]*)|(.*)$')
if owner ~= ARGV[1] or token ~= ARGV[4] then
  return answer(0)
end
holds = tonumber(holds)
if holds > 1 then
  redis.call('SET', KEYS[1], (holds - 1) .. '|' .. waiters .. '|' .. token .. '|' .. ARGV[3] .. '|' .. rest .. '|' .. owner, 'KEEPTTL')
  return answer(2)
end
redis.call('DEL', KEYS[1])
if waiters == '1' then
  redis.call('PUBLISH', ARGV[2], 'released')
end
return answer(1)
