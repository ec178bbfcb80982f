-- Consumes a token in one atomic step: a valid token is replaced by a 'c:<time>|<request>' tombstone
-- kept for the retention, naming the request that consumed it. Safe to repeat: the same request
-- run again (its answer was lost, or Lettuce re-sent the script after a reconnect) is answered
-- 'consumed' again, any other 'already-consumed'. Answers 'consumed', 'already-consumed', 'expired'
-- or 'unknown'.
-- KEYS[1] the token key; ARGV[1] retention of the tombstone (ms); ARGV[2] the request id's hash
local value = redis.call('GET', KEYS[1])
if not value then
  return 'unknown'
end
local kind = string.sub(value, 1, 2)
if kind == 'c:' then
  -- Tombstones written before request ids ('c:<time>') name no request and match none.
  if string.match(value, '^c:%d+|(.*)$') == ARGV[2] then
    return 'consumed'
  end
  return 'already-consumed'
end
if kind ~= 'i:' then
  return 'unknown'
end
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
if now >= tonumber(string.sub(value, 3)) then
  return 'expired'
end
redis.call('SET', KEYS[1], 'c:' .. string.format('%.0f', now) .. '|' .. ARGV[2], 'PX', tonumber(ARGV[1]))
return 'consumed'
