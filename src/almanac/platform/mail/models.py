"""The outbox: mail kept when no SMTP server is configured, for the portal to show."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import String, Text
from sqlalchemy.orm import Mapped, mapped_column

from almanac.platform.store.base import Base
from almanac.platform.store.types import UTCDateTime


class OutboxMessage(Base):
    __tablename__ = "mail_outbox"

    id: Mapped[int] = mapped_column(primary_key=True)
    to_address: Mapped[str] = mapped_column(String(320))
    subject: Mapped[str] = mapped_column(String(300))
    body: Mapped[str] = mapped_column(Text)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime())

    def __repr__(self) -> str:
        return f"OutboxMessage(id={self.id!r})"
