"""One blocking call per key at a time, shared by every request that asks meanwhile.

When a cached answer expires (the token table's, a run's version), every request in flight misses
it at the same moment; without this each would send the same query to the API's few threads, and
the burst (fifty queries queued behind four threads, once a second) was the whole tail of the
read latency.  The first asker runs the call on a thread; the others await its result.
"""
from __future__ import annotations

import asyncio
from typing import Any, Callable, Hashable

from starlette.concurrency import run_in_threadpool


class SingleFlight:
    def __init__(self):
        self._calls: dict[Hashable, asyncio.Future] = {}

    def running(self, key: Hashable) -> bool:
        return key in self._calls

    async def run(self, key: Hashable, call: Callable[[], Any]) -> Any:
        while (pending := self._calls.get(key)) is not None:
            try:
                return await asyncio.shield(pending)
            except asyncio.CancelledError:
                if not pending.cancelled():
                    raise  # this request was cancelled, not the call it waited for
                # the asker that ran the call went away (a client that hung up): ask again
        future = asyncio.get_running_loop().create_future()
        self._calls[key] = future
        try:
            value = await run_in_threadpool(call)
        except asyncio.CancelledError:
            future.cancel()
            raise
        except BaseException as exc:
            future.set_exception(exc)
            future.exception()  # retrieved: no "never retrieved" warning when nobody else waited
            raise
        else:
            future.set_result(value)
            return value
        finally:
            del self._calls[key]
