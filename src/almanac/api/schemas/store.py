"""Shapes of the store readers browse (`/api/v1/store`)."""

from __future__ import annotations

from datetime import date, datetime
from typing import Any

from pydantic import BaseModel, Field

from almanac.api.schemas.pictures import SeriesChartOut
from almanac.platform.publishing.publication.storefront import ExampleDay, StoreEntry, StorePage


class StoreEntryOut(BaseModel):
    """A plug-in as the store lists it, in the reader's language."""

    plugin_id: str
    name: str
    tagline: str
    category: str
    publisher_domain: str | None
    verified: bool = Field(description="the publisher's domain carries the verified mark")
    icon: str | None = Field(description="address of the listing's icon (PNG)")
    installed: bool

    @classmethod
    def of(cls, entry: StoreEntry) -> StoreEntryOut:
        return cls(
            plugin_id=entry.plugin_id,
            name=entry.name,
            tagline=entry.tagline,
            category=entry.category,
            publisher_domain=entry.publisher_domain,
            verified=entry.verified,
            icon=f"/api/v1/store/plugins/{entry.plugin_id}/icon.png" if entry.has_icon else None,
            installed=entry.installed,
        )


class StoreExampleDayOut(BaseModel):
    """A listing example: its caption and the day as a reader sees it."""

    date: date
    caption: str
    day: dict[str, Any] = Field(description="the day's {date, sections}, as /reader/days draws")

    @classmethod
    def of(cls, example: ExampleDay) -> StoreExampleDayOut:
        return cls(date=example.date, caption=example.caption, day=dict(example.day))


class StorePageOut(BaseModel):
    """A plug-in's store page."""

    entry: StoreEntryOut
    description: str
    keywords: list[str]
    links: dict[str, Any]
    sources: list[dict[str, Any]] = Field(
        description="per source: name, title, page, licence {name, url}"
    )
    examples: list[StoreExampleDayOut]
    chart: SeriesChartOut | None = Field(
        description="a value series drawn from the listing's example records over all their "
        "days to the fixtures' today, as /reader/plugins/{id}/series/{series}/chart draws; "
        "null when the listing has no example or no value series"
    )
    schedule: str
    timezone: str
    schedule_words: str = Field(
        description="the schedule in the app's words, e.g. every weekday at 16:00 Europe/Prague"
    )
    version: str
    last_success: datetime | None
    listing_state: str = Field(description="listed, unlisted, shelved, taken-down or retired")
    in_store: bool
    takedown_message: str | None

    @classmethod
    def of(cls, page: StorePage) -> StorePageOut:
        return cls(
            entry=StoreEntryOut.of(page.entry),
            description=page.description,
            keywords=list(page.keywords),
            links=dict(page.links),
            sources=[dict(s) for s in page.sources],
            examples=[StoreExampleDayOut.of(e) for e in page.examples],
            chart=SeriesChartOut.model_validate(page.chart) if page.chart else None,
            schedule=page.schedule,
            timezone=page.timezone,
            schedule_words=page.schedule_words,
            version=page.version,
            last_success=page.last_success,
            listing_state=page.listing_state,
            in_store=page.in_store,
            takedown_message=page.takedown_message,
        )
