"""The shapes of a reader's pictures: a series chart's data, and the calendar as it stood at a
moment with the records revised since."""

from __future__ import annotations

from datetime import date, datetime
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from almanac.platform.audience.pictures import PluginDaysAsOf, RevisedRecord


class ChartPointOut(BaseModel):
    model_config = ConfigDict(from_attributes=True)

    date: str
    value: float | None = Field(description="The figure drawn that day; null: nothing drawn.")
    text: str | None
    spoken: str | None
    style: str | None = Field(
        description="normal (a record of that day), in-force or last (rule 5), null."
    )
    note: str | None
    change: str | None


class EventMarkOut(BaseModel):
    model_config = ConfigDict(from_attributes=True)

    date: str
    state: str = Field(description="happened, scheduled, moved or cancelled (rule 6).")
    value: float | None
    text: str | None
    label: str
    note: str | None


class SeriesChartOut(BaseModel):
    """A series over a range, filled as the reader's days are (rule 5), or an event series'
    happened values and scheduled events (rule 6)."""

    model_config = ConfigDict(from_attributes=True)

    plugin: str
    series: str
    kind: str
    name: str
    field: str | None
    field_label: str | None
    fields: list[tuple[str, str]]
    unit: str | None
    unit_words: str | None
    range: str
    today: str
    first: str
    last: str
    title: str = Field(description="The figure's accessible name.")
    points: list[ChartPointOut]
    start: EventMarkOut | None
    marks: list[EventMarkOut]


class RecordChangeOut(BaseModel):
    model_config = ConfigDict(from_attributes=True)

    when: datetime = Field(description="When the change became known (was written).")
    run: int
    before: dict[str, Any] | None = Field(description="null: the record did not stand.")
    after: dict[str, Any] | None = Field(description="null: withdrawn.")


class RevisedRecordOut(BaseModel):
    model_config = ConfigDict(from_attributes=True)

    series: str
    date: date
    key: str = Field(description="The period of a value, the id of an event or item.")
    changes: list[RecordChangeOut]


class PluginDaysAsOfOut(BaseModel):
    plugin: str
    status: str
    notice: str | None
    days: list[dict[str, Any]]
    revised: list[RevisedRecordOut]


class DaysAsOfOut(BaseModel):
    """The reader's days drawn from the records as they stood at `as_of`."""

    from_: date = Field(alias="from")
    to: date
    today: date
    language: str
    as_of: datetime
    plugins: list[PluginDaysAsOfOut]

    @classmethod
    def of(
        cls,
        found: list[PluginDaysAsOf],
        *,
        first: date,
        last: date,
        today: date,
        language: str,
        as_of: datetime,
    ) -> DaysAsOfOut:
        return cls.model_validate(
            {
                "from": first,
                "to": last,
                "today": today,
                "language": language,
                "as_of": as_of,
                "plugins": [
                    {
                        "plugin": f.days.plugin,
                        "status": f.days.status,
                        "notice": f.days.notice,
                        "days": f.days.days,
                        "revised": [_revised(r) for r in f.revised],
                    }
                    for f in found
                ],
            }
        )


def _revised(revised: RevisedRecord) -> RevisedRecordOut:
    return RevisedRecordOut.model_validate(revised)
