"""Agent login (RFC 8628 device grant) and the portal's agents: the device authorization and
token answers, OAuth errors, a login code as its approver sees it, an agent."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated

from pydantic import BaseModel, Field

from almanac.api.schemas import RowId


class DeviceAuthorizationOut(BaseModel):
    """RFC 8628 section 3.2."""

    device_code: Annotated[str, Field(description="What the tool polls with; shown only here.")]
    user_code: Annotated[str, Field(description="What a person types at the approval address.")]
    verification_uri: str
    verification_uri_complete: str
    expires_in: int
    interval: int


class DeviceTokenOut(BaseModel):
    """RFC 8628 section 3.5 / RFC 6749 section 5.1, with what the token was approved for."""

    access_token: str = Field(description="The agent's token: shown only here.")
    token_type: str = "Bearer"
    agent_id: int
    agent_name: str
    organization_id: int
    may_publish: bool


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


class LoginApprovalIn(BaseModel):
    organization_id: RowId
    may_publish: bool = False


class AgentOut(BaseModel):
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
