"""Small builders for account tests."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy.orm import Session

from almanac.platform import accounts
from almanac.platform.accounts import Account, Passwords

PASSWORD = "correct horse battery staple"


def person(
    db: Session, passwords: Passwords, email: str, now: datetime, *, verified: bool = True
) -> Account:
    """A signed-up account, verified through its mailed token unless told otherwise."""
    made = accounts.sign_up(db, email, PASSWORD, passwords, now)
    if verified:
        accounts.verify_email(db, made.verification_token, now)
    db.commit()
    return made.account
