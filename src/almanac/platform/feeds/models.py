"""The table of readers' private calendar feed addresses: the secret kept only as its SHA-256
hash (like bearer tokens), when it was made and when it was revoked."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import ForeignKey, String
from sqlalchemy.orm import Mapped, mapped_column

from almanac.platform.store.base import Base
from almanac.platform.store.types import UTCDateTime


class ReaderFeed(Base):
    """A reader's private feed address. At most one of an account's is not revoked: making a
    new one revokes the others in the same transaction."""

    __tablename__ = "reader_feeds"

    id: Mapped[int] = mapped_column(primary_key=True)
    account_id: Mapped[int] = mapped_column(
        ForeignKey("accounts.id", ondelete="CASCADE"), index=True
    )
    secret_hash: Mapped[str] = mapped_column(String(64), unique=True)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime())
    revoked_at: Mapped[datetime | None] = mapped_column(UTCDateTime())

    def __repr__(self) -> str:
        # Never the hash: nothing of the secret reaches a log through a model.
        return f"ReaderFeed(id={self.id!r})"
