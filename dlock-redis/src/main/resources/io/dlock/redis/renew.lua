-- Renew a batch of leases, each only where its owner still holds the grant with its fencing token.
-- One round trip.
-- KEYS[i] a lock key; ARGV[4i-3] its owner token, ARGV[4i-2] the grant's fencing token,
-- ARGV[4i-1] its lease in milliseconds, ARGV[4i] '1' if the owner is an owner id (holds counted,
-- shared by any number of clients), '0' for a grant owner (one holder)
-- The token keeps a lost grant of an owner id from extending a newer grant of the same owner id.
-- An owner id's lock is never shortened here, whatever its hold count: another client holding the
-- same id may count on a longer lease, and the hold count cannot tell (a late renewal of a hold
-- already released, or a Redlock node where this hold was never granted, meets a count of 1 that
-- is another client's hold). The expiry becomes max(remaining, lease), on the server's clock.
-- A grant owner has one holder: its lease is set as asked, so an extension may shorten it.
-- Returns the 1-based positions of the leases that are gone (deleted, owned by another, or a
-- newer grant).
local gone = {}
for i = 1, #KEYS do
  local value = redis.call('GET', KEYS[i])
  local token, owner
  if value then
    token, owner = string.match(value, '^%d+|%d|(%d+)|[^|]*|%d*|[^|]*|(.*)$')
  end
  if owner == ARGV[4 * i - 3] and token == ARGV[4 * i - 2] then
    local lease = tonumber(ARGV[4 * i - 1])
    if ARGV[4 * i] == '0' or redis.call('PTTL', KEYS[i]) < lease then
      redis.call('PEXPIRE', KEYS[i], lease)
    end
  else
    gone[#gone + 1] = i
  end
end
return gone
