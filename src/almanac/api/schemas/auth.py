"""Sign-up, e-mail verification, sign-in and the signed-in account."""

from __future__ import annotations

from datetime import datetime

from pydantic import BaseModel, ConfigDict, Field, SecretStr
from sqlalchemy.orm import Session

from almanac.platform import accounts
from almanac.platform.accounts import Account


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

    @classmethod
    def read(cls, db: Session, account: Account) -> AccountOut:
        """The account with its staff roles and the organizations it is a member of."""
        return cls(
            id=account.id,
            email=account.email,
            verified=account.verified,
            created_at=account.created_at,
            staff_roles=sorted(r.value for r in accounts.staff_roles(db, account)),
            organizations=[
                OrganizationRef(id=org.id, name=org.name, role=role)
                for org, role in accounts.organizations_of(db, account)
            ],
        )


class VerifiedOut(BaseModel):
    model_config = ConfigDict(from_attributes=True)  # read off the Account just verified

    verified: bool
    email: str
