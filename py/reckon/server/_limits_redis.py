"""The limits in Redis, shared by every replica of the relay (``--redis URL``).

Imported only when a Redis address is configured, so the core relay never needs the
``redis`` package (``pip install 'reckon[redis]'``).

Each check-and-count is one Lua script, which Redis runs with nothing else in between:
that is what makes the limits exact across replicas and connections. Time is
Redis' own (``TIME``), so replicas whose clocks differ still share one minute and
one day. Per caller (hash-tagged so a cluster keeps them on one node):

- ``reckon:{<key>}:requests``: sorted set of call ids scored by arrival (ms);
- ``reckon:{<key>}:tokens``: hash of UTC day number -> tokens counted that day;
- ``reckon:{<key>}:streams``: sorted set of call ids scored by lease expiry (ms).

A stream's place is a lease that its replica renews while the call is under way,
so a replica that dies mid-stream frees its places within ``lease`` seconds instead
of holding them for ever. Any failure to reach Redis raises `LimitsUnavailable`:
the relay then refuses calls (503) rather than let them through unlimited.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import AsyncIterator
from typing import Any

import anyio
import redis.asyncio as aioredis
from redis.asyncio.retry import Retry
from redis.backoff import NoBackoff
from redis.exceptions import RedisError

from reckon.server._access import Limits
from reckon.server._admission import Admission, LimitsUnavailable, Refusal

__all__ = ["LEASE", "RedisLimits", "keys_of"]

log = logging.getLogger("reckon.server")

# Seconds a stream's place is held without renewal; renewed every third of it.
LEASE = 30.0
# A Redis that refuses connections is a 503 at once; one that hangs, within these. Not
# tighter: a relay whose event loop runs seconds behind under load would time out
# replies that did arrive, and refuse calls with Redis in good health.
_CONNECT_TIMEOUT = 5.0
_READ_TIMEOUT = 10.0
_CONNECTIONS = 64  # per replica

_ADMIT = """
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local day = math.floor(tonumber(t[1]) / 86400)
local rpm, tpd, streams = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3])
local reserve, id, lease = tonumber(ARGV[4]), ARGV[5], tonumber(ARGV[6])
if tpd > 0 then
  local used = tonumber(redis.call('HGET', KEYS[2], day) or '0')
  if used >= tpd then
    return {'tokens_per_day', (day + 1) * 86400000 - now, used, day}
  end
end
if rpm > 0 then
  redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now - 60000)
  local count = redis.call('ZCARD', KEYS[1])
  if count >= rpm then
    local oldest = redis.call('ZRANGE', KEYS[1], 0, 0, 'WITHSCORES')
    return {'requests_per_minute', tonumber(oldest[2]) + 60000 - now, count, day}
  end
end
if streams > 0 then
  redis.call('ZREMRANGEBYSCORE', KEYS[3], '-inf', now)
  local open = redis.call('ZCARD', KEYS[3])
  if open >= streams then
    return {'concurrent_streams', 1000, open, day}
  end
end
if rpm > 0 then
  redis.call('ZADD', KEYS[1], now, id)
  redis.call('PEXPIRE', KEYS[1], 60000)
end
if tpd > 0 then
  for _, field in ipairs(redis.call('HKEYS', KEYS[2])) do
    if field ~= tostring(day) then redis.call('HDEL', KEYS[2], field) end
  end
  redis.call('HINCRBY', KEYS[2], day, reserve)
  redis.call('EXPIRE', KEYS[2], 172800)
end
if streams > 0 then
  redis.call('ZADD', KEYS[3], now + lease, id)
  redis.call('PEXPIRE', KEYS[3], lease * 2)
end
return {'', 0, 0, day}
"""

_SETTLE = """
redis.call('ZREM', KEYS[3], ARGV[1])
local day, delta, tokens = ARGV[2], tonumber(ARGV[3]), tonumber(ARGV[4])
if ARGV[5] == '1' then
  if redis.call('HEXISTS', KEYS[2], day) == 1 then
    redis.call('HINCRBY', KEYS[2], day, delta)
  else
    -- the call ran past midnight and the new day has begun: it pays for this call
    local today = math.floor(tonumber(redis.call('TIME')[1]) / 86400)
    redis.call('HINCRBY', KEYS[2], today, tokens)
  end
  redis.call('EXPIRE', KEYS[2], 172800)
end
return 1
"""

_RENEW = """
local t = redis.call('TIME')
local deadline = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000) + tonumber(ARGV[1])
for i = 2, #ARGV do redis.call('ZADD', KEYS[1], 'XX', deadline, ARGV[i]) end
redis.call('PEXPIRE', KEYS[1], tonumber(ARGV[1]) * 2)
return 1
"""


def keys_of(key: str) -> list[str]:
    """The Redis keys of one caller: requests, tokens, streams."""
    return [f"reckon:{{{key}}}:{part}" for part in ("requests", "tokens", "streams")]


class RedisLimits:
    def __init__(self, url: str, limits: Limits, *, lease: float = LEASE) -> None:
        self.limits = limits
        self.lease = lease
        # Blocking: a burst of calls waits a moment for a free connection. redis-py's
        # default pool refuses the 101st at once, which would be a 503 for a healthy
        # Redis; one Lua call takes well under a millisecond, so a few dozen suffice.
        pool = aioredis.BlockingConnectionPool.from_url(
            url,
            max_connections=_CONNECTIONS,
            timeout=_READ_TIMEOUT,
            socket_timeout=_READ_TIMEOUT,
            socket_connect_timeout=_CONNECT_TIMEOUT,
            # One quick retry rides over a connection Redis closed while idle.
            retry=Retry(NoBackoff(), retries=1),
        )
        self.client = aioredis.Redis.from_pool(pool)  # owns it: aclose() closes it
        self._admit = self.client.register_script(_ADMIT)
        self._settle = self.client.register_script(_SETTLE)
        self._renew = self.client.register_script(_RENEW)
        self._open: dict[str, set[str]] = {}  # this replica's streams, by caller key

    @contextlib.asynccontextmanager
    async def running(self) -> AsyncIterator[None]:
        async with anyio.create_task_group() as group:
            group.start_soon(self._keep_leases)
            try:
                yield
            finally:
                group.cancel_scope.cancel()
        await self.client.aclose()

    async def admit(self, key: str, *, request: str, reserve: int) -> Admission | Refusal:
        limits = self.limits
        args = [
            limits.requests_per_minute or 0,
            limits.tokens_per_day or 0,
            limits.concurrent_streams or 0,
            reserve,
            request,
            int(self.lease * 1000),
        ]
        reply = await self._call(self._admit, keys_of(key), args)
        name, wait_ms, used, day = (
            reply[0].decode() if isinstance(reply[0], bytes) else str(reply[0]),
            int(reply[1]),
            int(reply[2]),
            int(reply[3]),
        )
        if name:
            return Refusal(name, max(1, -(-wait_ms // 1000)), used)
        if limits.concurrent_streams is not None:
            self._open.setdefault(key, set()).add(request)
        return Admission(key, request, day, reserve)

    async def settle(self, admission: Admission, *, tokens: int) -> None:
        open_here = self._open.get(admission.key)
        if open_here is not None:
            open_here.discard(admission.request)
            if not open_here:
                del self._open[admission.key]
        counted = "1" if self.limits.tokens_per_day is not None else "0"
        delta = tokens - admission.reserved
        args = [admission.request, admission.day, delta, tokens, counted]
        await self._call(self._settle, keys_of(admission.key), args)

    async def _keep_leases(self) -> None:
        while True:
            await anyio.sleep(self.lease / 3)
            for key, requests in list(self._open.items()):
                if not requests:
                    continue
                streams = keys_of(key)[2]
                try:
                    await self._call(self._renew, [streams], [int(self.lease * 1000), *requests])
                except Exception as exc:  # this task must outlive any failure
                    # Not fatal: the next round renews them, or at worst the leases run out
                    # and the places are freed early.
                    log.warning("could not renew stream leases in Redis: %s", type(exc).__name__)

    async def _call(self, script: Any, keys: list[str], args: list[Any]) -> Any:
        try:
            return await script(keys=keys, args=args)
        except (RedisError, OSError) as exc:
            raise LimitsUnavailable(f"{type(exc).__name__}: {exc}") from None
