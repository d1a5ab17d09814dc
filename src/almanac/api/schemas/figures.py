"""The shapes of the figures drawn for publishers and operators: counts only, never who."""

from __future__ import annotations

from datetime import date, datetime

from pydantic import BaseModel, ConfigDict, Field


class LineOut(BaseModel):
    model_config = ConfigDict(from_attributes=True)

    label: str
    values: list[float | None]


class FigureOut(BaseModel):
    model_config = ConfigDict(from_attributes=True)

    key: str
    title: str
    label: str = Field(description="What the y axis counts.")
    x: list[str] = Field(description="Dates, hours or moments (ISO), one per value.")
    lines: list[LineOut]


class PublisherFiguresOut(BaseModel):
    """A published plug-in's figures over the last 30 or 365 days."""

    model_config = ConfigDict(from_attributes=True)

    plugin: str
    days: int
    first: date
    last: date
    readers_now: int = Field(description="Readers who show it now.")
    installs: int = Field(description="Readers who turned it on in the span and still show it.")
    runs: int
    review_waiting: int = Field(description="Uploads in the review queue now (every plug-in's).")
    review_median_wait_hours: float | None
    figures: list[FigureOut]


class OperatorFiguresOut(BaseModel):
    """The host's figures over the last day or week, by hour."""

    model_config = ConfigDict(from_attributes=True)

    days: int
    since: datetime
    until: datetime
    runs: int
    queue_now: int = Field(description="Run requests due and not yet taken.")
    longest_wait_seconds: float | None = Field(description="From due to start, in the span.")
    duration_p50: float | None
    duration_p90: float | None
    duration_p99: float | None
    figures: list[FigureOut]
