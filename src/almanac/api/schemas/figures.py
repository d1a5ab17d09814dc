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
    total: str = Field(description="How a line is told in one figure: sum, last (a level) or max.")
    drawn: bool = Field(description="Whether any line has a value to draw.")
    empty: str = Field(description="The words a page says instead of the chart when not drawn.")
    x_kind: str = Field(description="day or hour (a count holds until the next), or moment.")


class PublisherFiguresOut(BaseModel):
    """A published plug-in's figures over the last 30 or 365 days."""

    model_config = ConfigDict(from_attributes=True)

    plugin: str
    days: int
    first: date
    last: date
    readers_now: int = Field(description="Readers who show it now.")
    installs: int = Field(description="Times a reader turned it on in the span's known days.")
    uninstalls: int = Field(description="Times a reader turned it off in the span's known days.")
    history_since: date | None = Field(
        description="The first whole day the history of shown choices covers: readers, "
        "installs and uninstalls per day are null before it (not known, not zero); null: "
        "the history covers every day."
    )
    runs: int
    review_queue_waiting: int = Field(
        description="Uploads waiting in the review queue now, every plug-in's (the queue is one)."
    )
    review_queue_median_wait_hours: float | None = Field(
        description="Median hours from submission to decision of the whole queue's decisions "
        "in the span (every plug-in's uploads); null: none decided."
    )
    plugin_review_median_wait_hours: float | None = Field(
        description="The same median of this plug-in's own uploads only; null: none decided."
    )
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
