"""Service staff: roles, the mail outbox, invitation requests."""

from __future__ import annotations

from datetime import datetime

from pydantic import BaseModel, ConfigDict, Field

from almanac.platform.accounts import StaffGrant


class StaffGrantIn(BaseModel):
    email: str = Field(max_length=320)
    role: str


class StaffGrantOut(BaseModel):
    account_id: int
    email: str
    role: str
    granted_at: datetime

    @classmethod
    def of(cls, row: StaffGrant) -> StaffGrantOut:
        return cls(
            account_id=row.account_id,
            email=row.account.email,
            role=row.role,
            granted_at=row.granted_at,
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
