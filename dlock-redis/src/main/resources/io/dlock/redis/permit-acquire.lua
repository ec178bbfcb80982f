-- Take permits of a semaphore, repeat a grant, or report the soonest lease end. One round trip,
-- atomic, O(holders).
-- KEYS[1] the leases (ZSET owner -> lease end, server ms), KEYS[2] the grants (HASH owner ->
-- "<count>|<token>|<since>|<last request id>|<holder>", and the field 'waiters' once a request
-- found no room), KEYS[3] the fencing counter (shared with the semaphores of its hash slot, no TTL,
-- never goes backwards), KEYS[4] this request's memory key
-- ARGV[1] the owner token, ARGV[2] the bound, ARGV[3] the permits asked for, ARGV[4] the lease in
-- milliseconds, ARGV[5] this request's id, ARGV[6] the holder's wall-clock time in epoch ms,
-- ARGV[7] the holder's description, ARGV[8] how long to remember this request, in milliseconds
-- Lease ends are the server's clock (TIME); the two keys live as long as the longest lease, so an
-- idle semaphore leaves nothing behind but its slot's counter.
-- A request sent twice (Lettuce re-sends after a reconnect) answers as its first run did. An owner
-- seen again is a grant owner's next attempt: it extends its lease (never shortening it) and gets
-- its token back, adding nothing.
-- Returns {1, fencing token} when granted, {0, ms until the soonest lease ends, or -1}.
local seen = redis.call('GET', KEYS[4])
if seen then
  return {1, tonumber(seen)}
end
local time = redis.call('TIME')
local now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
for _, owner in ipairs(redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', now)) do
  redis.call('HDEL', KEYS[2], owner)
end
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
local lease = tonumber(ARGV[4])
local function granted(token)
  local last = redis.call('ZRANGE', KEYS[1], -1, -1, 'WITHSCORES')
  local ttl = tonumber(last[2]) - now
  redis.call('PEXPIRE', KEYS[1], ttl)
  redis.call('PEXPIRE', KEYS[2], ttl)
  redis.call('SET', KEYS[4], token, 'PX', ARGV[8])
  return {1, tonumber(token)}
end
local mine = redis.call('HGET', KEYS[2], ARGV[1])
if mine then
  local count, token, since, request, holder = string.match(mine, '^(%d+)|(%d+)|(%d*)|([^|]*)|(.*)$')
  if now + lease > tonumber(redis.call('ZSCORE', KEYS[1], ARGV[1]) or '0') then
    redis.call('ZADD', KEYS[1], now + lease, ARGV[1])
  end
  redis.call('HSET', KEYS[2], ARGV[1], count .. '|' .. token .. '|' .. since .. '|' .. ARGV[5] .. '|' .. holder)
  return granted(token)
end
local held = 0
local grants = redis.call('HGETALL', KEYS[2])
for i = 1, #grants, 2 do
  if grants[i] ~= 'waiters' then
    held = held + tonumber(string.match(grants[i + 1], '^(%d+)|'))
  end
end
if held + tonumber(ARGV[3]) > tonumber(ARGV[2]) then
  local soonest = redis.call('ZRANGE', KEYS[1], 0, 0, 'WITHSCORES')
  if #soonest == 0 then
    return {0, -1}
  end
  redis.call('HSET', KEYS[2], 'waiters', '1') -- the keys exist: a lease holds them
  return {0, tonumber(soonest[2]) - now}
end
local token = redis.pcall('INCR', KEYS[3])
if type(token) == 'table' then
  return redis.error_reply('fencing counter ' .. KEYS[3] .. ' is not an integer: ' .. tostring(token.err))
end
redis.call('ZADD', KEYS[1], now + lease, ARGV[1])
redis.call('HSET', KEYS[2], ARGV[1], ARGV[3] .. '|' .. token .. '|' .. ARGV[6] .. '|' .. ARGV[5] .. '|' .. ARGV[7])
return granted(token)
