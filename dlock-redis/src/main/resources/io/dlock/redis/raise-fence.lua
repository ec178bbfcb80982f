-- Redlock: after a majority granted, make this node agree on the combined fencing token.
-- KEYS[1] the lock key, KEYS[2] the node's fencing counter for this name (shared with other names
-- of its hash slot); ARGV[1] owner, ARGV[2] the token
-- The counter becomes at least the token, so that the next grant on any majority (which shares a
-- node with this one) counts past it; the lock's stored token becomes the combined one, and only
-- ever grows: a raise that arrives late, from an earlier grant of the same owner id, must not lower
-- a newer grant's token.
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
if tonumber(old) > token then
  return 0 -- a newer grant's token is stored here: this raise is late, and not for it
end
if tonumber(old) < token then
  redis.call('SET', KEYS[1], holds .. '|' .. waiters .. '|' .. ARGV[2] .. '|' .. rest, 'KEEPTTL')
end
return 1
