-- Completes or fails an in-progress record, only if the caller's attempt still owns it. Safe to
-- repeat: a record the same attempt already moved to the same state (the first answer was lost, or
-- Lettuce re-sent the script after a reconnect) is answered 1 and left as it is.
-- KEYS[1] the record; ARGV[1] owner; ARGV[2] new state (c or f); ARGV[3] result (base64, or empty);
-- ARGV[4] retention (ms); ARGV[5] attempt ('' or absent for a claim without one)
local held = redis.call('HMGET', KEYS[1], 'o', 'a', 's')
if held[1] ~= ARGV[1] or (held[2] or '') ~= (ARGV[5] or '') then
  return 0
end
local state = held[3]
if state == ARGV[2] then
  return 1
end
if state ~= 'p' then
  return 0
end
redis.call('HSET', KEYS[1], 's', ARGV[2], 'r', ARGV[3])
redis.call('PEXPIRE', KEYS[1], ARGV[4])
return 1
