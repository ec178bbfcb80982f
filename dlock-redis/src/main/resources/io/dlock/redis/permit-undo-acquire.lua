-- Undo an acquisition whose answer the client never received: take back the grant of owner ARGV[1]
-- if acquire request ARGV[2] was the last to touch it (a later attempt of the same acquisition,
-- which the caller may have been told about, is left alone). Sent on the same connection after the
-- acquire, so it runs after it whenever the acquire ran at all.
-- KEYS[1] the leases, KEYS[2] the grants (see permit-acquire.lua); ARGV[3] the release channel
-- Returns 1 when a grant was taken back, 0 when there was nothing of this request's to undo.
local grant = redis.call('HGET', KEYS[2], ARGV[1])
if not grant or string.match(grant, '^%d+|%d+|%d*|([^|]*)|') ~= ARGV[2] then
  return 0
end
redis.call('ZREM', KEYS[1], ARGV[1])
redis.call('HDEL', KEYS[2], ARGV[1])
if redis.call('HDEL', KEYS[2], 'waiters') == 1 then
  redis.call('PUBLISH', ARGV[3], 'released')
end
if redis.call('ZCARD', KEYS[1]) == 0 then
  redis.call('DEL', KEYS[2])
end
return 1
