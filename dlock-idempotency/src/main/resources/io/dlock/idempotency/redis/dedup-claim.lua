-- Claims a dedup record: SET NX in spirit, but a failed record (state 'f') is taken over too, and an
-- in-progress one that expired is gone by its TTL. Fields: s state (p in progress, c completed,
-- f failed), o owner, f fingerprint, r result (base64).
-- Safe to repeat: the owner's own in-progress claim, claimed again (its answer was lost, or Lettuce
-- re-sent the script after a reconnect), is answered 'claimed', and its timeout starts again.
-- KEYS[1] the record; ARGV[1] owner; ARGV[2] fingerprint; ARGV[3] in-progress timeout (ms)
local state = redis.call('HGET', KEYS[1], 's')
if state == 'p' or state == 'c' then
  if redis.call('HGET', KEYS[1], 'f') ~= ARGV[2] then
    return {'mismatch'}
  end
  if state == 'p' then
    if redis.call('HGET', KEYS[1], 'o') == ARGV[1] then
      redis.call('PEXPIRE', KEYS[1], ARGV[3])
      return {'claimed'}
    end
    return {'in-progress', redis.call('PTTL', KEYS[1])}
  end
  return {'completed', redis.call('HGET', KEYS[1], 'r')}
end
redis.call('DEL', KEYS[1])
redis.call('HSET', KEYS[1], 's', 'p', 'o', ARGV[1], 'f', ARGV[2])
redis.call('PEXPIRE', KEYS[1], ARGV[3])
return {'claimed'}
