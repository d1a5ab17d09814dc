"""The days a reader sees for one plug-in (spec "Reader presentation rules" 1 to 10).

`render_days` is a pure function: it gives exactly the rows of the tool's `renderDays` in
`tool/almanac-plugin.mjs`, in the format of `tests/conformance/days/schema.json` (described in
`tests/conformance/days/README.md`), and both are checked against the cases beside it.

Input:
- `manifest`: the checked `Manifest` of the version readers see. Names keep the manifest's own
  key order ("then the first listed"), so build it from the JSON as written.
- `records`: the stored records of the plug-in, the current content of each, as JSON objects
  in the shape of a fetcher's output line: a value `{kind, series, date, fields, period?,
  revises?}`, an event `{kind, series, id, date, state, value?, title?}`, an item `{kind,
  series, id, date, title, url}`. An event on the old date of a move carries `movedTo` (the new
  date): the store's mark. Dates are `YYYY-MM-DD` text. Withdrawn records are left out;
  records of a series neither the manifest nor `kept` declares are ignored.
  `records.from_stored` turns a stored record into this shape.
  Besides the records dated `from_date`..`to_date`, rendering reads: per value series its
  first record on or before `to_date` and the two newest before `from_date` (rule 5's value in
  force and rule 4's change), and its first record after `to_date` (in force or last rate);
  per event series the newest happened event with a value before `from_date` (rule 6's
  change); and the plug-in's newest record on or before `today` (rule 9). Passing every record
  dated on or before max(`to_date`, `today`) plus the first later record of each value series
  is always enough.
- `from_date`, `to_date`: the days asked for, both included, at most 62 (Limits).
- `today`: the reader's today (rule 10: dates are never converted between zones).
- `language`: the reader's language code (rule 2).
- `status`: the plug-in's state for this reader (rule 9): `running`; `failing` (the last run
  failed after the last success); `unreachable` (the app cannot reach the service); `paused`;
  `pending` (a new version awaits approval).
- `kept`: series an earlier version declared and `manifest` no longer does, with that
  version's definitions ("Versioning" 4 and 5: removing a series keeps its records, and readers
  move to an update without losing records). Their records are drawn like the manifest's own,
  after them in rule 3's order, except that a kept value series ends at its newest record: no
  version updates it any more, so no "Last rate" carries it to the reader's today. The tool
  draws one version's records and passes none.

Strings are ordered by code point (the cases' README), as Python compares them.
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import date, timedelta
from typing import Any, Literal, TypedDict

from almanac.platform.contract.manifest import Manifest, Series
from almanac.platform.contract.names import pick_name
from almanac.platform.contract.rules import parse_date
from almanac.platform.reader.numbers import Change, change_of, is_number, two_decimals
from almanac.platform.reader.words import WORDS, spoken

Status = Literal["running", "failing", "unreachable", "paused", "pending"]
STATUSES: tuple[str, ...] = ("running", "failing", "unreachable", "paused", "pending")
MAX_DAYS = 62
"""Days a reader asks for at once (spec "Limits")."""

Record = Mapping[str, Any]


class Figure(TypedDict):
    field: str
    label: str
    value: int | float
    text: str
    spoken: str


class ValueRow(TypedDict):
    type: Literal["value"]
    series: str
    label: str
    date: str
    figures: list[Figure]
    change: Change | None
    style: Literal["normal", "in-force", "last"]
    note: str | None
    attribution: str


class EventRow(TypedDict):
    type: Literal["event"]
    series: str
    id: str
    label: str
    date: str
    figures: list[Figure]
    change: Change | None
    state: Literal["scheduled", "happened", "moved", "cancelled"]
    note: str | None


class ItemRow(TypedDict):
    type: Literal["item"]
    series: str
    id: str
    label: str
    date: str
    href: str


class StatusRow(TypedDict):
    type: Literal["status"]
    status: Literal["last-rate", "could-not-refresh", "could-not-reach", "not-updating"]
    note: str
    date: str | None


Row = EventRow | ValueRow | ItemRow | StatusRow


class Section(TypedDict):
    plugin: str
    name: str
    rows: list[Row]


class Day(TypedDict):
    date: str
    sections: list[Section]


class RenderRequestError(ValueError):
    """A request the rendering refuses; the message names the argument."""


def render_days(
    manifest: Manifest,
    records: Iterable[Record],
    *,
    from_date: date | str,
    to_date: date | str,
    today: date | str,
    language: str = "en",
    status: str = "running",
    kept: Sequence[Series] = (),
) -> list[Day]:
    """The days `from_date`..`to_date` as a reader whose day is `today` sees one plug-in: one
    `{date, sections}` per day, `sections` empty or one `{plugin, name, rows}`."""
    first = _day(from_date, "from_date")
    last = _day(to_date, "to_date")
    reader_today = _day(today, "today").isoformat()
    if last < first:
        raise RenderRequestError(f"to_date {last} is before from_date {first}")
    if (last - first).days + 1 > MAX_DAYS:
        raise RenderRequestError(
            f"from_date {first} to to_date {last} is {(last - first).days + 1} days; "
            f"at most {MAX_DAYS} are drawn at once"
        )
    if status not in STATUSES:
        raise RenderRequestError(f"status {status!r} is not one of {', '.join(STATUSES)}")
    reading = _Reading(manifest, kept, records, reader_today, language)
    section_name = manifest.display_name(language)
    days: list[Day] = []
    for offset in range((last - first).days + 1):
        day = (first + timedelta(days=offset)).isoformat()
        rows = reading.rows_of_day(day, status)
        sections: list[Section] = (
            [{"plugin": manifest.id, "name": section_name, "rows": rows}] if rows else []
        )
        days.append({"date": day, "sections": sections})
    return days


def attribution_of(manifest: Manifest) -> str:
    """Rule 4: the attribution that ends a value row, `licence.attribution`, else the holder."""
    licence = manifest.licence
    return licence.holder if licence.attribution is None else licence.attribution


def _day(value: date | str, argument: str) -> date:
    if isinstance(value, date):
        return value
    parsed = parse_date(value)
    if parsed is None:
        raise RenderRequestError(f"{argument} {value!r} is not a date YYYY-MM-DD")
    return parsed


@dataclass(frozen=True, slots=True)
class _ValueEntry:
    """A value record with its change from the previous record of its series (rule 4)."""

    record: Record
    change: Change | None


def reading(
    manifest: Manifest,
    records: Iterable[Record],
    today: date | str,
    language: str = "en",
    kept: Sequence[Series] = (),
) -> _Reading:
    """The plug-in's records indexed as `render_days` reads them, for drawings other than the
    day rows (a series chart) that must fill days by the very same rules."""
    return _Reading(manifest, kept, records, _day(today, "today").isoformat(), language)


def _by_id(record: Record) -> str:
    return str(record["id"])


class _Reading:
    """One plug-in's records indexed for drawing days: by series and date, value series in
    (date, period) order with their changes, and each happened event's predecessor."""

    def __init__(
        self,
        manifest: Manifest,
        kept: Sequence[Series],
        records: Iterable[Record],
        today: str,
        language: str,
    ) -> None:
        declared = {series.key for series in manifest.series}
        ended = [series for series in kept if series.key not in declared]
        self.series: tuple[Series, ...] = (*manifest.series, *ended)
        self.ended = frozenset(series.key for series in ended)
        self.today = today
        self.language = language
        self.attribution = attribution_of(manifest)
        by_series: dict[str, list[Record]] = {series.key: [] for series in self.series}
        for record in records:
            if record["series"] in by_series:
                by_series[record["series"]].append(record)
        self.newest = max(
            (r["date"] for rs in by_series.values() for r in rs if r["date"] <= today),
            default=None,
        )
        self.on_day: dict[tuple[str, str], list[Record]] = defaultdict(list)
        self.values: dict[str, list[_ValueEntry]] = {}
        self.value_dates: dict[str, list[str]] = {}
        self.previous_happened: dict[int, Record | None] = {}
        for series in self.series:
            own = by_series[series.key]
            if series.kind == "value":
                entries = _value_entries(series, own)
                self.values[series.key] = entries
                self.value_dates[series.key] = [entry.record["date"] for entry in entries]
                continue
            for record in sorted(own, key=_by_id):
                self.on_day[(series.key, record["date"])].append(record)
            if series.kind == "event":
                self.previous_happened.update(_previous_happened(own))

    def series_name(self, series: Series) -> str:
        """Rule 2 for a series name; the key when it has none."""
        name = pick_name(series.name, self.language)
        return series.key if name is None else name

    def field_label(self, series: Series, field: str) -> str:
        """Rule 2 for a field: "A field with no name displays its key"."""
        name = pick_name(series.field_names.get(field), self.language)
        return field if name is None else name

    def rows_of_day(self, day: str, status: str) -> list[Row]:
        """Rule 3: events lead a day; then values and items, each in the manifest's series
        order; a status row ends the day (rule 9)."""
        events: list[Row] = []
        others: list[Row] = []
        for series in self.series:
            if series.kind == "event":
                events.extend(self.event_rows(series, day))
            elif series.kind == "item":
                others.extend(self.item_rows(series, day))
            else:
                others.extend(self.value_rows(series, day))
        rows = events + others
        closing = self.status_row(day, status)
        if closing is not None:
            rows.append(closing)
        return rows

    def value_rows(self, series: Series, day: str) -> list[ValueRow]:
        """Rule 5: a value series fills every day from its first record to the reader's today.
        A day with records shows them (by period); a day without, before the series' newest
        record, shows the value in force (`in-force`, "Rate of <date>", no change); after it,
        the newest (`last`, "Last rate <date>"), but for a kept series (see `render_days`).
        Nothing after the reader's today."""
        entries = self.values[series.key]
        if day > self.today or not entries or day < entries[0].record["date"]:
            return []
        dates = self.value_dates[series.key]
        start = bisect_left(dates, day)
        end = bisect_right(dates, day)
        if end > start:
            return [
                self.value_row(series, entry.record, "normal", None, entry.change)
                for entry in entries[start:end]
            ]
        held = entries[start - 1].record
        if day > dates[-1]:
            if series.key in self.ended:
                return []
            note = f"{WORDS.last_rate} {held['date']}"
            return [self.value_row(series, held, "last", note, None)]
        note = f"{WORDS.rate_of} {held['date']}"
        return [self.value_row(series, held, "in-force", note, None)]

    def value_row(
        self,
        series: Series,
        record: Record,
        style: Literal["normal", "in-force", "last"],
        note: str | None,
        change: Change | None,
    ) -> ValueRow:
        """Rule 4: the series name (with `period` after it when dated by publication), the
        figures in `fields` order, each labelled and rounded to two decimals, the change, and
        the attribution (`licence.attribution`, else the holder) ending the row."""
        label = self.series_name(series)
        if series.dates == "publication" and record.get("period"):
            label = f"{label} {record['period']}"
        fields = record["fields"]
        figures: list[Figure] = []
        for field in series.fields:
            value = fields.get(field)
            if is_number(value):
                text = two_decimals(value)
                figures.append(
                    {
                        "field": field,
                        "label": self.field_label(series, field),
                        "value": value,
                        "text": text,
                        "spoken": spoken(text, series.unit),
                    }
                )
        return {
            "type": "value",
            "series": series.key,
            "label": label,
            "date": record["date"],
            "figures": figures,
            "change": change,
            "style": style,
            "note": note,
            "attribution": self.attribution,
        }

    def event_rows(self, series: Series, day: str) -> list[EventRow]:
        """Rule 6: "Only events are drawn after the reader's today: scheduled ones, and the
        old date of a moved one." Several events of a day come in id order."""
        rows = []
        for record in self.on_day.get((series.key, day), ()):
            if day > self.today and not (record["state"] == "scheduled" or record.get("movedTo")):
                continue
            rows.append(self.event_row(series, record))
        return rows

    def event_row(self, series: Series, record: Record) -> EventRow:
        """Rule 6: an event row by state; rule 7: an event without a title shows the series
        name. A happened event with a value shows the series name and the value, with its
        change against the previous happened event: basis points for unit `%`, else a
        "Was <value>" note; "Held" when equal."""
        title = record.get("title")
        label = title if isinstance(title, str) and title != "" else self.series_name(series)
        row: EventRow = {
            "type": "event",
            "series": series.key,
            "id": record["id"],
            "label": label,
            "date": record["date"],
            "figures": [],
            "change": None,
            "state": "happened",
            "note": None,
        }
        moved_to = record.get("movedTo")
        if moved_to:
            row["state"], row["note"] = "moved", f"{WORDS.moved_to} {moved_to}"
        elif record["state"] == "scheduled":
            row["state"], row["note"] = "scheduled", WORDS.scheduled
        elif record["state"] == "cancelled":
            row["state"], row["note"] = "cancelled", WORDS.cancelled
        elif is_number(record.get("value")):
            self._happened_with_value(series, record, row)
        return row

    def _happened_with_value(self, series: Series, record: Record, row: EventRow) -> None:
        """Rule 6 for `happened` with a `value`: the value in two decimals, or the percent form
        for unit `%` (rule 8 decides how the change is measured and how the value is said)."""
        value = record["value"]
        name = self.series_name(series)
        row["label"] = name
        row["figures"] = [
            {
                "field": "value",
                "label": name,
                "value": value,
                "text": _event_value_text(value, series.unit),
                "spoken": spoken(two_decimals(value), series.unit),
            }
        ]
        previous = self.previous_happened.get(id(record))
        if previous is None:
            return
        if float(previous["value"]) == float(value):
            row["note"] = WORDS.held
        elif series.unit == "%":
            row["change"] = change_of(value, previous["value"], "%")
        else:
            row["note"] = f"{WORDS.was} {_event_value_text(previous['value'], series.unit)}"

    def item_rows(self, series: Series, day: str) -> list[ItemRow]:
        """Rule 7: an item is its title as a link to its `url`, on its own day only (never
        after the reader's today), with no figure and no attribution; several in id order."""
        if day > self.today:
            return []
        return [
            {
                "type": "item",
                "series": series.key,
                "id": record["id"],
                "label": record["title"],
                "date": record["date"],
                "href": record["url"],
            }
            for record in self.on_day.get((series.key, day), ())
        ]

    def status_row(self, day: str, status: str) -> StatusRow | None:
        """Rule 9: days after the newest record (dated on or before the reader's today), up to
        today, end with a status row; a plug-in with no records has one only on today, when
        its first run failed or the service cannot be reached."""
        newest = self.newest
        if day > self.today:
            return None
        if newest is None:
            if day != self.today:
                return None
            if status == "failing":
                return _status("could-not-refresh", WORDS.could_not_refresh, None)
            if status == "unreachable":
                return _status("could-not-reach", WORDS.could_not_reach, None)
            return None
        if day <= newest:
            return None
        if status == "failing":
            return _status("could-not-refresh", f"{WORDS.could_not_refresh_since} {newest}", newest)
        if status == "unreachable":
            return _status("could-not-reach", WORDS.could_not_reach, newest)
        if status in ("paused", "pending"):
            return _status("not-updating", WORDS.not_updating, newest)
        return _status("last-rate", f"{WORDS.last_rate} {newest}", newest)


def _status(
    kind: Literal["last-rate", "could-not-refresh", "could-not-reach", "not-updating"],
    note: str,
    newest: str | None,
) -> StatusRow:
    return {"type": "status", "status": kind, "note": note, "date": newest}


def _value_entries(series: Series, records: Sequence[Record]) -> list[_ValueEntry]:
    """Rule 4's change: the `change` field (or the first field) against the previous record
    of the series, in (date, period) order."""
    ordered = sorted(records, key=lambda r: (r["date"], r.get("period") or ""))
    field = series.change or series.fields[0]
    entries = []
    for index, record in enumerate(ordered):
        change = None
        if index > 0:
            previous = ordered[index - 1]["fields"].get(field)
            change = change_of(record["fields"].get(field), previous, series.unit)
        entries.append(_ValueEntry(record, change))
    return entries


def _previous_happened(records: Sequence[Record]) -> dict[int, Record | None]:
    """Rule 6's change: each happened event with a value (not moved away) and the one before
    it in its series, by date then id."""
    happened = sorted(
        (
            r
            for r in records
            if r["state"] == "happened" and is_number(r.get("value")) and not r.get("movedTo")
        ),
        key=lambda r: (r["date"], r["id"]),
    )
    return {id(r): (happened[i - 1] if i else None) for i, r in enumerate(happened)}


def _event_value_text(value: float, unit: str | None) -> str:
    """An event's value: two decimals, with `%` after it for unit `%` (rule 6)."""
    text = two_decimals(value)
    return f"{text}%" if unit == "%" else text
