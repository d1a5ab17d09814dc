"""The shapes of a reader's calendar feed address: whether one exists (never its secret again),
and the address once, in the answer that made it."""

from __future__ import annotations

from datetime import datetime

from pydantic import BaseModel, Field

from almanac.platform.feeds import NewFeed, ReaderFeed

FEED_PATH = "/api/v1/feeds/{secret}.ics"


def feed_addresses(base_url: str, secret: str) -> tuple[str, str]:
    """A feed's address and its webcal:// form, which calendar apps open to subscribe."""
    url = base_url.rstrip("/") + FEED_PATH.format(secret=secret)
    return url, "webcal://" + url.split("://", 1)[1]


class ReaderFeedOut(BaseModel):
    exists: bool = Field(description="Whether the reader has a feed address now.")
    created_at: datetime | None = Field(description="When the present address was made.")

    @classmethod
    def of(cls, feed: ReaderFeed | None) -> ReaderFeedOut:
        return cls(exists=feed is not None, created_at=feed.created_at if feed else None)


class ReaderFeedCreatedOut(BaseModel):
    url: str = Field(
        description="The private feed address, shown this once: anyone who has it reads the "
        "reader's shown plug-ins. Add ?language=es (or another code) for names in a language."
    )
    webcal_url: str = Field(description="The same address for calendar apps (webcal://).")
    created_at: datetime
    revoked_previous: bool = Field(description="Whether an earlier address stopped answering.")

    @classmethod
    def of(cls, made: NewFeed, base_url: str, *, revoked_previous: bool) -> ReaderFeedCreatedOut:
        """The new address, under `base_url`, in both forms: the one answer that shows it."""
        url, webcal = feed_addresses(base_url, made.secret)
        return cls(
            url=url,
            webcal_url=webcal,
            created_at=made.feed.created_at,
            revoked_previous=revoked_previous,
        )
