"""Organizations and their members' roles."""

from __future__ import annotations

from datetime import datetime

from pydantic import BaseModel, Field

from almanac.platform.accounts import Membership, Organization


class OrganizationIn(BaseModel):
    name: str = Field(min_length=1, max_length=200)
    domain: str | None = Field(default=None, max_length=253)


class OrganizationOut(BaseModel):
    id: int
    name: str
    domain: str | None
    created_at: datetime
    role: str

    @classmethod
    def of(cls, org: Organization, role: str) -> OrganizationOut:
        """The organization with the viewer's role in it."""
        return cls(
            id=org.id, name=org.name, domain=org.domain, created_at=org.created_at, role=role
        )


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

    @classmethod
    def of(cls, row: Membership) -> MemberOut:
        return cls(
            account_id=row.account_id,
            email=row.account.email,
            role=row.role,
            joined_at=row.joined_at,
        )
