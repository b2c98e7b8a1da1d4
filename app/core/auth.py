"""API tokens: a random secret shown once, stored as its SHA-256; the rule for serving without tokens.

A token has a scope (read < write < admin: each allows what the ones before it allow) and
a tenant, whose datasets and runs are the only ones its requests see.  A token made without
a tenant works on the local tenant's: the rows made before tokens existed, or by the CLI.
"""
from __future__ import annotations

import hashlib
import ipaddress
import re
import secrets

from agent.errors import DataError
from agent.storage import TOKEN_SCOPES, BaseStorage, TokenRecord

SECRET_PREFIX = "sld_"  # recognisable in a leaked config file or a secret scanner
NAME_PATTERN = r"[A-Za-z0-9][A-Za-z0-9_.@-]{0,99}"


def hash_secret(secret: str) -> str:
    # A plain SHA-256 is enough: the secret is 256 random bits, not a password to brute-force.
    return hashlib.sha256(secret.encode("utf-8", "surrogateescape")).hexdigest()


def issue_token(storage: BaseStorage, name: str, *, scope: str, tenant: str | None = None) -> tuple[TokenRecord, str]:
    """(the stored token, its secret): the secret exists only in the return value."""
    for what, value in (("name", name), ("tenant", tenant)):
        if value is not None and not re.fullmatch(NAME_PATTERN, value):
            raise DataError(f"token {what} {value[:120]!r}: use 1-100 letters, digits, '_', '.', '@' or '-', "
                            "starting with a letter or digit")
    if scope not in TOKEN_SCOPES:
        raise DataError(f"unknown scope {scope!r}; choose one of {', '.join(TOKEN_SCOPES)}")
    secret = SECRET_PREFIX + secrets.token_urlsafe(32)
    return storage.create_token(name, scope=scope, tenant=tenant, secret_hash=hash_secret(secret)), secret


def scope_allows(scope: str, needed: str) -> bool:
    return TOKEN_SCOPES.index(scope) >= TOKEN_SCOPES.index(needed)


def is_loopback(host: str) -> bool:
    """Whether only this machine can reach a server bound to ``host`` (127.0.0.0/8, ::1, localhost)."""
    if host.strip().lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False  # a host name other than localhost may resolve to any interface
