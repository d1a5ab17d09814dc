"""Organizations and their members' roles."""

from __future__ import annotations

from datetime import datetime

from pydantic import BaseModel, Field


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
