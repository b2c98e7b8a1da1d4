"""Who is asking: ``Authorization: Bearer <secret>`` names a token, whose scope and tenant a request gets.

The dashboard's pages send the same secret in a cookie once a user signs in (``/ui/sign-in``).
Without either, a request is the local tenant's, with every scope, only while no token is
active and the server does not require one (``SLD_AUTH_REQUIRED``, which ``sld serve`` sets
when it listens beyond this machine); otherwise 401.  A header that names no active token is
401 in every mode: a typo must not silently fall back to anonymous access.
"""
from __future__ import annotations

import asyncio
import threading
import time
from dataclasses import dataclass

from fastapi import HTTPException, Request, Security
from fastapi.security import HTTPBearer
from starlette.concurrency import run_in_threadpool

from agent.storage import BaseStorage, TokenRecord
from app.api.single_flight import SingleFlight
from app.core.auth import hash_secret, scope_allows

# Documents the scheme in OpenAPI (the "Authorize" button of /docs); the header is read below.
bearer = HTTPBearer(auto_error=False, description="an API token's secret, from `sld token create`")
NEED_A_TOKEN = ("this server needs an API token: send `Authorization: Bearer <secret>` "
                "(an operator creates one with `sld token create`)")


@dataclass(frozen=True)
class Principal:
    tenant: str | None  # None: the local tenant
    scope: str
    token: str | None  # the token's name; None when no token was needed


def _unauthorized(detail: str) -> HTTPException:
    return HTTPException(401, detail, headers={"WWW-Authenticate": "Bearer"})


SESSION_COOKIE = "sld_token"  # the dashboard's sign-in: the token's secret, HttpOnly and SameSite=Strict


class TokenLookups:
    """What the token table said, trusted for ``seconds``: without it every request costs a query
    (a token's row, or whether any token exists), as much as the cached read it guards.

    A token created or revoked elsewhere (``sld token`` in another process) takes effect within
    ``seconds``.  Unknown secrets are remembered too, so guessing costs no query; the table is
    emptied when it holds ``MAX_ENTRIES``, so guessing cannot grow it either.
    """

    MAX_ENTRIES = 4096
    _ANY = object()  # the key of "is any token active?"

    def __init__(self, storage: BaseStorage, seconds: float):
        self.storage, self.seconds = storage, seconds
        self._entries: dict[object, tuple[float, object]] = {}
        self._lock = threading.Lock()
        self._asking = SingleFlight()
        self._background: set[asyncio.Task] = set()  # refreshes in flight (the loop keeps only weak references)

    async def find(self, secret_hash: str) -> TokenRecord | None:
        return await self._cached(secret_hash, lambda: self.storage.find_token(secret_hash))

    async def any_active(self) -> bool:
        return await self._cached(self._ANY, self.storage.has_tokens)

    async def _cached(self, key, ask):
        """A fresh answer on the event loop; a query on the API's threads.

        An answer past half its life is refreshed in the background while it is still served: under
        load a query waits for a thread behind the event loop's hold on the GIL (tens of
        milliseconds), and every request that needed the expired answer waited with it, once per
        ``seconds``.  An answer is never trusted for longer than ``seconds`` after its query began.
        """
        if self.seconds <= 0:
            return await run_in_threadpool(ask)
        hit = self._entries.get(key)
        if hit is not None:
            expires, value = hit
            now = time.monotonic()
            if now < expires:
                if now > expires - self.seconds / 2 and not self._asking.running(key):
                    task = asyncio.get_running_loop().create_task(self._refresh(key, ask))
                    self._background.add(task)
                    task.add_done_callback(self._settled)
                return value
        return await self._refresh(key, ask)

    async def _refresh(self, key, ask):
        began = time.monotonic()
        value = await self._asking.run(key, ask)
        with self._lock:
            if len(self._entries) >= self.MAX_ENTRIES:
                self._entries.clear()
            self._entries[key] = (began + self.seconds, value)
        return value

    def _settled(self, task: asyncio.Task) -> None:
        self._background.discard(task)
        if not task.cancelled():
            task.exception()  # retrieved: a failed refresh (a lost database) lets the answer expire, and the next ask fail


def token_lookups(request: Request) -> TokenLookups:
    state = request.app.state
    lookups = getattr(state, "token_lookups", None)
    if lookups is None or lookups.storage is not state.storage:  # built once the lifespan has opened the storage
        lookups = state.token_lookups = TokenLookups(state.storage, state.settings.auth_cache_seconds)
    return lookups


async def current_principal(request: Request, _doc=Security(bearer)) -> Principal:
    tokens = token_lookups(request)
    header = request.headers.get("authorization")
    cookie = request.cookies.get(SESSION_COOKIE)
    if header is None and cookie:
        header = f"Bearer {cookie}"  # a browser signed in to the dashboard: the same token, the same rules
    if header is not None:
        scheme, _, secret = header.strip().partition(" ")
        if scheme.lower() != "bearer" or not secret.strip():
            raise _unauthorized("send the API token as `Authorization: Bearer <secret>`")
        token = await tokens.find(hash_secret(secret.strip()))
        if token is None:
            raise _unauthorized("unknown or revoked API token")
        return Principal(tenant=token.tenant, scope=token.scope, token=token.name)
    if request.app.state.settings.auth_required or await tokens.any_active():
        raise _unauthorized(NEED_A_TOKEN)
    return Principal(tenant=None, scope="admin", token=None)


class StorageFor:
    """The storage as the request's tenant sees it, once its token is known to allow ``scope``."""

    def __init__(self, scope: str):
        self.scope = scope

    async def __call__(self, request: Request, principal: Principal = Security(current_principal)) -> BaseStorage:
        if not scope_allows(principal.scope, self.scope):
            raise HTTPException(403, f"token {principal.token!r} has scope {principal.scope}; "
                                     f"this request needs {self.scope}")
        request.state.principal = principal
        return request.app.state.storage.for_tenant(principal.tenant)
