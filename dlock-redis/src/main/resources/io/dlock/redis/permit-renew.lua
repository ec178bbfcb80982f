-- Renew a batch of permit leases, each only where its owner still holds the grant with its fencing
-- token and the lease has not ended (server's clock). One round trip.
-- KEYS[2i-1] a semaphore's leases, KEYS[2i] its grants (see permit-acquire.lua); ARGV[3i-2] the
-- owner token, ARGV[3i-1] the grant's fencing token, ARGV[3i] the lease in milliseconds
-- A grant has one holder, so its lease is set as asked. The keys then live as long as the longest
-- lease of their semaphore.
-- Returns the 1-based positions of the leases that are gone.
local time = redis.call('TIME')
local now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
local gone = {}
for i = 1, #KEYS / 2 do
  local leases, grants, owner = KEYS[2 * i - 1], KEYS[2 * i], ARGV[3 * i - 2]
  local grant = redis.call('HGET', grants, owner)
  local ends = tonumber(redis.call('ZSCORE', leases, owner) or '0')
  if grant and ends > now and string.match(grant, '^%d+|(%d+)|') == ARGV[3 * i - 1] then
    redis.call('ZADD', leases, now + tonumber(ARGV[3 * i]), owner)
    local ttl = tonumber(redis.call('ZRANGE', leases, -1, -1, 'WITHSCORES')[2]) - now
    redis.call('PEXPIRE', leases, ttl)
    redis.call('PEXPIRE', grants, ttl)
  else
    gone[#gone + 1] = i
  end
end
return gone
