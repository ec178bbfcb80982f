-- Claims a dedup record: SET NX in spirit, but a failed record (state 'f') is taken over too, and an
-- in-progress one that expired is gone by its TTL. Fields: s state (p in progress, c completed,
-- f failed), o owner (the request), a attempt, k confirmed ('0' until the attempt confirms; absent
-- in records made before attempts, which count as confirmed), f fingerprint, r result (base64).
-- Safe to repeat: the same attempt's claim, claimed again (Lettuce re-sent the script after a
-- reconnect), is answered 'claimed' and its timeout starts again. Another attempt of the same
-- request takes the claim over only while it is unconfirmed (the attempt that made it never learned
-- of it); a confirmed claim's attempt may be doing the work, so a repeat is 'in-progress'.
-- KEYS[1] the record; ARGV[1] owner; ARGV[2] fingerprint; ARGV[3] in-progress timeout (ms);
-- ARGV[4] attempt ('' or absent: a claim confirmed when made); ARGV[5] 'confirm' to confirm the
-- attempt's claim instead (never creates, takes over or extends a record)
local attempt = ARGV[4] or ''
local state = redis.call('HGET', KEYS[1], 's')
if ARGV[5] == 'confirm' then
  if state ~= 'p' then
    return {'in-progress', 0}
  end
  local held = redis.call('HMGET', KEYS[1], 'o', 'a')
  if held[1] == ARGV[1] and held[2] == attempt then
    redis.call('HSET', KEYS[1], 'k', '1')
    return {'claimed'}
  end
  return {'in-progress', redis.call('PTTL', KEYS[1])}
end
if state == 'p' or state == 'c' then
  if redis.call('HGET', KEYS[1], 'f') ~= ARGV[2] then
    return {'mismatch'}
  end
  if state == 'p' then
    local held = redis.call('HMGET', KEYS[1], 'o', 'a', 'k')
    if held[1] == ARGV[1] then
      local sameAttempt = (held[2] or '') == attempt
      if sameAttempt or held[3] == '0' then
        if not sameAttempt then
          redis.call('HSET', KEYS[1], 'a', attempt, 'k', attempt == '' and '1' or '0')
        end
        redis.call('PEXPIRE', KEYS[1], ARGV[3])
        return {'claimed'}
      end
    end
    return {'in-progress', redis.call('PTTL', KEYS[1])}
  end
  return {'completed', redis.call('HGET', KEYS[1], 'r')}
end
redis.call('DEL', KEYS[1])
redis.call('HSET', KEYS[1], 's', 'p', 'o', ARGV[1], 'a', attempt, 'k', attempt == '' and '1' or '0',
  'f', ARGV[2])
redis.call('PEXPIRE', KEYS[1], ARGV[3])
return {'claimed'}
