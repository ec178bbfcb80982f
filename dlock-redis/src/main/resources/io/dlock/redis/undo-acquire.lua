-- Undo an acquisition whose answer the client never received (a command timeout, a reset
-- connection): take back the hold that acquire request ARGV[2] added, if and only if that request
-- was the last to change the lock. Sent on the same connection after the acquire, so it runs after
-- it whenever the acquire ran at all.
-- KEYS[1] the lock key; ARGV[1] the owner token, ARGV[2] the acquire's request id,
-- ARGV[3] the release channel, ARGV[4] this request's id
-- A lock changed since (another hold of an owner id, a release) is left alone: the unknown hold
-- then ends with its lease, which is never longer than the caller asked for.
-- Returns 1 when a hold was taken back, 0 when there was nothing of this request's to undo.
local value = redis.call('GET', KEYS[1])
if not value then
  return 0
end
local holds, waiters, token, request, rest, owner =
  string.match(value, '^(%d+)|(%d)|(%d+)|([^|]*)|(%d*|[^|]*)|(.*)$')
if owner ~= ARGV[1] or request ~= ARGV[2] then
  return 0
end
holds = tonumber(holds)
if holds > 1 then
  redis.call('SET', KEYS[1], (holds - 1) .. '|' .. waiters .. '|' .. token .. '|' .. ARGV[4] .. '|' .. rest .. '|' .. owner, 'KEEPTTL')
  return 1
end
redis.call('DEL', KEYS[1])
if waiters == '1' then
  redis.call('PUBLISH', ARGV[3], 'released')
end
return 1
