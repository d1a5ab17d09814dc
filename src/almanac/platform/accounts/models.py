"""Tables of people and organizations: accounts, e-mail verifications, web sessions, bearer
tokens, organization memberships, service staff roles and invitation requests.

Secrets are stored only as SHA-256 hashes and passwords only as argon2id hashes; no model's
repr shows either.
"""

from __future__ import annotations

from datetime import datetime
from enum import StrEnum

from sqlalchemy import CheckConstraint, ForeignKey, Index, String, Text, text
from sqlalchemy.orm import Mapped, mapped_column, relationship

from almanac.platform.store.base import Base
from almanac.platform.store.types import UTCDateTime


class OrganizationRole(StrEnum):
    OWNER = "owner"
    ADMIN = "admin"
    MEMBER = "member"
    GUEST = "guest"


class StaffRole(StrEnum):
    OPERATOR = "operator"
    REVIEWER = "reviewer"


class InvitationStatus(StrEnum):
    OPEN = "open"  # the one open request of its domain
    REPEAT = "repeat"  # asked again while the domain had an open request; kept for the limit
    INVITED = "invited"
    DECLINED = "declined"


def _in(column: str, values: type[StrEnum]) -> str:
    return f"{column} IN ({', '.join(repr(v.value) for v in values)})"


class _Plain:
    """A repr naming only the id, so no secret or hash ever reaches a log through a model."""

    id: Mapped[int]

    def __repr__(self) -> str:
        return f"{type(self).__name__}(id={self.id!r})"


class Account(_Plain, Base):
    __tablename__ = "accounts"

    id: Mapped[int] = mapped_column(primary_key=True)
    email: Mapped[str] = mapped_column(String(320))
    # The address lower-cased: two spellings of one address are one account.
    email_key: Mapped[str] = mapped_column(String(320), unique=True)
    password_hash: Mapped[str] = mapped_column(String(255))
    created_at: Mapped[datetime] = mapped_column(UTCDateTime())
    verified_at: Mapped[datetime | None] = mapped_column(UTCDateTime())

    @property
    def verified(self) -> bool:
        return self.verified_at is not None


class EmailVerification(_Plain, Base):
    __tablename__ = "email_verifications"

    id: Mapped[int] = mapped_column(primary_key=True)
    account_id: Mapped[int] = mapped_column(ForeignKey("accounts.id", ondelete="CASCADE"))
    token_hash: Mapped[str] = mapped_column(String(64), unique=True)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime())
    expires_at: Mapped[datetime] = mapped_column(UTCDateTime())
    used_at: Mapped[datetime | None] = mapped_column(UTCDateTime())


class WebSession(_Plain, Base):
    __tablename__ = "web_sessions"

    id: Mapped[int] = mapped_column(primary_key=True)
    account_id: Mapped[int] = mapped_column(
        ForeignKey("accounts.id", ondelete="CASCADE"), index=True
    )
    token_hash: Mapped[str] = mapped_column(String(64), unique=True)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime())
    expires_at: Mapped[datetime] = mapped_column(UTCDateTime())
    ended_at: Mapped[datetime | None] = mapped_column(UTCDateTime())

    account: Mapped[Account] = relationship(lazy="joined")


class ApiToken(_Plain, Base):
    __tablename__ = "api_tokens"

    id: Mapped[int] = mapped_column(primary_key=True)
    account_id: Mapped[int] = mapped_column(
        ForeignKey("accounts.id", ondelete="CASCADE"), index=True
    )
    name: Mapped[str] = mapped_column(String(100))
    token_hash: Mapped[str] = mapped_column(String(64), unique=True)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime())
    last_used_at: Mapped[datetime | None] = mapped_column(UTCDateTime())
    revoked_at: Mapped[datetime | None] = mapped_column(UTCDateTime())

    account: Mapped[Account] = relationship(lazy="joined")


class Organization(_Plain, Base):
    __tablename__ = "organizations"

    id: Mapped[int] = mapped_column(primary_key=True)
    name: Mapped[str] = mapped_column(String(200))
    domain: Mapped[str | None] = mapped_column(String(253))
    created_at: Mapped[datetime] = mapped_column(UTCDateTime())
    created_by: Mapped[int] = mapped_column(ForeignKey("accounts.id"))


class Membership(_Plain, Base):
    """One stay of a person in an organization; leaving sets `left_at` and keeps the row, so a
    former member stays on record yet is never part of an audience."""

    __tablename__ = "organization_members"
    __table_args__ = (
        CheckConstraint(_in("role", OrganizationRole), name="role"),
        Index(
            "uq_organization_members_current",
            "organization_id",
            "account_id",
            unique=True,
            postgresql_where=text("left_at IS NULL"),
            sqlite_where=text("left_at IS NULL"),
        ),
    )

    id: Mapped[int] = mapped_column(primary_key=True)
    organization_id: Mapped[int] = mapped_column(
        ForeignKey("organizations.id", ondelete="CASCADE"), index=True
    )
    account_id: Mapped[int] = mapped_column(ForeignKey("accounts.id"), index=True)
    role: Mapped[str] = mapped_column(String(16))
    joined_at: Mapped[datetime] = mapped_column(UTCDateTime())
    left_at: Mapped[datetime | None] = mapped_column(UTCDateTime())

    account: Mapped[Account] = relationship(lazy="joined")


class StaffGrant(_Plain, Base):
    """A service staff role (operator or reviewer) held by an account until `revoked_at`."""

    __tablename__ = "staff_roles"
    __table_args__ = (
        CheckConstraint(_in("role", StaffRole), name="role"),
        Index(
            "uq_staff_roles_current",
            "account_id",
            "role",
            unique=True,
            postgresql_where=text("revoked_at IS NULL"),
            sqlite_where=text("revoked_at IS NULL"),
        ),
    )

    id: Mapped[int] = mapped_column(primary_key=True)
    account_id: Mapped[int] = mapped_column(ForeignKey("accounts.id"), index=True)
    role: Mapped[str] = mapped_column(String(16))
    granted_at: Mapped[datetime] = mapped_column(UTCDateTime())
    # None when granted from the command line by whoever runs the machine.
    granted_by: Mapped[int | None] = mapped_column(ForeignKey("accounts.id"))
    revoked_at: Mapped[datetime | None] = mapped_column(UTCDateTime())

    account: Mapped[Account] = relationship(lazy="joined", foreign_keys=[account_id])


class InvitationRequest(_Plain, Base):
    """A request to be invited to publish ("Endpoints", invitations); it belongs to the domain."""

    __tablename__ = "invitation_requests"
    __table_args__ = (
        CheckConstraint(_in("status", InvitationStatus), name="status"),
        Index(
            "uq_invitation_requests_open_domain",
            "domain",
            unique=True,
            postgresql_where=text("status = 'open'"),
            sqlite_where=text("status = 'open'"),
        ),
        Index("ix_invitation_requests_email_key_created_at", "email_key", "created_at"),
    )

    id: Mapped[int] = mapped_column(primary_key=True)
    email: Mapped[str] = mapped_column(String(320))
    email_key: Mapped[str] = mapped_column(String(320))
    organization: Mapped[str] = mapped_column(String(200))
    domain: Mapped[str] = mapped_column(String(253))
    note: Mapped[str] = mapped_column(Text)
    status: Mapped[str] = mapped_column(String(16))
    created_at: Mapped[datetime] = mapped_column(UTCDateTime())
