"""A series drawn as a chart over a range of days (the readers' pictures of a series; spec
"Reader presentation rules" 2, 5, 6, 8 and 10 decide what each day shows).

A value series' chart has one point per day of the range, filled exactly as the day rows fill
them (rule 5, through `render.reading`): a day with a record draws its figure; a day before the
series' newest record draws the value in force, a day after it the last rate, each marked as
such (never a new point); nothing before the first record or after the reader's today. An event
series' chart is a step line of its happened values (rule 6), starting from the value in force
at the range's first day, with its scheduled events marked ahead of the reader's today.

Names follow rule 2 (the reader's language, then `en`, then the first listed), the app's own
words and dates rule 10 (English only at present), units rule 8.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import date, timedelta
from typing import TYPE_CHECKING, Literal

from almanac.platform.contract.manifest import Manifest, Series
from almanac.platform.errors import Invalid, NotFound
from almanac.platform.reader.numbers import is_number, two_decimals
from almanac.platform.reader.render import EventRow, Record, ValueRow, reading
from almanac.platform.reader.words import MONTHS, UNIT_WORDS, spoken

if TYPE_CHECKING:
    from almanac.platform.reader.render import _Reading

ChartRange = Literal["month", "year", "all"]
RANGES: tuple[str, ...] = ("month", "year", "all")
RANGE_DAYS = {"month": 31, "year": 365}
"""Days a `month` and a `year` chart cover, the reader's today the last of them."""
AHEAD_DAYS = {"month": 31, "year": 365, "all": 365}
"""Days after the reader's today an event chart marks scheduled events on."""


@dataclass(frozen=True, slots=True)
class ChartPoint:
    """A day of a value chart: the figure drawn (None: nothing drawn), its two-decimal text and
    spoken form, the day row's style (`normal` for a record of that day, `in-force`, `last`),
    its note ("Rate of <date>", "Last rate <date>") and, on a record's own day, its change."""

    date: str
    value: float | None
    text: str | None
    spoken: str | None
    style: str | None
    note: str | None
    change: str | None


@dataclass(frozen=True, slots=True)
class EventMark:
    """An event of an event chart: `happened` (with its value when it has one), `scheduled`,
    `moved` (its old date) or `cancelled`, with the label and note of its day row."""

    date: str
    state: str
    value: float | None
    text: str | None
    label: str
    note: str | None


@dataclass(frozen=True, slots=True)
class SeriesChart:
    """What a chart of one series over `first`..`last` draws, and its words: `title` is the
    figure's accessible name."""

    plugin: str
    series: str
    kind: str
    name: str
    field: str | None
    field_label: str | None
    fields: tuple[tuple[str, str], ...]
    unit: str | None
    unit_words: str | None
    range: str
    today: str
    first: str
    last: str
    title: str
    points: tuple[ChartPoint, ...]
    start: EventMark | None
    marks: tuple[EventMark, ...]


def chart_series(manifest: Manifest, key: str, kept: Sequence[Series] = ()) -> Series:
    """The value or event series `key` of the plug-in (or a kept one); NOT-FOUND otherwise."""
    for series in (*manifest.series, *kept):
        if series.key == key:
            if series.kind == "item":
                raise Invalid(f"series: {key} holds items, which have no figures to draw")
            return series
    drawn = ", ".join(s.key for s in (*manifest.series, *kept) if s.kind != "item")
    raise NotFound(f"series {key} is not a series of {manifest.id}; its charts: {drawn}")


def check_chart_range(value: str) -> ChartRange:
    """`month`, `year` or `all`, else REQUEST-INVALID naming the parameter."""
    if value == "month":
        return "month"
    if value == "year":
        return "year"
    if value == "all":
        return "all"
    raise Invalid(f"range: {value!r} is not one of {', '.join(RANGES)}")


def chart_span(
    series: Series, span: ChartRange, today: date, first_record: date | None
) -> tuple[date, date]:
    """The days a chart covers: the `month` or `year` ending on the reader's today, or `all`
    from the series' first record; an event chart goes on past today to mark what is
    scheduled."""
    if span == "all":
        first = min(first_record or today, today)
    else:
        first = today - timedelta(days=RANGE_DAYS[span] - 1)
    last = today + timedelta(days=AHEAD_DAYS[span]) if series.kind == "event" else today
    return first, last


def series_chart(
    manifest: Manifest,
    records: Iterable[Record],
    *,
    series: Series,
    field: str | None,
    span: ChartRange,
    first: date,
    last: date,
    today: date,
    language: str = "en",
    kept: Sequence[Series] = (),
) -> SeriesChart:
    """The chart of `series` (its `field`, the `change` field or the first when None) over
    `first`..`last` for a reader whose day is `today`, from the plug-in's records in
    `render_days`' shape (the records of the range, the newest before it and the first after
    it are enough)."""
    drawn = reading(manifest, records, today, language, kept)
    name = drawn.series_name(series)
    unit_words = UNIT_WORDS.get(series.unit, series.unit) if series.unit else None
    days = [(first + timedelta(days=n)).isoformat() for n in range((last - first).days + 1)]
    points: tuple[ChartPoint, ...] = ()
    marks: tuple[EventMark, ...] = ()
    start = None
    fields: tuple[tuple[str, str], ...] = ()
    label = None
    if series.kind == "value":
        field = _chart_field(series, field)
        label = drawn.field_label(series, field)
        fields = tuple((f, drawn.field_label(series, f)) for f in series.fields)
        points = tuple(_point(drawn.value_rows(series, day), field, day) for day in days)
        what = f"{name}, {label}"
    else:
        marks = tuple(_mark(row) for day in days for row in drawn.event_rows(series, day))
        start = _start(drawn, series, records_before=first.isoformat())
        what = name
    return SeriesChart(
        plugin=manifest.id,
        series=series.key,
        kind=series.kind,
        name=name,
        field=field if series.kind == "value" else None,
        field_label=label,
        fields=fields,
        unit=series.unit,
        unit_words=unit_words,
        range=span,
        today=today.isoformat(),
        first=first.isoformat(),
        last=last.isoformat(),
        title=f"{what}, {long_date(first)} to {long_date(last)}",
        points=points,
        start=start,
        marks=marks,
    )


def example_chart(
    manifest: Manifest, records: Sequence[Record], today: date, language: str = "en"
) -> SeriesChart | None:
    """The chart a store page draws from the listing's example records (its fixtures): the
    first value series with records, over all its days to the fixtures' today, filled as the
    reader's days are; None when no value series has a record."""
    dated = [r for r in records if r.get("kind") == "value" and isinstance(r.get("date"), str)]
    for series in manifest.series:
        days = sorted(str(r["date"]) for r in dated if r.get("series") == series.key)
        if series.kind != "value" or not days:
            continue
        first, last = chart_span(series, "all", today, date.fromisoformat(days[0]))
        return series_chart(
            manifest, records, series=series, field=None, span="all", first=first, last=last,
            today=today, language=language,
        )  # fmt: skip
    return None


def long_date(day: date) -> str:
    """A date in the app's words (rule 10): `1 June 2026`."""
    return f"{day.day} {MONTHS[day.month - 1]} {day.year}"


def _chart_field(series: Series, field: str | None) -> str:
    if field is None:
        return series.change or series.fields[0]
    if field not in series.fields:
        raise Invalid(f"field: {field} is not a field of {series.key} ({', '.join(series.fields)})")
    return field


def _point(rows: Sequence[ValueRow], field: str, day: str) -> ChartPoint:
    """A day's value rows as one point: the last row (several periods published on one day
    draw the newest, as the value in force after it does)."""
    if not rows:
        return ChartPoint(day, None, None, None, None, None, None)
    row = rows[-1]
    figure = next((f for f in row["figures"] if f["field"] == field), None)
    if figure is None:
        return ChartPoint(day, None, None, None, row["style"], row["note"], None)
    change = row["change"]
    return ChartPoint(
        date=day,
        value=float(figure["value"]),
        text=figure["text"],
        spoken=figure["spoken"],
        style=row["style"],
        note=row["note"],
        change=change["text"] if change and row["style"] == "normal" else None,
    )


def _mark(row: EventRow) -> EventMark:
    figure = row["figures"][0] if row["figures"] else None
    return EventMark(
        date=row["date"],
        state=row["state"],
        value=float(figure["value"]) if figure else None,
        text=figure["text"] if figure else None,
        label=row["label"],
        note=row["note"],
    )


def _start(drawn: _Reading, series: Series, records_before: str) -> EventMark | None:
    """The happened value in force on the chart's first day: the newest happened event with a
    value (not moved away) dated before it, where the step line begins."""
    before = sorted(
        (
            r
            for (key, day), rs in drawn.on_day.items()
            if key == series.key and day < records_before
            for r in rs
            if r["state"] == "happened" and is_number(r.get("value")) and not r.get("movedTo")
        ),
        key=lambda r: (r["date"], r["id"]),
    )
    if not before:
        return None
    newest = before[-1]
    value = newest["value"]
    text = two_decimals(value)
    return EventMark(
        date=newest["date"],
        state="happened",
        value=float(value),
        text=f"{text}%" if series.unit == "%" else text,
        label=spoken(text, series.unit),
        note=None,
    )
