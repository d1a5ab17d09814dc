"""Agent login (RFC 8628 device grant) and the portal's agents: the device authorization and
token answers, OAuth errors, a login code as its approver sees it, an agent."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated

from pydantic import BaseModel, ConfigDict, Field
from sqlalchemy.orm import Session

from almanac.api.schemas import RowId
from almanac.platform import accounts
from almanac.platform.accounts import Account
from almanac.platform.accounts.organizations import MANAGERS
from almanac.platform.agents.device import DeviceAuthorization, LoginView
from almanac.platform.agents.tokens import NewAgentToken


class DeviceAuthorizationOut(BaseModel):
    """RFC 8628 section 3.2."""

    device_code: Annotated[str, Field(description="What the tool polls with; shown only here.")]
    user_code: Annotated[str, Field(description="What a person types at the approval address.")]
    verification_uri: str
    verification_uri_complete: str
    expires_in: int
    interval: int

    @classmethod
    def of(cls, started: DeviceAuthorization, approval: str) -> DeviceAuthorizationOut:
        """The started login, to be approved at the address `approval`."""
        return cls(
            device_code=started.device_code,
            user_code=started.user_code,
            verification_uri=approval,
            verification_uri_complete=f"{approval}?user_code={started.user_code}",
            expires_in=started.expires_in,
            interval=started.interval,
        )


class DeviceTokenOut(BaseModel):
    """RFC 8628 section 3.5 / RFC 6749 section 5.1, with what the token was approved for."""

    access_token: str = Field(description="The agent's token: shown only here.")
    token_type: str = "Bearer"
    agent_id: int
    agent_name: str
    organization_id: int
    may_publish: bool

    @classmethod
    def of(cls, issued: NewAgentToken) -> DeviceTokenOut:
        """The token issued to the agent, with its secret this once."""
        token = issued.token
        return cls(
            access_token=issued.secret,
            agent_id=token.id,
            agent_name=token.agent_name,
            organization_id=token.organization_id,
            may_publish=token.may_publish,
        )


class OAuthErrorOut(BaseModel):
    """RFC 6749 section 5.2: `authorization_pending`, `slow_down`, `access_denied`,
    `expired_token`, `invalid_grant`, `invalid_request`, `invalid_client`,
    `unsupported_grant_type`."""

    error: str
    error_description: str | None = None
    interval: int | None = Field(
        default=None, description="With `slow_down`: the seconds to wait between polls now."
    )


class ApprovableOrganizationOut(BaseModel):
    id: int
    name: str


class LoginCodeOut(BaseModel):
    """A login code as an owner or admin sees it at the approval address."""

    user_code: str
    agent_name: str
    state: str = Field(description="pending, approved, denied, issued or expired")
    created_at: datetime
    expires_at: datetime
    organization_id: int | None
    may_publish: bool
    decided_at: datetime | None
    organizations: list[ApprovableOrganizationOut] = Field(
        description="The organizations the viewer may approve the agent for."
    )

    @classmethod
    def read(cls, db: Session, found: LoginView, viewer: Account) -> LoginCodeOut:
        """The login code as `viewer` sees it, with the organizations they manage."""
        managed = [
            ApprovableOrganizationOut(id=org.id, name=org.name)
            for org, role in accounts.organizations_of(db, viewer)
            if role in MANAGERS
        ]
        return cls(
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


class LoginApprovalIn(BaseModel):
    organization_id: RowId
    may_publish: bool = False


class AgentOut(BaseModel):
    model_config = ConfigDict(from_attributes=True)  # agents.AgentView, field for field

    id: int
    organization_id: int
    agent_name: str
    approved_by: str
    may_publish: bool
    created_at: datetime
    last_used_at: datetime | None
    active: bool
    revoked_at: datetime | None
    revoked_reason: str | None = Field(description="logout, portal, new-login or approver-left")
    revoked_by: str | None
