-- Renew a batch of leases, each only where its owner still holds the grant with its fencing token.
-- One round trip.
-- KEYS[i] a lock key; ARGV[3i-2] its owner token, ARGV[3i-1] the grant's fencing token,
-- ARGV[3i] its lease in milliseconds
-- The token keeps a lost grant of an owner id from extending a newer grant of the same owner id.
-- A lock held more than once (an owner id re-entered, maybe from several processes) is never
-- shortened: one holder's shorter lease must not cut another's longer one.
-- Returns the 1-based positions of the leases that are gone (deleted, owned by another, or a
-- newer grant).
local gone = {}
for i = 1, #KEYS do
  local value = redis.call('GET', KEYS[i])
  local holds, token, owner
  if value then
    holds, token, owner = string.match(value, '^(%d+)|%d|(%d+)|[^|]*|%d*|[^|]*|(.*)$')
  end
  if owner == ARGV[3 * i - 2] and token == ARGV[3 * i - 1] then
    local lease = tonumber(ARGV[3 * i])
    if holds == '1' or redis.call('PTTL', KEYS[i]) < lease then
      redis.call('PEXPIRE', KEYS[i], lease)
    end
  else
    gone[#gone + 1] = i
  end
end
return gone
