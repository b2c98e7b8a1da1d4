"""Who is asking: ``Authorization: Bearer <secret>`` names a token, whose scope and tenant a request gets.

The dashboard's pages send the same secret in a cookie once a user signs in (``/ui/sign-in``).
Without either, a request is the local tenant's, with every scope, only while no token is
active and the server does not require one (``SLD_AUTH_REQUIRED``, which ``sld serve`` sets
when it listens beyond this machine); otherwise 401.  A header that names no active token is
401 in every mode: a typo must not silently fall back to anonymous access.
"""
from __future__ import annotations

from dataclasses import dataclass

from fastapi import HTTPException, Request, Security
from fastapi.security import HTTPBearer

from agent.storage import BaseStorage
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


def current_principal(request: Request, _doc=Security(bearer)) -> Principal:
    storage: BaseStorage = request.app.state.storage
    header = request.headers.get("authorization")
    cookie = request.cookies.get(SESSION_COOKIE)
    if header is None and cookie:
        header = f"Bearer {cookie}"  # a browser signed in to the dashboard: the same token, the same rules
    if header is not None:
        scheme, _, secret = header.strip().partition(" ")
        if scheme.lower() != "bearer" or not secret.strip():
            raise _unauthorized("send the API token as `Authorization: Bearer <secret>`")
        token = storage.find_token(hash_secret(secret.strip()))
        if token is None:
            raise _unauthorized("unknown or revoked API token")
        return Principal(tenant=token.tenant, scope=token.scope, token=token.name)
    if request.app.state.settings.auth_required or storage.has_tokens():
        raise _unauthorized(NEED_A_TOKEN)
    return Principal(tenant=None, scope="admin", token=None)


class StorageFor:
    """The storage as the request's tenant sees it, once its token is known to allow ``scope``."""

    def __init__(self, scope: str):
        self.scope = scope

    def __call__(self, request: Request, principal: Principal = Security(current_principal)) -> BaseStorage:
        if not scope_allows(principal.scope, self.scope):
            raise HTTPException(403, f"token {principal.token!r} has scope {principal.scope}; "
                                     f"this request needs {self.scope}")
        request.state.principal = principal
        return request.app.state.storage.for_tenant(principal.tenant)
