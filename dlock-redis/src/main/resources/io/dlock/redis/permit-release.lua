-- Give a grant's permits back, only if ARGV[1] holds the grant with fencing token ARGV[2] and its
-- lease has not ended (server's clock). One round trip, atomic.
-- KEYS[1] the leases, KEYS[2] the grants (see permit-acquire.lua), KEYS[3] this request's memory
-- key; ARGV[1] the owner token, ARGV[2] the grant's fencing token, ARGV[3] the release channel,
-- ARGV[4] how long to remember this request, in milliseconds
-- A release sent twice answers as its first run did. Waiters are woken only if one found no room
-- since the last wake-up (the 'waiters' field): an uncontended release needs no PUBLISH.
-- Returns 1 when released, 0 when the owner did not hold that grant (nothing else changes).
local seen = redis.call('GET', KEYS[3])
if seen then
  return tonumber(seen)
end
local function answer(code)
  redis.call('SET', KEYS[3], code, 'PX', ARGV[4])
  return code
end
local grant = redis.call('HGET', KEYS[2], ARGV[1])
if not grant or string.match(grant, '^%d+|(%d+)|') ~= ARGV[2] then
  return answer(0)
end
local time = redis.call('TIME')
local now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
local ends = tonumber(redis.call('ZSCORE', KEYS[1], ARGV[1]) or '0')
redis.call('ZREM', KEYS[1], ARGV[1])
redis.call('HDEL', KEYS[2], ARGV[1])
if ends <= now then
  return answer(0) -- the lease ended: its permits were free already
end
if redis.call('HDEL', KEYS[2], 'waiters') == 1 then
  redis.call('PUBLISH', ARGV[3], 'released')
end
if redis.call('ZCARD', KEYS[1]) == 0 then
  redis.call('DEL', KEYS[2])
end
return answer(1)
