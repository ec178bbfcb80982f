-- Delete the live grant with fencing token ARGV[1] whatever its owner (an administrator's break) and
-- wake the waiters. O(holders).
-- KEYS[1] the leases, KEYS[2] the grants (see permit-acquire.lua); ARGV[2] the release channel
-- Returns {grant value, remaining ms} as it was, or {} if no live grant has that token.
local time = redis.call('TIME')
local now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
local grants = redis.call('HGETALL', KEYS[2])
for i = 1, #grants, 2 do
  local owner, grant = grants[i], grants[i + 1]
  if owner ~= 'waiters' and string.match(grant, '^%d+|(%d+)|') == ARGV[1] then
    local ends = tonumber(redis.call('ZSCORE', KEYS[1], owner) or '0')
    if ends <= now then
      return {}
    end
    redis.call('ZREM', KEYS[1], owner)
    redis.call('HDEL', KEYS[2], owner, 'waiters')
    redis.call('PUBLISH', ARGV[2], 'released')
    if redis.call('ZCARD', KEYS[1]) == 0 then
      redis.call('DEL', KEYS[2])
    end
    return {grant, ends - now}
  end
end
return {}
