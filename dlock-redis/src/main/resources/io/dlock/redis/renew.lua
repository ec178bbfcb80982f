-- Renew a batch of leases, each only where its owner still holds the lock. One round trip.
-- KEYS[i] a lock key; ARGV[2i-1] its owner token, ARGV[2i] its lease in milliseconds
-- Returns the 1-based positions of the leases that are gone (deleted or owned by another).
local gone = {}
for i = 1, #KEYS do
  local value = redis.call('GET', KEYS[i])
  local owner = value and string.match(value, '^%d+|%d|(.*)$')
  if owner == ARGV[2 * i - 1] then
    redis.call('PEXPIRE', KEYS[i], ARGV[2 * i])
  else
    gone[#gone + 1] = i
  end
end
return gone
