-- Acquire, re-enter, or report the holder. One round trip, atomic.
-- KEYS[1] the lock key, KEYS[2] the fencing counter this name draws from (shared with other names
-- of its hash slot, no TTL, never goes backwards), KEYS[3] this request's memory key
-- ARGV[1] the owner token, ARGV[2] the lease in milliseconds, ARGV[3] this request's id,
-- ARGV[4] the holder's wall-clock time in epoch milliseconds, ARGV[5] the holder's description,
-- ARGV[6] how long to remember this request, in milliseconds, ARGV[7] '1' if the owner counts its
-- holds (an owner id), '0' if it holds once (a grant owner)
-- The lock's value is
--   "<holds>|<waiters flag>|<fencing token>|<last request id>|<since>|<holder>|<owner>".
--   The waiters flag tells the release whether anyone may wait, so that an uncontended release
--   needs no PUBLISH. The last request id lets undo-acquire.lua take back exactly this request.
-- A request that the client library sent twice (Lettuce re-sends commands that were in flight when
-- a connection dropped, within their command timeout) is recognised by its memory key, which
-- outlives any re-send: the second run changes nothing and answers as the first did, even when
-- other requests changed the lock in between.
-- An owner that counts its holds (ARGV[7] = '1', an owner id) re-enters here; a grant owner holds
-- once, and seeing it again can only be a replay.
-- Returns {1, fencing token, holds} when granted, {0, holder's remaining ms} when held.
local function pack(holds, waiters, token, request, since, holder, owner)
  return holds .. '|' .. waiters .. '|' .. token .. '|' .. request .. '|' .. since .. '|' .. holder .. '|' .. owner
end
local seen = redis.call('GET', KEYS[3])
if seen then
  local token, holds = string.match(seen, '^(%d+)|(%d+)$')
  return {1, tonumber(token), tonumber(holds)}
end
if redis.call('EXISTS', KEYS[1]) == 0 then
  local token = redis.pcall('INCR', KEYS[2])
  if type(token) == 'table' then
    return redis.error_reply('fencing counter ' .. KEYS[2] .. ' is not an integer: ' .. tostring(token.err))
  end
  redis.call('SET', KEYS[1], pack(1, 0, token, ARGV[3], ARGV[4], ARGV[5], ARGV[1]), 'PX', ARGV[2])
  redis.call('SET', KEYS[3], token .. '|1', 'PX', ARGV[6])
  return {1, token, 1}
end
local value = redis.call('GET', KEYS[1])
local holds, waiters, token, request, since, holder, owner =
  string.match(value, '^(%d+)|(%d)|(%d+)|([^|]*)|(%d*)|([^|]*)|(.*)$')
if owner == ARGV[1] then
  holds = tonumber(holds)
  if request ~= ARGV[3] and ARGV[7] == '1' then
    holds = holds + 1
  end
  -- Never shorten the expiry: another hold of this owner may count on a longer lease.
  local expiry = math.max(redis.call('PTTL', KEYS[1]), tonumber(ARGV[2]))
  redis.call('SET', KEYS[1], pack(holds, waiters, token, ARGV[3], since, holder, owner), 'PX', expiry)
  redis.call('SET', KEYS[3], token .. '|' .. holds, 'PX', ARGV[6])
  return {1, tonumber(token), holds}
end
if owner and waiters == '0' then
  redis.call('SET', KEYS[1], pack(holds, 1, token, request, since, holder, owner), 'KEEPTTL')
end
return {0, redis.call('PTTL', KEYS[1])}
