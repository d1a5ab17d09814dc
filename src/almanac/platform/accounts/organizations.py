"""Organizations and their members ("Other resources", Organization; "Authentication" 1-2).

Owners and admins manage members and need a verified e-mail; only owners make or unmake
owners; an organization always keeps an owner. Leaving keeps the membership row with `left_at`.
"""

from __future__ import annotations

import logging
from datetime import datetime

from sqlalchemy import ColumnElement, and_, select
from sqlalchemy.orm import Session

from almanac.platform.accounts.errors import EmailUnverified
from almanac.platform.accounts.identity import find_account
from almanac.platform.accounts.models import Account, Membership, Organization
from almanac.platform.accounts.models import OrganizationRole as Role
from almanac.platform.accounts.tables import memberships
from almanac.platform.errors import Conflict, Forbidden, Invalid, NotFound

log = logging.getLogger(__name__)

MANAGERS = frozenset({Role.OWNER, Role.ADMIN})


def in_audience_as_member(account_id: int | ColumnElement[int]) -> ColumnElement[bool]:
    """The condition on `memberships` rows that put the account in an organization's audience:
    a present member in any role but guest (guests and former members never are). The account
    may be a bound parameter, for a statement built once."""
    return and_(
        memberships.c.account_id == account_id,
        memberships.c.left_at.is_(None),
        memberships.c.role != str(Role.GUEST),
    )


def _require_verified(account: Account, what: str) -> None:
    if not account.verified:
        raise EmailUnverified(f"verify your e-mail address before you {what}")


def create_organization(
    db: Session, creator: Account, name: str, now: datetime, domain: str | None = None
) -> Organization:
    """A new organization whose creator is its owner; the creator needs a verified e-mail."""
    _require_verified(creator, "create an organization")
    name = name.strip()
    if not 1 <= len(name) <= 200:
        raise Invalid("name: give 1 to 200 characters")
    org = Organization(
        name=name,
        domain=domain.strip().lower().rstrip(".") if domain else None,
        created_at=now,
        created_by=creator.id,
    )
    db.add(org)
    db.flush()
    db.add(
        Membership(organization_id=org.id, account_id=creator.id, role=Role.OWNER, joined_at=now)
    )
    db.flush()
    log.info("account %s created organization %s", creator.id, org.id)
    return org


def current_membership(db: Session, organization_id: int, account_id: int) -> Membership | None:
    """The account's present membership of the organization (None for former members)."""
    return db.scalar(
        select(Membership).where(
            Membership.organization_id == organization_id,
            Membership.account_id == account_id,
            Membership.left_at.is_(None),
        )
    )


def visible_organization(db: Session, organization_id: int, viewer: Account) -> Organization:
    """The organization when the viewer is a present member of it; otherwise NOT-FOUND, so
    outsiders learn nothing about it."""
    org = db.get(Organization, organization_id)
    if org is None or current_membership(db, organization_id, viewer.id) is None:
        raise NotFound(f"no organization {organization_id}")
    return org


def organizations_of(db: Session, account: Account) -> list[tuple[Organization, str]]:
    """The organizations the account is a present member of, with its role in each."""
    rows = db.execute(
        select(Organization, Membership.role)
        .join(Membership, Membership.organization_id == Organization.id)
        .where(Membership.account_id == account.id, Membership.left_at.is_(None))
        .order_by(Organization.id)
    )
    return [(org, role) for org, role in rows]


def members(db: Session, organization_id: int) -> list[Membership]:
    """The present members of every role, in the order they joined."""
    return list(
        db.scalars(
            select(Membership)
            .where(Membership.organization_id == organization_id, Membership.left_at.is_(None))
            .order_by(Membership.joined_at, Membership.id)
        )
    )


def active_members(db: Session, organization_id: int) -> list[Account]:
    """The accounts that count as the organization in a private audience ("Authentication" 1):
    present owners, admins and members; never guests or former members."""
    return [m.account for m in members(db, organization_id) if m.role != Role.GUEST]


def _manager(db: Session, organization_id: int, actor: Account) -> Membership:
    """The actor's membership when it may manage members: owner or admin, verified e-mail."""
    visible_organization(db, organization_id, actor)
    mine = current_membership(db, organization_id, actor.id)
    assert mine is not None
    if mine.role not in MANAGERS:
        raise Forbidden("only owners and admins manage the members of an organization")
    _require_verified(actor, "manage members")
    return mine


def _parse_role(role: str) -> Role:
    try:
        return Role(role)
    except ValueError:
        raise Invalid(f"role: {role!r} is not one of {', '.join(r.value for r in Role)}") from None


def _check_grant(mine: Membership, target: Account, role: Role) -> None:
    if role == Role.OWNER and mine.role != Role.OWNER:
        raise Forbidden("only an owner makes another member an owner")
    if role in MANAGERS and not target.verified:
        raise EmailUnverified("owners and admins need a verified e-mail address")


def _owners(db: Session, organization_id: int) -> int:
    return sum(1 for m in members(db, organization_id) if m.role == Role.OWNER)


def add_member(
    db: Session, organization_id: int, actor: Account, email: str, role: str, now: datetime
) -> Membership:
    """Add the account of `email` with `role`; a present member is MEMBER-EXISTS."""
    mine = _manager(db, organization_id, actor)
    wanted = _parse_role(role)
    target = find_account(db, email)
    if target is None:
        raise NotFound("no account has this e-mail address; ask the person to sign up first")
    _check_grant(mine, target, wanted)
    if current_membership(db, organization_id, target.id) is not None:
        raise Conflict("the person is already a member", code="MEMBER-EXISTS")
    row = Membership(
        organization_id=organization_id, account_id=target.id, role=wanted, joined_at=now
    )
    db.add(row)
    db.flush()
    log.info("account %s added account %s to organization %s", actor.id, target.id, organization_id)
    return row


def _target(db: Session, organization_id: int, account_id: int) -> Membership:
    row = current_membership(db, organization_id, account_id)
    if row is None:
        raise NotFound(f"account {account_id} is not a member")
    return row


def change_role(
    db: Session, organization_id: int, actor: Account, account_id: int, role: str
) -> Membership:
    """Give a present member another role; owners are changed only by owners and the last
    owner keeps the role (LAST-OWNER)."""
    mine = _manager(db, organization_id, actor)
    wanted = _parse_role(role)
    row = _target(db, organization_id, account_id)
    if row.role == Role.OWNER and mine.role != Role.OWNER:
        raise Forbidden("only an owner changes the role of an owner")
    _check_grant(mine, row.account, wanted)
    if row.role == Role.OWNER and wanted != Role.OWNER and _owners(db, organization_id) == 1:
        raise Conflict("the organization would be left without an owner", code="LAST-OWNER")
    row.role = wanted
    return row


def remove_member(
    db: Session, organization_id: int, actor: Account, account_id: int, now: datetime
) -> Membership:
    """End a membership (the row stays with `left_at`). Anyone may leave on their own; others
    are removed by owners and admins, owners only by owners; the last owner stays."""
    row = _target(db, organization_id, account_id)
    if account_id != actor.id:
        mine = _manager(db, organization_id, actor)
        if row.role == Role.OWNER and mine.role != Role.OWNER:
            raise Forbidden("only an owner removes an owner")
    if row.role == Role.OWNER and _owners(db, organization_id) == 1:
        raise Conflict("the organization would be left without an owner", code="LAST-OWNER")
    row.left_at = now
    log.info("account %s ended membership %s", actor.id, row.id)
    return row
