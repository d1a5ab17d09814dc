"""Builders for publishing tests: people, an organization with owner, admin and member."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from sqlalchemy.orm import Session

from almanac.platform import accounts
from almanac.platform.accounts import Account, Passwords
from tests.accounts.helpers import person


@dataclass
class Org:
    id: int
    owner: Account
    admin: Account
    member: Account


def organization(db: Session, passwords: Passwords, now: datetime, prefix: str = "bank") -> Org:
    """An organization whose owner, admin and member have verified e-mail addresses."""
    owner = person(db, passwords, f"{prefix}-owner@example.org", now)
    admin = person(db, passwords, f"{prefix}-admin@example.org", now)
    member = person(db, passwords, f"{prefix}-member@example.org", now)
    made = accounts.create_organization(db, owner, f"Org {prefix}", now)
    accounts.add_member(db, made.id, owner, admin.email, "admin", now)
    accounts.add_member(db, made.id, owner, member.email, "member", now)
    db.commit()
    return Org(made.id, owner, admin, member)
