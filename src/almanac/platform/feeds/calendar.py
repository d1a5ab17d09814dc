"""A calendar feed's bytes: an iCalendar object (RFC 5545, with the RFC 7986 calendar
properties) of plug-ins' days, built with `icalendar` from the rows `reader.render_days` draws,
so every word is the reader's own (one place for each rule). A pure function of its inputs.

Events:
- One all-day event (`DTSTART;VALUE=DATE`, `DTEND` the next day) per drawn row that stands for
  a record on its own date: a value row of style `normal`, an event row, an item row. Dates
  are the records' own and never pass through a zone (rule 10). Values are not filled in: the
  days a value stays in force (`in-force`, `last` rows) make no event, so each event is one
  stored record. Only what the reader's days draw is an event: nothing after the reader's
  today but scheduled events and the old date of a moved one (rule 6).
- `UID` from the record key: `<plug-in>/<series>/<date>[/<period or id>]@<domain>` (the parts
  percent-encoded), the same in every feed and on every day; `SEQUENCE` is the count of the
  record's revisions (each new content, move or return keeps one), `DTSTAMP` and
  `LAST-MODIFIED` the moment its current content began.
- `SUMMARY` is the row's words (`reader.row_words`: label, figures, change, note) in the
  feed's language; `DESCRIPTION` names the plug-in and, but for items (rule 7), ends with the
  attribution (rule 4); an item's link is its `URL`; `CATEGORIES` is the plug-in's name and
  `COLOR` its colour.
- `STATUS`: `TENTATIVE` for a scheduled event, `CANCELLED` for a cancelled one and for the old
  date of a moved one, else `CONFIRMED`. `TRANSP:TRANSPARENT`: none of them makes anyone busy.
- A moved event: the store keeps the old date as its own record marked moved, and the new date
  carries the event as a new record. The feed shows both, as the reader's days do: the event
  on its new date, and on the old date the old record's UID with `STATUS:CANCELLED` and the
  summary "<title> · Moved to <date>" (its `SEQUENCE` raised by the move, so a client that
  had it updates it). A single UID moved to the new date was not chosen: records are keyed by
  date, an item's id on another date is another record, and the old date must still say where
  the event went (rule 6).

The calendar: `NAME` and `X-WR-CALNAME`, `DESCRIPTION` (and `X-WR-CALDESC`) with the plug-ins,
their attributions, a taken-down plug-in's public message, and the meaning of a status row the
reader's today shows (could not refresh, not updating: rule 9); the same status row is also an
all-day event on today (UID `<plug-in>/status/<today>@<domain>`). `COLOR`,
`REFRESH-INTERVAL;VALUE=DURATION:PT1H` and `X-PUBLISHED-TTL:PT1H` (clients poll hourly; the
ETag makes a poll cheap), `METHOD:PUBLISH`, `CALSCALE:GREGORIAN`.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, date, datetime, time, timedelta
from typing import Any
from urllib.parse import quote

from icalendar import Calendar, Event, vDuration, vText

from almanac.platform.contract.manifest import Manifest, Series
from almanac.platform.reader import (
    MAX_DAYS,
    attribution_of,
    render_days,
    row_words,
)
from almanac.platform.reader.render import Row, StatusRow
from almanac.platform.store.reading import RecordStamp

PRODID = "-//Almanac//Calendar feeds 1//EN"
REFRESH = timedelta(hours=1)
COLORS = (
    "teal",
    "steelblue",
    "darkorange",
    "seagreen",
    "slateblue",
    "firebrick",
    "goldenrod",
    "darkcyan",
    "indianred",
    "olivedrab",
    "mediumvioletred",
    "royalblue",
)
"""CSS3 colour names (RFC 7986 `COLOR`); a plug-in's is chosen by its id."""
FEED_COLOR = "teal"
"""The colour of a reader's own feed, which holds several plug-ins."""
NOTED_STATUSES = ("could-not-refresh", "could-not-reach", "not-updating")
"""Status rows that are a note on the feed (rule 9); `last-rate` is the normal state."""
EXPLANATION = (
    "Each record is an all-day event on its own date. A value shows only on the days it has "
    "a record, not on the days it stays in force. A moved event stays on its old date as "
    "cancelled, with the new date in its title."
)

RecordKey = tuple[str, str, str]
"""(series, date YYYY-MM-DD, discriminator: the period of a value dated by publication, the id
of an event or item, else "")."""


@dataclass(frozen=True, slots=True)
class Window:
    """The feed's days `first`..`last`, both included, seen by a reader whose day is `today`."""

    first: date
    last: date
    today: date


@dataclass(frozen=True, slots=True)
class FeedPlugin:
    """One plug-in of a feed: its approved manifest, its status for rule 9, a taken-down
    plug-in's public message (then it has no records), the records its days are drawn from
    (in `reader.from_stored`'s shape: the window's and the few around it that decide a value
    in force, a change or the status row), the stamps of those dated in the window, and the
    series earlier versions declared whose records are kept (`audience.kept_series`)."""

    id: str
    manifest: Manifest
    status: str
    notice: str | None
    records: Sequence[Mapping[str, Any]]
    stamps: Mapping[RecordKey, RecordStamp]
    kept: Sequence[Series] = ()

    def name(self, language: str) -> str:
        """Rule 2: the plug-in's name in the language; its id when it has none."""
        return self.manifest.display_name(language)


def color_of(plugin_id: str) -> str:
    """The plug-in's colour: one of `COLORS`, the same on every feed."""
    return COLORS[hashlib.sha256(plugin_id.encode()).digest()[0] % len(COLORS)]


def record_key(record: Mapping[str, Any]) -> RecordKey:
    """The key of a record in `from_stored`'s shape (spec "Record keys")."""
    value = record["kind"] == "value"
    discriminator = (record.get("period") or "") if value else str(record["id"])
    return (record["series"], record["date"], discriminator)


def uid_of(plugin_id: str, key: RecordKey, domain: str) -> str:
    """`<plug-in>/<series>/<date>[/<discriminator>]@<domain>`, each part percent-encoded."""
    series, day, discriminator = key
    parts = [plugin_id, series, day] + ([discriminator] if discriminator else [])
    return "/".join(quote(part, safe="") for part in parts) + f"@{domain}"


def _chunks(window: Window) -> list[tuple[date, date]]:
    """The window in ranges of at most 62 days, the most `render_days` draws at once."""
    found = []
    start = window.first
    while start <= window.last:
        end = min(start + timedelta(days=MAX_DAYS - 1), window.last)
        found.append((start, end))
        start = end + timedelta(days=1)
    return found


@dataclass(frozen=True, slots=True)
class _Drawn:
    """A plug-in's rows over the window: (day, row) in day and row order, and today's status
    row when rule 9 draws one."""

    rows: list[tuple[str, Row]]
    status: StatusRow | None


def _drawn(plugin: FeedPlugin, window: Window, language: str) -> _Drawn:
    rows: list[tuple[str, Row]] = []
    status: StatusRow | None = None
    today = window.today.isoformat()
    for first, last in _chunks(window):
        days = render_days(
            plugin.manifest,
            plugin.records,
            from_date=first,
            to_date=last,
            today=window.today,
            language=language,
            status=plugin.status,
            kept=plugin.kept,
        )
        for day in days:
            for section in day["sections"]:
                for row in section["rows"]:
                    if row["type"] == "status":
                        if day["date"] == today and row["status"] in NOTED_STATUSES:
                            status = row
                        continue
                    rows.append((day["date"], row))
    return _Drawn(rows, status)


def _value_periods(records: Sequence[Mapping[str, Any]]) -> dict[tuple[str, str], list[str]]:
    """Per (series, date), the discriminators of its value records in the order rule 4 draws
    them (by period): a day's `normal` value rows come in this order."""
    found: dict[tuple[str, str], list[str]] = {}
    for record in records:
        if record["kind"] == "value":
            found.setdefault((record["series"], record["date"]), []).append(
                record.get("period") or ""
            )
    return {key: sorted(periods) for key, periods in found.items()}


_STATUS_OF_STATE = {
    "scheduled": "TENTATIVE",
    "happened": "CONFIRMED",
    "cancelled": "CANCELLED",
    "moved": "CANCELLED",
}


def _midnight(day: date) -> datetime:
    return datetime.combine(day, time(0), tzinfo=UTC)


def _all_day(day: date, **properties: Any) -> Event:
    return Event.new(start=day, end=day + timedelta(days=1), **properties)


def _events(
    plugin: FeedPlugin, drawn: _Drawn, window: Window, language: str, domain: str
) -> list[Event]:
    name = plugin.name(language)
    color = color_of(plugin.id)
    attribution = attribution_of(plugin.manifest)
    periods = _value_periods(plugin.records)
    taken: dict[tuple[str, str], int] = {}
    events: list[Event] = []
    for day, row in drawn.rows:
        if row["type"] == "value":
            if row["style"] != "normal":
                continue  # a value in force or the last rate: no record on this day
            place = (row["series"], day)
            index = taken.get(place, 0)
            taken[place] = index + 1
            key: RecordKey = (row["series"], day, periods[place][index])
            status = "CONFIRMED"
        elif row["type"] == "event":
            key = (row["series"], day, row["id"])
            status = _STATUS_OF_STATE[row["state"]]
        elif row["type"] == "item":
            key = (row["series"], day, row["id"])
            status = "CONFIRMED"
        else:
            continue
        stamp = plugin.stamps.get(key)
        since = stamp.since if stamp is not None else _midnight(window.today)
        description = name if row["type"] == "item" else f"{name}\n{attribution}"
        event = _all_day(
            date.fromisoformat(day),
            uid=uid_of(plugin.id, key, domain),
            summary=row_words(row),
            description=description,
            sequence=stamp.revisions if stamp is not None else 0,
            stamp=since,
            last_modified=since,
            status=status,
            transparency="TRANSPARENT",
            categories=[name],
            color=color,
        )
        if row["type"] == "item":
            event.add("URL", row["href"])
        events.append(event)
    if drawn.status is not None:
        events.append(
            _all_day(
                window.today,
                uid=f"{quote(plugin.id, safe='')}/status/{window.today.isoformat()}@{domain}",
                summary=row_words(drawn.status),
                description=f"{name}\n{row_words(drawn.status)}",
                sequence=0,
                stamp=_midnight(window.today),
                transparency="TRANSPARENT",
                categories=[name],
                color=color,
            )
        )
    return events


def build_calendar(
    *,
    name: str,
    plugins: Sequence[FeedPlugin],
    window: Window,
    language: str,
    domain: str,
    color: str,
    uid: str | None = None,
) -> bytes:
    """The iCalendar bytes of the plug-ins' days over the window, in the language, named
    `name`, with UIDs under `domain`; `uid` is the calendar's own (RFC 7986), if any."""
    lines: list[str] = []
    events: list[Event] = []
    for plugin in plugins:
        plugin_name = plugin.name(language)
        if plugin.notice is not None:
            lines.append(f"{plugin_name}: {plugin.notice}")
            continue
        drawn = _drawn(plugin, window, language)
        lines.append(f"{plugin_name}: {attribution_of(plugin.manifest)}")
        if drawn.status is not None:
            lines.append(f"{plugin_name}: {row_words(drawn.status)}")
        events.extend(_events(plugin, drawn, window, language, domain))
    lines.append(EXPLANATION)
    stamps = [s.since for p in plugins for s in p.stamps.values()]
    description = "\n".join(lines)
    calendar = Calendar.new(
        prodid=PRODID,
        name=name,
        description=description,
        color=color,
        method="PUBLISH",
        calscale="GREGORIAN",
        last_modified=max(stamps) if stamps else None,
        subcomponents=events,
    )
    # icalendar 7.3 copies the description into X-WR-CALDESC unescaped (a line break there
    # would end the content line): set it again as TEXT, escaped like DESCRIPTION.
    calendar["X-WR-CALDESC"] = vText(description)
    if uid is None:
        calendar.pop("UID", None)
    else:
        calendar["UID"] = uid
    calendar.add("REFRESH-INTERVAL", REFRESH, parameters={"VALUE": "DURATION"})
    calendar["X-PUBLISHED-TTL"] = vDuration(REFRESH)
    body: bytes = calendar.to_ical()
    return body
