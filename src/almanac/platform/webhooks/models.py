"""The webhook tables: endpoints and their plug-ins, the events outbox written in the
transaction that made each event, one delivery per event and endpoint, and every attempt."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import JSON, Boolean, ForeignKey, Index, Integer, String, Text
from sqlalchemy.orm import Mapped, mapped_column

from almanac.platform.store.base import Base
from almanac.platform.store.models import BigId
from almanac.platform.store.types import UTCDateTime


class WebhookEndpoint(Base):
    """An https address a reader registered, its signing secrets and its standing. The
    previous secret keeps signing beside the new one until `previous_until` (rotation). An
    organization's endpoint (`organization_id`) is its owners' and admins' to manage;
    `account_id` is who registered it, mailed when it is disabled."""

    __tablename__ = "webhook_endpoints"
    __table_args__ = (
        Index("ix_webhook_endpoints_account_id", "account_id"),
        Index("ix_webhook_endpoints_organization_id", "organization_id"),
    )

    id: Mapped[int] = mapped_column(BigId, primary_key=True, autoincrement=True)
    account_id: Mapped[int] = mapped_column(ForeignKey("accounts.id", ondelete="CASCADE"))
    organization_id: Mapped[int | None] = mapped_column(
        ForeignKey("organizations.id", ondelete="CASCADE")
    )
    url: Mapped[str] = mapped_column(Text)
    description: Mapped[str] = mapped_column(String(200))
    secret: Mapped[str] = mapped_column(String(80))
    previous_secret: Mapped[str | None] = mapped_column(String(80))
    previous_until: Mapped[datetime | None] = mapped_column(UTCDateTime)
    paused: Mapped[bool] = mapped_column(Boolean)
    disabled_at: Mapped[datetime | None] = mapped_column(UTCDateTime)
    failing_since: Mapped[datetime | None] = mapped_column(UTCDateTime)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime)

    def __repr__(self) -> str:
        # The secrets stay out of logs.
        return f"WebhookEndpoint(id={self.id!r})"


class WebhookSubscription(Base):
    """A plug-in whose events an endpoint receives."""

    __tablename__ = "webhook_subscriptions"
    __table_args__ = (Index("ix_webhook_subscriptions_plugin_id", "plugin_id"),)

    endpoint_id: Mapped[int] = mapped_column(
        ForeignKey("webhook_endpoints.id", ondelete="CASCADE"), primary_key=True
    )
    plugin_id: Mapped[str] = mapped_column(ForeignKey("plugins.id"), primary_key=True)


class WebhookEvent(Base):
    """One event of a plug-in (`records.changed`, `plugin.status`) and its payload, written in
    the transaction that made it: the outbox. `fanned_out_at` is when the delivery sensor made
    its deliveries, one per endpoint subscribed then (None: not yet)."""

    __tablename__ = "webhook_events"
    __table_args__ = (Index("ix_webhook_events_fanned_out_at", "fanned_out_at", "id"),)

    id: Mapped[int] = mapped_column(BigId, primary_key=True, autoincrement=True)
    plugin_id: Mapped[str] = mapped_column(ForeignKey("plugins.id"))
    type: Mapped[str] = mapped_column(String(32))
    payload: Mapped[dict[str, Any]] = mapped_column(JSON)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime)
    fanned_out_at: Mapped[datetime | None] = mapped_column(UTCDateTime)


class WebhookDelivery(Base):
    """One event for one endpoint: its state (pending, delivered, failed, skipped), the
    attempts made and when the next is due. Its id is the message's stable `webhook-id`."""

    __tablename__ = "webhook_deliveries"
    __table_args__ = (
        Index("ix_webhook_deliveries_due", "state", "next_at"),
        Index("ix_webhook_deliveries_endpoint_id_id", "endpoint_id", "id"),
    )

    id: Mapped[int] = mapped_column(BigId, primary_key=True, autoincrement=True)
    event_id: Mapped[int] = mapped_column(ForeignKey("webhook_events.id"))
    endpoint_id: Mapped[int] = mapped_column(ForeignKey("webhook_endpoints.id", ondelete="CASCADE"))
    state: Mapped[str] = mapped_column(String(16))
    attempts: Mapped[int] = mapped_column(Integer)
    next_at: Mapped[datetime | None] = mapped_column(UTCDateTime)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime)


class WebhookAttempt(Base):
    """One try of a delivery: when, the answer's status (None: no answer) and what went
    wrong."""

    __tablename__ = "webhook_attempts"
    __table_args__ = (Index("ix_webhook_attempts_delivery_id", "delivery_id"),)

    id: Mapped[int] = mapped_column(BigId, primary_key=True, autoincrement=True)
    delivery_id: Mapped[int] = mapped_column(
        ForeignKey("webhook_deliveries.id", ondelete="CASCADE")
    )
    at: Mapped[datetime] = mapped_column(UTCDateTime)
    status: Mapped[int | None] = mapped_column(Integer)
    error: Mapped[str | None] = mapped_column(String(300))
