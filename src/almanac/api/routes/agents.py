"""The portal's agent routes ("Agent login"; "Authentication" 4-5): an owner or admin, signed in
with a password, looks up a login code by the user code the tool printed, approves it for one
of their organizations (publishing allowed or not) or denies it; the organization's agents are
listed and revoked. All of them are a person's moves: an agent's token is AGENT_FORBIDDEN."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Path

from almanac.api.deps import Db, Now, person_only
from almanac.api.schemas import RowIdPath
from almanac.api.schemas.agents import (
    AgentOut,
    ApprovableOrganizationOut,
    LoginApprovalIn,
    LoginCodeOut,
)
from almanac.platform import accounts, agents
from almanac.platform.accounts import Account
from almanac.platform.accounts.organizations import MANAGERS
from almanac.platform.agents import AgentAction
from almanac.platform.agents.device import LoginView
from almanac.platform.agents.tokens import AgentView

router = APIRouter(prefix="/portal", tags=["portal"])

Approving = Annotated[Account, person_only(AgentAction.APPROVE_AGENT)]
ListingAgents = Annotated[Account, person_only(AgentAction.LIST_AGENTS)]
RevokingAgents = Annotated[Account, person_only(AgentAction.REVOKE_AGENT)]
UserCodePath = Annotated[
    str, Path(min_length=1, max_length=32, description="The code the tool printed, XXXX-XXXX")
]


def _code_out(db: Db, found: LoginView, viewer: Account) -> LoginCodeOut:
    managed = [
        ApprovableOrganizationOut(id=org.id, name=org.name)
        for org, role in accounts.organizations_of(db, viewer)
        if role in MANAGERS
    ]
    return LoginCodeOut(
        user_code=found.user_code,
        agent_name=found.agent_name,
        state=found.state,
        created_at=found.created_at,
        expires_at=found.expires_at,
        organization_id=found.organization_id,
        may_publish=found.may_publish,
        decided_at=found.decided_at,
        organizations=managed,
    )


def _agent_out(found: AgentView) -> AgentOut:
    return AgentOut(
        id=found.id,
        organization_id=found.organization_id,
        agent_name=found.agent_name,
        approved_by=found.approved_by,
        may_publish=found.may_publish,
        created_at=found.created_at,
        last_used_at=found.last_used_at,
        active=found.active,
        revoked_at=found.revoked_at,
        revoked_reason=found.revoked_reason,
        revoked_by=found.revoked_by,
    )


@router.get("/device/{user_code}", response_model=LoginCodeOut)
def show_login_code(user_code: UserCodePath, account: Approving, db: Db, now: Now) -> LoginCodeOut:
    """The login code typed at the approval address (owners and admins): the agent's name, the
    code's state and end, and the organizations the viewer may approve it for."""
    return _code_out(db, agents.login_code(db, user_code, account, now), account)


@router.post("/device/{user_code}/approve", response_model=LoginCodeOut)
def approve_login(
    user_code: UserCodePath, body: LoginApprovalIn, account: Approving, db: Db, now: Now
) -> LoginCodeOut:
    """Approve the agent for one organization the viewer is owner or admin of, with
    `may_publish` (publish, unpublish, relist) or not; its `login` receives the token at its
    next poll. A code denied, issued or expired is STATE-CONFLICT."""
    found = agents.approve(db, user_code, account, body.organization_id, body.may_publish, now)
    db.commit()
    return _code_out(db, found, account)


@router.post("/device/{user_code}/deny", response_model=LoginCodeOut)
def deny_login(user_code: UserCodePath, account: Approving, db: Db, now: Now) -> LoginCodeOut:
    """Deny the agent: its `login` ends with access_denied."""
    found = agents.deny(db, user_code, account, now)
    db.commit()
    return _code_out(db, found, account)


@router.get("/organizations/{organization_id}/agents", response_model=list[AgentOut])
def list_agents(organization_id: RowIdPath, account: ListingAgents, db: Db) -> list[AgentOut]:
    """The organization's agents, newest first, revoked ones with when, why and by whom
    (owners and admins)."""
    return [_agent_out(a) for a in agents.organization_agents(db, organization_id, account)]


@router.post("/organizations/{organization_id}/agents/{agent_id}/revoke", response_model=AgentOut)
def revoke_agent(
    organization_id: RowIdPath, agent_id: RowIdPath, account: RevokingAgents, db: Db, now: Now
) -> AgentOut:
    """Revoke an agent (owners and admins): its token stops working at once."""
    found = agents.revoke_agent(db, organization_id, account, agent_id, now)
    db.commit()
    return _agent_out(found)
