"""Who in an organization may make a publishing move, and who is told about one."""

from __future__ import annotations

from sqlalchemy.orm import Session

from almanac.platform.accounts.errors import EmailUnverified
from almanac.platform.accounts.models import Account, Membership, Organization
from almanac.platform.accounts.models import OrganizationRole as Role
from almanac.platform.accounts.organizations import (
    MANAGERS,
    current_membership,
    members,
    organizations_of,
    visible_organization,
)
from almanac.platform.errors import Forbidden


def require_member(db: Session, organization_id: int, actor: Account) -> Membership:
    """The actor's present membership (any role); NOT-FOUND to anyone else."""
    visible_organization(db, organization_id, actor)
    mine = current_membership(db, organization_id, actor.id)
    assert mine is not None
    return mine


def require_manager(db: Session, organization_id: int, actor: Account, what: str) -> Membership:
    """The actor's membership when it is an owner or admin with a verified e-mail
    ("Authentication" 2); FORBIDDEN or EMAIL-UNVERIFIED otherwise, NOT-FOUND to outsiders."""
    mine = require_member(db, organization_id, actor)
    if mine.role not in MANAGERS:
        raise Forbidden(f"only owners and admins of the organization {what}")
    if not actor.verified:
        raise EmailUnverified(f"verify your e-mail address before you {what}")
    return mine


def managed_organizations(db: Session, actor: Account) -> list[Organization]:
    """The organizations `require_manager` lets the actor manage: those it owns or
    administers, once its e-mail is verified; by id."""
    if not actor.verified:
        return []
    return [org for org, role in organizations_of(db, actor) if role in MANAGERS]


def require_not_guest(db: Session, organization_id: int, actor: Account, what: str) -> Membership:
    """The actor's membership when it is an owner, admin or member (never a guest)."""
    mine = require_member(db, organization_id, actor)
    if mine.role == Role.GUEST:
        raise Forbidden(f"guests of the organization do not {what}")
    return mine


def manager_addresses(db: Session, organization_id: int) -> list[str]:
    """The e-mail addresses of the present owners and admins, in the order they joined."""
    return [m.account.email for m in members(db, organization_id) if m.role in MANAGERS]


def who(actor: Account, agent_name: str | None = None) -> str:
    """How a move is kept in history: the person, and the agent acting in their name."""
    return actor.email if agent_name is None else f"{actor.email} (agent {agent_name})"
