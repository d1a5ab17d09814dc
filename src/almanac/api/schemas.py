"""The shapes the API takes and gives. Passwords are SecretStr so no repr or log shows them."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated

from fastapi import Path, Query
from pydantic import BaseModel, ConfigDict, Field, SecretStr

# A row id the request names. Accounts, organizations and tokens have PostgreSQL INTEGER ids,
# plug-in versions BIGINT ones: a number outside the column's range names no row, and must be
# refused here (422) rather than reach the database, which fails the statement (a 500).
INTEGER_ID_MAX = 2**31 - 1
BIGINT_ID_MAX = 2**63 - 1
RowId = Annotated[int, Field(ge=1, le=INTEGER_ID_MAX)]
RowIdPath = Annotated[int, Path(ge=1, le=INTEGER_ID_MAX)]
RowIdQuery = Annotated[int | None, Query(ge=1, le=INTEGER_ID_MAX)]
VersionIdPath = Annotated[int, Path(ge=1, le=BIGINT_ID_MAX)]


class SignUpIn(BaseModel):
    email: str = Field(max_length=320)
    password: SecretStr


class SignInIn(BaseModel):
    email: str = Field(max_length=320)
    password: SecretStr


class OrganizationRef(BaseModel):
    id: int
    name: str
    role: str


class AccountOut(BaseModel):
    id: int
    email: str
    verified: bool
    created_at: datetime
    staff_roles: list[str] = []
    organizations: list[OrganizationRef] = []


class VerifiedOut(BaseModel):
    verified: bool
    email: str


class TokenIn(BaseModel):
    name: str = Field(min_length=1, max_length=100)


class TokenOut(BaseModel):
    model_config = ConfigDict(from_attributes=True)

    id: int
    name: str
    created_at: datetime
    last_used_at: datetime | None
    revoked_at: datetime | None


class TokenCreatedOut(TokenOut):
    token: str = Field(description="The token itself: shown only in this response.")


class OrganizationIn(BaseModel):
    name: str = Field(min_length=1, max_length=200)
    domain: str | None = Field(default=None, max_length=253)


class OrganizationOut(BaseModel):
    id: int
    name: str
    domain: str | None
    created_at: datetime
    role: str


class MemberIn(BaseModel):
    email: str = Field(max_length=320)
    role: str


class RoleIn(BaseModel):
    role: str


class MemberOut(BaseModel):
    account_id: int
    email: str
    role: str
    joined_at: datetime


class StaffGrantIn(BaseModel):
    email: str = Field(max_length=320)
    role: str


class StaffGrantOut(BaseModel):
    account_id: int
    email: str
    role: str
    granted_at: datetime


class InvitationIn(BaseModel):
    email: str = Field(max_length=320)
    organization: str = Field(max_length=200)
    domain: str = Field(max_length=253)
    note: str = Field(max_length=2000)


class InvitationOut(BaseModel):
    status: str = "received"
    message: str = (
        "Thank you. If an invitation can be given for this domain, it will be sent by e-mail."
    )


class OutboxMessageOut(BaseModel):
    model_config = ConfigDict(from_attributes=True)

    id: int
    to_address: str
    subject: str
    body: str
    created_at: datetime


class InvitationRequestOut(BaseModel):
    model_config = ConfigDict(from_attributes=True)

    id: int
    email: str
    organization: str
    domain: str
    note: str
    created_at: datetime
