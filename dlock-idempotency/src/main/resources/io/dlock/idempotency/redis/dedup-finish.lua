-- Completes or fails an in-progress record, only if the caller still owns it.
-- KEYS[1] the record; ARGV[1] owner; ARGV[2] new state (c or f); ARGV[3] result (base64, or empty);
-- ARGV[4] retention (ms)
if redis.call('HGET', KEYS[1], 's') ~= 'p' or redis.call('HGET', KEYS[1], 'o') ~= ARGV[1] then
  return 0
end
redis.call('HSET', KEYS[1], 's', ARGV[2], 'r', ARGV[3])
redis.call('PEXPIRE', KEYS[1], ARGV[4])
return 1
