"""Agent tokens ("Authentication" 4; "Agent login": token -> revoked): issued once to the
polling tool, kept only as a SHA-256 hash, bound to an organization, its approver, the
publishing choice, the agent's name and its machine. Revoked by logout, by Revoke in the
portal, by a new login on the same machine, and at its next use once its approver is no longer
owner or admin of the organization (checked at every use, `use_agent_token`)."""

from __future__ import annotations

import logging
from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import select
from sqlalchemy.orm import Session

from almanac.platform.accounts.errors import NotAuthenticated
from almanac.platform.accounts.models import Account
from almanac.platform.accounts.organizations import MANAGERS, current_membership
from almanac.platform.accounts.secret import new_secret, secret_hash
from almanac.platform.agents.access import AgentGrant
from almanac.platform.agents.models import AgentToken, DeviceCode, RevokeReason
from almanac.platform.errors import NotFound
from almanac.platform.publishing.identity.roles import require_manager

log = logging.getLogger(__name__)

AGENT_TOKEN_PREFIX = "almagent_"
"""Agent tokens start with this (a person's API tokens with `alm_`), so a request's token is
looked up in its own table."""


@dataclass(frozen=True, slots=True)
class NewAgentToken:
    token: AgentToken
    secret: str  # handed to the polling tool once

    def __repr__(self) -> str:
        return f"NewAgentToken(token={self.token!r})"


@dataclass(frozen=True, slots=True)
class AgentView:
    """An agent as its organization's owners and admins see it (the secret never)."""

    id: int
    organization_id: int
    agent_name: str
    approved_by: str
    may_publish: bool
    created_at: datetime
    last_used_at: datetime | None
    active: bool
    revoked_at: datetime | None
    revoked_reason: str | None
    revoked_by: str | None


def is_agent_secret(secret: str) -> bool:
    return secret.startswith(AGENT_TOKEN_PREFIX)


def grant_of(row: AgentToken) -> AgentGrant:
    return AgentGrant(
        token_id=row.id,
        organization_id=row.organization_id,
        approved_by=row.approved_by,
        may_publish=row.may_publish,
        agent_name=row.agent_name,
    )


def _revoke(row: AgentToken, reason: RevokeReason, by: str | None, now: datetime) -> None:
    if row.revoked_at is None:
        row.revoked_at = now
        row.revoked_reason = reason.value
        row.revoked_by = by
        log.info("agent token %s revoked (%s)", row.id, reason.value)


def issue_token(db: Session, code: DeviceCode, now: datetime) -> NewAgentToken:
    """The token of an approved login code; the machine's earlier tokens are revoked."""
    assert code.organization_id is not None and code.decided_by is not None
    for earlier in db.scalars(
        select(AgentToken).where(
            AgentToken.machine_id == code.machine_id, AgentToken.revoked_at.is_(None)
        )
    ):
        _revoke(earlier, RevokeReason.NEW_LOGIN, None, now)
    secret = new_secret(AGENT_TOKEN_PREFIX)
    row = AgentToken(
        token_hash=secret_hash(secret),
        organization_id=code.organization_id,
        approved_by=code.decided_by,
        may_publish=code.may_publish,
        agent_name=code.agent_name,
        machine_id=code.machine_id,
        device_code_id=code.id,
        created_at=now,
    )
    db.add(row)
    db.flush()
    return NewAgentToken(token=row, secret=secret)


def approver_manages(db: Session, row: AgentToken) -> bool:
    """Whether the token's approver is still an owner or admin of its organization."""
    mine = current_membership(db, row.organization_id, row.approved_by)
    return mine is not None and mine.role in MANAGERS


def use_agent_token(db: Session, secret: str, now: datetime) -> AgentToken:
    """The live agent token of a presented secret, its use kept; AUTH-REQUIRED when unknown or
    revoked. A token whose approver is no longer owner or admin of its organization is revoked
    here, at once (AUTH-REQUIRED): the caller commits that revocation before answering."""
    row = db.scalar(select(AgentToken).where(AgentToken.token_hash == secret_hash(secret)))
    if row is None or row.revoked_at is not None:
        raise NotAuthenticated("the agent's token is unknown or revoked; run login again")
    if not approver_manages(db, row):
        _revoke(row, RevokeReason.APPROVER_LEFT, None, now)
        db.flush()
        raise NotAuthenticated(
            "the agent's token is revoked: the person who approved it is no longer owner or "
            "admin of the organization; run login again"
        )
    row.last_used_at = now
    db.flush()
    return row


def logout(db: Session, token_id: int, now: datetime) -> None:
    """The tool's logout: its own token is revoked."""
    row = db.get(AgentToken, token_id)
    if row is not None:
        _revoke(row, RevokeReason.LOGOUT, None, now)
        db.flush()


def _view(db: Session, row: AgentToken) -> AgentView:
    approver = db.get(Account, row.approved_by)
    assert approver is not None
    left = row.revoked_at is None and not approver_manages(db, row)
    return AgentView(
        id=row.id,
        organization_id=row.organization_id,
        agent_name=row.agent_name,
        approved_by=approver.email,
        may_publish=row.may_publish,
        created_at=row.created_at,
        last_used_at=row.last_used_at,
        # A token whose approver left is refused (and revoked) at its next use already.
        active=row.revoked_at is None and not left,
        revoked_at=row.revoked_at,
        revoked_reason=RevokeReason.APPROVER_LEFT.value if left else row.revoked_reason,
        revoked_by=row.revoked_by,
    )


def organization_agents(db: Session, organization_id: int, viewer: Account) -> list[AgentView]:
    """The organization's agents, newest first, revoked ones included (owners and admins)."""
    require_manager(db, organization_id, viewer, "see the organization's agents")
    rows = db.scalars(
        select(AgentToken)
        .where(AgentToken.organization_id == organization_id)
        .order_by(AgentToken.created_at.desc(), AgentToken.id.desc())
    ).all()
    return [_view(db, row) for row in rows]


def revoke_agent(
    db: Session, organization_id: int, actor: Account, agent_id: int, now: datetime
) -> AgentView:
    """Revoke in the portal (owners and admins): the agent's token stops working at once.
    Revoking again keeps the first moment and reason."""
    require_manager(db, organization_id, actor, "revoke agents")
    row = db.get(AgentToken, agent_id)
    if row is None or row.organization_id != organization_id:
        raise NotFound(f"the organization has no agent {agent_id}")
    _revoke(row, RevokeReason.PORTAL, actor.email, now)
    db.flush()
    return _view(db, row)
