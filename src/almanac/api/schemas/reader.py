"""The shapes of the reader API: visible plug-ins, preferences, organization defaults, reports."""

from __future__ import annotations

from datetime import date, datetime
from typing import Annotated

from fastapi import Query
from pydantic import BaseModel, Field

from almanac.platform import audience

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


class OrganizationDefaultIn(BaseModel):
    shown: bool | None


class OrganizationDefaultOut(BaseModel):
    organization_id: int
    plugin: str
    shown: bool | None


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
