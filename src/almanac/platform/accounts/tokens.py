"""Bearer tokens for programs: random, shown once, kept only as a SHA-256 hash, named,
revocable, with the moment of last use (DECISIONS 6)."""

from __future__ import annotations

import logging
from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import select, update
from sqlalchemy.orm import Session

from almanac.platform.accounts.errors import NotAuthenticated
from almanac.platform.accounts.models import Account, ApiToken
from almanac.platform.accounts.secret import TOKEN_PREFIX, new_secret, secret_hash
from almanac.platform.errors import Invalid, NotFound

log = logging.getLogger(__name__)

MAX_NAME_LENGTH = 100


@dataclass(frozen=True, slots=True)
class NewToken:
    token: ApiToken
    secret: str  # shown to its owner once, in the response that created it

    def __repr__(self) -> str:
        return f"NewToken(token={self.token!r})"


def create_token(db: Session, account: Account, name: str, now: datetime) -> NewToken:
    """A new bearer token named `name` (1 to 100 characters) for `account`."""
    name = name.strip()
    if not 1 <= len(name) <= MAX_NAME_LENGTH:
        raise Invalid(f"name: give 1 to {MAX_NAME_LENGTH} characters")
    secret = new_secret(TOKEN_PREFIX)
    row = ApiToken(account_id=account.id, name=name, token_hash=secret_hash(secret), created_at=now)
    db.add(row)
    db.flush()
    log.info("account %s created token %s", account.id, row.id)
    return NewToken(token=row, secret=secret)


def list_tokens(db: Session, account: Account) -> list[ApiToken]:
    """The account's tokens, newest first, revoked ones included."""
    return list(
        db.scalars(
            select(ApiToken)
            .where(ApiToken.account_id == account.id)
            .order_by(ApiToken.created_at.desc(), ApiToken.id.desc())
        )
    )


def revoke_token(db: Session, account: Account, token_id: int, now: datetime) -> ApiToken:
    """Revoke one of the account's own tokens; another account's token is NOT-FOUND.
    Revoking twice keeps the first moment."""
    row = db.get(ApiToken, token_id)
    if row is None or row.account_id != account.id:
        raise NotFound(f"no token {token_id}")
    if row.revoked_at is None:
        row.revoked_at = now
        log.info("account %s revoked token %s", account.id, row.id)
    return row


def token_account(db: Session, secret: str) -> tuple[Account, ApiToken]:
    """The account a presented bearer token acts for (only reads; `record_token_use` keeps
    the use); an unknown or revoked token is AUTH-REQUIRED."""
    row = db.scalar(select(ApiToken).where(ApiToken.token_hash == secret_hash(secret)))
    if row is None or row.revoked_at is not None:
        raise NotAuthenticated("the token is unknown or revoked")
    return row.account, row


def record_token_use(db: Session, token_id: int, now: datetime) -> None:
    """Keep the moment a token was last used."""
    db.execute(update(ApiToken).where(ApiToken.id == token_id).values(last_used_at=now))
