-- Completes or fails an in-progress record, only if the caller still owns it. Safe to repeat: a
-- record the same owner already moved to the same state (the first answer was lost, or Lettuce
-- re-sent the script after a reconnect) is answered 1 and left as it is.
-- KEYS[1] the record; ARGV[1] owner; ARGV[2] new state (c or f); ARGV[3] result (base64, or empty);
-- ARGV[4] retention (ms)
if redis.call('HGET', KEYS[1], 'o') ~= ARGV[1] then
  return 0
end
local state = redis.call('HGET', KEYS[1], 's')
if state == ARGV[2] then
  return 1
end
if state ~= 'p' then
  return 0
end
redis.call('HSET', KEYS[1], 's', ARGV[2], 'r', ARGV[3])
redis.call('PEXPIRE', KEYS[1], ARGV[4])
return 1
