"""The alerts' tables: every alert sent (plug-in, cause, day, recipients) and the recipients
the operators chose."""

from __future__ import annotations

from datetime import date, datetime

from sqlalchemy import (
    JSON,
    CheckConstraint,
    Date,
    ForeignKey,
    Index,
    Integer,
    String,
    Text,
    UniqueConstraint,
    text,
)
from sqlalchemy.orm import Mapped, mapped_column

from almanac.platform.store.base import Base
from almanac.platform.store.types import UTCDateTime

CAUSES = ("failing", "still-failing", "held", "network")
"""Why an alert is sent: the plug-in turned Failing, stays Failing past a day, or is Held; or,
for the service as a whole (no plug-in), its network was down for the upload checks."""


class SentAlert(Base):
    """One alert sent: at most one a day per plug-in and cause (the unique key), and one a day
    per cause of the service's own (`plugin_id` None)."""

    __tablename__ = "alerts_sent"
    __table_args__ = (
        CheckConstraint(f"cause IN ({', '.join(repr(c) for c in CAUSES)})", name="cause"),
        # One a day per plug-in and cause, also when two evaluations meet.
        UniqueConstraint("plugin_id", "cause", "day"),
        # A unique key holds NULLs apart: the service's own alerts need an index of their own.
        Index(
            "uq_alerts_sent_service_cause_day",
            "cause",
            "day",
            unique=True,
            postgresql_where=text("plugin_id IS NULL"),
            sqlite_where=text("plugin_id IS NULL"),
        ),
    )

    id: Mapped[int] = mapped_column(primary_key=True)
    plugin_id: Mapped[str | None] = mapped_column(ForeignKey("plugins.id"))
    cause: Mapped[str] = mapped_column(String(16))
    day: Mapped[date] = mapped_column(Date)
    subject: Mapped[str] = mapped_column(String(300))
    detail: Mapped[str] = mapped_column(Text)
    recipients: Mapped[list[str]] = mapped_column(JSON)
    undelivered: Mapped[list[str]] = mapped_column(JSON)
    sent_at: Mapped[datetime] = mapped_column(UTCDateTime)

    def __repr__(self) -> str:
        return f"SentAlert(id={self.id!r}, plugin_id={self.plugin_id!r}, cause={self.cause!r})"


class AlertRecipients(Base):
    """The operators' choice of who receives the operators' alerts (one row, id 1); with no
    row, every operator does."""

    __tablename__ = "alert_recipients"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    addresses: Mapped[list[str]] = mapped_column(JSON)
    chosen_by: Mapped[str] = mapped_column(String(320))
    chosen_at: Mapped[datetime] = mapped_column(UTCDateTime)

    def __repr__(self) -> str:
        return f"AlertRecipients(id={self.id!r})"
