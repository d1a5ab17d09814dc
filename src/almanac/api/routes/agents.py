"""The portal's agent routes ("Agent login"; "Authentication" 4-5): an owner or admin, signed in
with a password, looks up a login code by the user code the tool printed, approves it for one
of their organizations (publishing allowed or not) or denies it; the organization's agents are
listed and revoked. All of them are a person's moves: an agent's token is AGENT_FORBIDDEN."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Path

from almanac.api.deps import Db, Now, person_only
from almanac.api.schemas import RowIdPath
from almanac.api.schemas.agents import AgentOut, LoginApprovalIn, LoginCodeOut
from almanac.platform import agents
from almanac.platform.accounts import Account
from almanac.platform.agents import AgentAction

router = APIRouter(prefix="/portal", tags=["portal"])

Approving = Annotated[Account, person_only(AgentAction.APPROVE_AGENT)]
ListingAgents = Annotated[Account, person_only(AgentAction.LIST_AGENTS)]
RevokingAgents = Annotated[Account, person_only(AgentAction.REVOKE_AGENT)]
UserCodePath = Annotated[
    str, Path(min_length=1, max_length=32, description="The code the tool printed, XXXX-XXXX")
]


@router.get("/device/{user_code}", response_model=LoginCodeOut)
def show_login_code(user_code: UserCodePath, account: Approving, db: Db, now: Now) -> LoginCodeOut:
    """The login code typed at the approval address (owners and admins): the agent's name, the
    code's state and end, and the organizations the viewer may approve it for."""
    return LoginCodeOut.read(db, agents.login_code(db, user_code, account, now), account)


@router.post("/device/{user_code}/approve", response_model=LoginCodeOut)
def approve_login(
    user_code: UserCodePath, body: LoginApprovalIn, account: Approving, db: Db, now: Now
) -> LoginCodeOut:
    """Approve the agent for one organization the viewer is owner or admin of, with
    `may_publish` (publish, unpublish, relist) or not; its `login` receives the token at its
    next poll. A code denied, issued or expired is STATE-CONFLICT."""
    found = agents.approve(db, user_code, account, body.organization_id, body.may_publish, now)
    db.commit()
    return LoginCodeOut.read(db, found, account)


@router.post("/device/{user_code}/deny", response_model=LoginCodeOut)
def deny_login(user_code: UserCodePath, account: Approving, db: Db, now: Now) -> LoginCodeOut:
    """Deny the agent: its `login` ends with access_denied."""
    found = agents.deny(db, user_code, account, now)
    db.commit()
    return LoginCodeOut.read(db, found, account)


@router.get("/organizations/{organization_id}/agents", response_model=list[AgentOut])
def list_agents(organization_id: RowIdPath, account: ListingAgents, db: Db) -> list[AgentOut]:
    """The organization's agents, newest first, revoked ones with when, why and by whom
    (owners and admins)."""
    return [
        AgentOut.model_validate(a) for a in agents.organization_agents(db, organization_id, account)
    ]


@router.post("/organizations/{organization_id}/agents/{agent_id}/revoke", response_model=AgentOut)
def revoke_agent(
    organization_id: RowIdPath, agent_id: RowIdPath, account: RevokingAgents, db: Db, now: Now
) -> AgentOut:
    """Revoke an agent (owners and admins): its token stops working at once."""
    found = agents.revoke_agent(db, organization_id, account, agent_id, now)
    db.commit()
    return AgentOut.model_validate(found)
