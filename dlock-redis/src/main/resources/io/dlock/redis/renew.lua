-- Renew a batch of leases, each only where its owner still holds the lock. One round trip.
-- KEYS[i] a lock key; ARGV[2i-1] its owner token, ARGV[2i] its lease in milliseconds
-- A lock held more than once (an owner id re-entered, maybe from several processes) is never
-- shortened: one holder's shorter lease must not cut another's longer one.
-- Returns the 1-based positions of the leases that are gone (deleted or owned by another).
local gone = {}
for i = 1, #KEYS do
  local value = redis.call('GET', KEYS[i])
  local holds, owner
  if value then
    holds, owner = string.match(value, '^(%d+)|%d|%d+|[^|]*|%d*|[^|]*|(.*)$')
  end
  if owner == ARGV[2 * i - 1] then
    local lease = tonumber(ARGV[2 * i])
    if holds == '1' or redis.call('PTTL', KEYS[i]) < lease then
      redis.call('PEXPIRE', KEYS[i], lease)
    end
  else
    gone[#gone + 1] = i
  end
end
return gone
