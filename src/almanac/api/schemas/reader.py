"""The shapes of the reader API: visible plug-ins, preferences, organization defaults, reports."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import date, datetime
from typing import Annotated

from fastapi import Query
from pydantic import BaseModel, Field

from almanac.platform import audience
from almanac.platform.audience import ReadablePlugin, Shown

Language = Annotated[
    str, Query(max_length=35, description="The reader's language code, such as en or es-DO.")
]


class ReaderPluginOut(BaseModel):
    id: str
    name: str
    audience: str
    status: str = Field(description="running, failing, paused or pending (rule 9).")
    taken_down: bool
    notice: str | None = Field(description="The public message of a taken-down plug-in.")
    shown: bool = Field(description="Whether its section is drawn on the reader's days.")
    choice: bool | None = Field(description="The reader's own plugins.<id>.shown.")
    organization_default: bool | None
    unlisted: bool = Field(
        description="Published through the portal and no longer in the store: it stays for the "
        "readers who installed it, and nobody new installs it."
    )

    @classmethod
    def of(
        cls, plugin: ReadablePlugin, shown: Shown, language: str, *, unlisted: bool
    ) -> ReaderPluginOut:
        """The plug-in as the reader sees it, named in `language`, with their `shown`."""
        return cls(
            id=plugin.id,
            name=plugin.display_name(language),
            audience=plugin.audience,
            status=plugin.status,
            taken_down=plugin.taken_down,
            notice=plugin.takedown_message if plugin.taken_down else None,
            shown=shown.shown,
            choice=shown.choice,
            organization_default=shown.organization_default,
            unlisted=unlisted,
        )


class PreferencesIn(BaseModel):
    preferences: dict[str, bool | None] = Field(
        description="plugins.<id>.shown to true or false; null clears the choice."
    )


class PreferencesOut(BaseModel):
    preferences: dict[str, bool | None] = Field(
        description="The reader's own choice for every plug-in they may read; null = none."
    )
    organization_defaults: dict[str, bool]
    shown: list[str] = Field(description="The plug-ins drawn on the reader's days.")

    @classmethod
    def of(cls, shown: Mapping[str, Shown]) -> PreferencesOut:
        """The reader's `shown` of each plug-in they may read, by plug-in id."""
        return cls(
            preferences={audience.shown_key(p): s.choice for p, s in shown.items()},
            organization_defaults={
                audience.shown_key(p): s.organization_default
                for p, s in shown.items()
                if s.organization_default is not None
            },
            shown=[p for p, s in shown.items() if s.shown],
        )


class OrganizationDefaultIn(BaseModel):
    shown: bool | None


class OrganizationDefaultOut(BaseModel):
    organization_id: int
    plugin: str
    shown: bool | None

    @classmethod
    def of(cls, organization_id: int, plugin_id: str, shown: bool | None) -> OrganizationDefaultOut:
        """The default the organization's members now have for the plug-in."""
        return cls(organization_id=organization_id, plugin=plugin_id, shown=shown)


class ReportIn(BaseModel):
    category: str = Field(max_length=32)
    note: str = Field(default="", max_length=2000)
    day: date | None = None


class ReportOut(BaseModel):
    id: int
    plugin: str
    category: str
    note: str
    day: date | None
    created_at: datetime

    @classmethod
    def of(cls, view: audience.ReportView) -> ReportOut:
        return cls(
            id=view.id,
            plugin=view.plugin_id,
            category=view.category,
            note=view.note,
            day=view.day,
            created_at=view.created_at,
        )
