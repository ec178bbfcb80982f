-- The live grants of a semaphore (lease not ended on the server's clock), read in one snapshot.
-- KEYS[1] the leases, KEYS[2] the grants (see permit-acquire.lua)
-- Returns {grant value, remaining ms, ...}, in no particular order.
local time = redis.call('TIME')
local now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
local live = redis.call('ZRANGEBYSCORE', KEYS[1], '(' .. now, '+inf', 'WITHSCORES')
local result = {}
for i = 1, #live, 2 do
  local grant = redis.call('HGET', KEYS[2], live[i])
  if grant then
    result[#result + 1] = grant
    result[#result + 1] = tonumber(live[i + 1]) - now
  end
end
return result
