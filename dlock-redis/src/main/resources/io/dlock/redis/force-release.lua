-- Delete a lock whatever its owner (an administrator's break) and wake its waiters.
-- KEYS[1] the lock key; ARGV[1] the release channel
-- Returns {value, remaining ms} as they were, or {} if the lock was not held.
local value = redis.call('GET', KEYS[1])
if not value then
  return {}
end
local ttl = redis.call('PTTL', KEYS[1])
redis.call('DEL', KEYS[1])
redis.call('PUBLISH', ARGV[1], 'released')
return {value, ttl}
