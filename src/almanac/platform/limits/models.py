"""The counted attempts of the limits on repeated attempts (`almanac.platform.limits`)."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import Index, String
from sqlalchemy.orm import Mapped, mapped_column

from almanac.platform.store.base import Base
from almanac.platform.store.types import UTCDateTime


class CountedAttempt(Base):
    """One attempt a limit counts: which limit, whose (the SHA-256 of the subject: an e-mail
    address, a client address or an organization; the table keeps no address in clear) and
    when. Rows are deleted once they are older than their limit's window."""

    __tablename__ = "limit_attempts"
    __table_args__ = (
        Index("ix_limit_attempts_subject", "limit_name", "subject", "at"),
        Index("ix_limit_attempts_at", "limit_name", "at"),
    )

    id: Mapped[int] = mapped_column(primary_key=True)
    limit_name: Mapped[str] = mapped_column(String(40))
    subject: Mapped[str] = mapped_column(String(64))
    at: Mapped[datetime] = mapped_column(UTCDateTime())
