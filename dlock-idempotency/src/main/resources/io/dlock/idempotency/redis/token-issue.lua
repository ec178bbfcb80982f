-- Issues a token: its hash key holds 'i:' .. the expiry in ms of the server's clock, and lives for
-- the time to live plus the retention, so that an expired token is reported as expired, not unknown.
-- KEYS[1] the token key; ARGV[1] time to live (ms); ARGV[2] retention (ms)
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local ttl = tonumber(ARGV[1])
redis.call('SET', KEYS[1], 'i:' .. string.format('%.0f', now + ttl), 'PX', ttl + tonumber(ARGV[2]))
return 1
