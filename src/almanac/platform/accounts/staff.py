"""Service staff roles: operators run the host pages, reviewers decide in review (DECISIONS 6).

An operator grants and revokes roles; the first operator is granted from the command line.
"""

from __future__ import annotations

import logging
from datetime import datetime

from sqlalchemy import select
from sqlalchemy.orm import Session

from almanac.platform.accounts.identity import find_account
from almanac.platform.accounts.models import Account, StaffGrant, StaffRole
from almanac.platform.errors import Invalid, NotFound

log = logging.getLogger(__name__)


def parse_staff_role(role: str) -> StaffRole:
    try:
        return StaffRole(role)
    except ValueError:
        raise Invalid(
            f"role: {role!r} is not one of {', '.join(r.value for r in StaffRole)}"
        ) from None


def staff_roles(db: Session, account: Account) -> set[StaffRole]:
    """The roles the account holds now."""
    rows = db.scalars(
        select(StaffGrant.role).where(
            StaffGrant.account_id == account.id, StaffGrant.revoked_at.is_(None)
        )
    )
    return {StaffRole(r) for r in rows}


def has_staff_role(db: Session, account: Account, role: StaffRole) -> bool:
    return role in staff_roles(db, account)


def grant_staff_role(
    db: Session, email: str, role: str, now: datetime, granted_by: Account | None = None
) -> StaffGrant:
    """Give the account of `email` a staff role; granting a held role returns the grant as it
    is. `granted_by` is None from the command line. Checking the granter is the caller's."""
    wanted = parse_staff_role(role)
    account = find_account(db, email)
    if account is None:
        raise NotFound("no account has this e-mail address; sign up first")
    held = db.scalar(
        select(StaffGrant).where(
            StaffGrant.account_id == account.id,
            StaffGrant.role == wanted,
            StaffGrant.revoked_at.is_(None),
        )
    )
    if held is not None:
        return held
    grant = StaffGrant(
        account_id=account.id,
        role=wanted,
        granted_at=now,
        granted_by=granted_by.id if granted_by else None,
    )
    db.add(grant)
    db.flush()
    log.info("staff role %s granted to account %s", wanted.value, account.id)
    return grant


def revoke_staff_role(db: Session, account_id: int, role: str, now: datetime) -> StaffGrant:
    """End a held staff role; one not held is NOT-FOUND."""
    wanted = parse_staff_role(role)
    held = db.scalar(
        select(StaffGrant).where(
            StaffGrant.account_id == account_id,
            StaffGrant.role == wanted,
            StaffGrant.revoked_at.is_(None),
        )
    )
    if held is None:
        raise NotFound(f"account {account_id} does not hold the role {wanted.value}")
    held.revoked_at = now
    log.info("staff role %s revoked from account %s", wanted.value, account_id)
    return held


def staff_grants(db: Session) -> list[StaffGrant]:
    """Every role held now, oldest first."""
    return list(
        db.scalars(
            select(StaffGrant)
            .where(StaffGrant.revoked_at.is_(None))
            .order_by(StaffGrant.granted_at, StaffGrant.id)
        )
    )
