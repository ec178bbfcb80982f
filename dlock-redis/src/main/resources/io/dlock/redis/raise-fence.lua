-- Redlock: after a majority granted, make this node agree on the combined fencing token.
-- KEYS[1] the lock key, KEYS[2] the node's fencing counter; ARGV[1] owner, ARGV[2] the token
-- The counter becomes at least the token, so that the next grant on any majority (which shares a
-- node with this one) counts past it; the lock's stored token becomes the combined one.
-- Returns 1 if this owner still holds the lock here, 0 otherwise.
local token = tonumber(ARGV[2])
local current = tonumber(redis.call('GET', KEYS[2]) or '0') or 0
if current < token then
  redis.call('SET', KEYS[2], ARGV[2])
end
local value = redis.call('GET', KEYS[1])
if not value then
  return 0
end
local holds, waiters, old, rest = string.match(value, '^(%d+)|(%d)|(%d+)|(.*)$')
local owner = rest and string.match(rest, '^[^|]*|%d*|[^|]*|(.*)$')
if owner ~= ARGV[1] then
  return 0
end
redis.call('SET', KEYS[1], holds .. '|' .. waiters .. '|' .. ARGV[2] .. '|' .. rest, 'KEEPTTL')
return 1
