"""Sign-up, e-mail verification, sign-in and the signed-in account."""

from __future__ import annotations

from datetime import datetime

from pydantic import BaseModel, Field, SecretStr


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
