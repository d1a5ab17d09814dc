"""Tables of agent access ("Agent login"; "Authentication" 4-5): the device codes of the login
grant (RFC 8628) and the agent tokens an approval issues."""

from __future__ import annotations

from datetime import datetime
from enum import StrEnum

from sqlalchemy import Boolean, CheckConstraint, ForeignKey, Index, Integer, String
from sqlalchemy.orm import Mapped, mapped_column

from almanac.platform.store.base import Base
from almanac.platform.store.types import UTCDateTime


class DeviceCodeState(StrEnum):
    """A login code's state; an expired one is still `pending` or `approved` in its row and
    ended by its `expires_at`."""

    PENDING = "pending"  # waiting for an owner or admin
    APPROVED = "approved"  # approved; the token is handed to the next poll
    DENIED = "denied"  # an owner or admin denied it
    ISSUED = "issued"  # the token was handed out: the code is used up


class RevokeReason(StrEnum):
    """Why an agent token stopped working ("Agent login": token -> revoked)."""

    LOGOUT = "logout"  # the tool's `logout`
    PORTAL = "portal"  # Revoke in the portal, by an owner or admin
    NEW_LOGIN = "new-login"  # a new login on the same machine
    APPROVER_LEFT = "approver-left"  # its approver is no longer owner or admin


def _in(column: str, values: type[StrEnum]) -> str:
    return f"{column} IN ({', '.join(repr(v.value) for v in values)})"


class DeviceCode(Base):
    """One `login`: the device code (kept only as a hash), the short user code a person types,
    the agent's name and machine, the polling interval and the last poll, and the decision."""

    __tablename__ = "agent_device_codes"
    __table_args__ = (
        CheckConstraint(_in("state", DeviceCodeState), name="state"),
        Index("ix_agent_device_codes_expires_at", "expires_at"),
    )

    id: Mapped[int] = mapped_column(primary_key=True)
    device_code_hash: Mapped[str] = mapped_column(String(64), unique=True)
    user_code: Mapped[str] = mapped_column(String(8), unique=True)
    agent_name: Mapped[str] = mapped_column(String(200))
    machine_id: Mapped[str] = mapped_column(String(64))
    state: Mapped[str] = mapped_column(String(16))
    created_at: Mapped[datetime] = mapped_column(UTCDateTime())
    expires_at: Mapped[datetime] = mapped_column(UTCDateTime())
    interval: Mapped[int] = mapped_column(Integer)
    last_polled_at: Mapped[datetime | None] = mapped_column(UTCDateTime())
    organization_id: Mapped[int | None] = mapped_column(
        ForeignKey("organizations.id", ondelete="CASCADE")
    )
    decided_by: Mapped[int | None] = mapped_column(ForeignKey("accounts.id"))
    decided_at: Mapped[datetime | None] = mapped_column(UTCDateTime())
    may_publish: Mapped[bool] = mapped_column(Boolean, default=False)

    def __repr__(self) -> str:
        return f"DeviceCode(id={self.id!r}, state={self.state!r})"


class AgentToken(Base):
    """An agent's bearer token (kept only as a SHA-256 hash): bound to one organization, the
    owner or admin who approved it, whether it may publish, the agent's name and its machine."""

    __tablename__ = "agent_tokens"
    __table_args__ = (
        CheckConstraint(
            f"revoked_reason IS NULL OR {_in('revoked_reason', RevokeReason)}",
            name="revoked_reason",
        ),
        Index("ix_agent_tokens_organization_id", "organization_id"),
        Index("ix_agent_tokens_machine_id", "machine_id"),
    )

    id: Mapped[int] = mapped_column(primary_key=True)
    token_hash: Mapped[str] = mapped_column(String(64), unique=True)
    organization_id: Mapped[int] = mapped_column(ForeignKey("organizations.id", ondelete="CASCADE"))
    approved_by: Mapped[int] = mapped_column(ForeignKey("accounts.id"))
    may_publish: Mapped[bool] = mapped_column(Boolean)
    agent_name: Mapped[str] = mapped_column(String(200))
    machine_id: Mapped[str] = mapped_column(String(64))
    device_code_id: Mapped[int | None] = mapped_column(
        ForeignKey("agent_device_codes.id", ondelete="SET NULL")
    )
    created_at: Mapped[datetime] = mapped_column(UTCDateTime())
    last_used_at: Mapped[datetime | None] = mapped_column(UTCDateTime())
    revoked_at: Mapped[datetime | None] = mapped_column(UTCDateTime())
    revoked_reason: Mapped[str | None] = mapped_column(String(16))
    revoked_by: Mapped[str | None] = mapped_column(String(320))

    def __repr__(self) -> str:
        return f"AgentToken(id={self.id!r}, organization_id={self.organization_id!r})"
