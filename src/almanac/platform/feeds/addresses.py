"""A reader's private feed address: a random secret in the path, shown once and kept only as
its SHA-256 hash (as bearer tokens are, `accounts.secret`), revocable, and regenerated on
request (regenerating revokes the old address in the same transaction). A revoked address and
one that never existed get the same answer."""

from __future__ import annotations

import logging
from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import select, update
from sqlalchemy.orm import Session

from almanac.platform.accounts.models import Account
from almanac.platform.accounts.secret import new_secret, secret_hash
from almanac.platform.errors import NotFound
from almanac.platform.feeds.models import ReaderFeed

log = logging.getLogger(__name__)

FEED_PREFIX = "almcal_"
"""Makes a leaked feed address recognisable, as `alm_` does a token."""

NO_FEED = "no calendar feed at this address"
"""The one detail of an unknown or revoked address: it names nothing of what was asked."""


@dataclass(frozen=True, slots=True)
class NewFeed:
    feed: ReaderFeed
    secret: str  # shown to its reader once, in the answer that made it

    def __repr__(self) -> str:
        return f"NewFeed(feed={self.feed!r})"


def current_feed(db: Session, account: Account) -> ReaderFeed | None:
    """The account's feed address that is not revoked, if it has one."""
    return db.scalar(
        select(ReaderFeed)
        .where(ReaderFeed.account_id == account.id, ReaderFeed.revoked_at.is_(None))
        .order_by(ReaderFeed.id.desc())
    )


def _revoke_all(db: Session, account: Account, now: datetime) -> int:
    revoked = db.execute(
        update(ReaderFeed)
        .where(ReaderFeed.account_id == account.id, ReaderFeed.revoked_at.is_(None))
        .values(revoked_at=now)
        .execution_options(synchronize_session=False)
    )
    return int(getattr(revoked, "rowcount", 0) or 0)


def create_feed(db: Session, account: Account, now: datetime) -> NewFeed:
    """A new feed address for the account; the address it had before stops answering."""
    revoked = _revoke_all(db, account, now)
    secret = new_secret(FEED_PREFIX)
    row = ReaderFeed(account_id=account.id, secret_hash=secret_hash(secret), created_at=now)
    db.add(row)
    db.flush()
    log.info("account %s made feed %s (revoking %s)", account.id, row.id, revoked)
    return NewFeed(feed=row, secret=secret)


def revoke_feed(db: Session, account: Account, now: datetime) -> bool:
    """Revoke the account's feed address; False when it had none (nothing changes)."""
    revoked = _revoke_all(db, account, now)
    if revoked:
        log.info("account %s revoked its feed", account.id)
    return revoked > 0


def feed_account(db: Session, secret: str) -> Account:
    """The account whose feed address carries `secret`; NOT-FOUND for an unknown or revoked
    one, with the same words."""
    # One statement for the address and its account: a calendar app's poll answered 304 does
    # little else, and each round trip to the database was a fifth of it (issue 33).
    account = db.scalar(
        select(Account)
        .join(ReaderFeed, ReaderFeed.account_id == Account.id)
        .where(ReaderFeed.secret_hash == secret_hash(secret), ReaderFeed.revoked_at.is_(None))
    )
    if account is None:
        raise NotFound(NO_FEED)
    return account
