"""API tokens of the RDB storage: stored by the SHA-256 of their secret, revoked but never deleted."""
from __future__ import annotations

from sqlalchemy import exists, select

from agent.errors import DataError
from agent.storage.errors import ConflictError, NotFoundError
from agent.storage.rdb import convert as cv
from agent.storage.rdb import models as m
from agent.storage.records import TOKEN_SCOPES, TokenRecord

_ACTIVE = m.ApiTokenRow.revoked_at.is_(None)


class TokenVerbs:
    """The token half of :class:`RDBStorage` (it provides ``_read`` and ``_write``)."""

    def create_token(self, name, *, scope, tenant, secret_hash) -> TokenRecord:
        if scope not in TOKEN_SCOPES:
            raise DataError(f"unknown scope {scope!r}; choose one of {', '.join(TOKEN_SCOPES)}")
        with self._write() as s:
            if s.scalar(select(m.ApiTokenRow.id).where(m.ApiTokenRow.name == name, _ACTIVE)) is not None:
                raise ConflictError(f"an active token is already named {name!r}; revoke it or choose another name")
            row = m.ApiTokenRow(name=name, tenant=tenant, scope=scope, secret_hash=secret_hash,
                                created_at=cv.now())
            s.add(row)
            s.flush()
            return cv.token_record(row)

    def find_token(self, secret_hash) -> TokenRecord | None:
        with self._read() as s:
            row = s.scalar(select(m.ApiTokenRow).where(m.ApiTokenRow.secret_hash == secret_hash, _ACTIVE))
            return None if row is None else cv.token_record(row)

    def list_tokens(self) -> list[TokenRecord]:
        with self._read() as s:
            return [cv.token_record(r) for r in s.scalars(select(m.ApiTokenRow).order_by(m.ApiTokenRow.id))]

    def revoke_token(self, name) -> TokenRecord:
        with self._write() as s:
            row = s.scalar(select(m.ApiTokenRow).where(m.ApiTokenRow.name == name, _ACTIVE))
            if row is None:
                raise NotFoundError(f"no active token named {name!r} (`sld token list` shows them)")
            row.revoked_at = cv.now()
            s.flush()
            return cv.token_record(row)

    def has_tokens(self) -> bool:
        with self._read() as s:
            return bool(s.scalar(select(exists().where(_ACTIVE))))
