"""A reader's days and a plug-in's raw records (DECISIONS 6, reader API; "Reader presentation
rules"; "Limits": at most 62 days at once).

The days of every plug-in the reader shows are drawn by `reader.render_days` from exactly the
stored records its docstring names, read in one statement for all plug-ins: the records dated
in the range, and per series only the few records around it that decide a value in force, a
change or the status row. A taken-down plug-in's records are hidden: its days are empty and its
public message goes beside them (see `PluginDays.notice`).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, replace
from datetime import date, datetime, timedelta
from typing import Any

from sqlalchemy import Connection, Row
from sqlalchemy.orm import Session

from almanac.platform.accounts.errors import InvalidInput
from almanac.platform.accounts.models import Account
from almanac.platform.audience.preferences import shown_of
from almanac.platform.audience.visibility import (
    ReadablePlugin,
    readable_plugin,
    visible_plugins,
)
from almanac.platform.reader import MAX_DAYS, Day, from_stored, render_days
from almanac.platform.store.reading import (
    RevisionEntry,
    SeriesWanted,
    StoredRecord,
    records_between,
    records_for_days,
    records_for_days_rows,
    revision_histories,
)

LANGUAGE = re.compile(r"[A-Za-z]{2,3}(-[A-Za-z0-9]{1,8})*")


@dataclass(frozen=True, slots=True)
class PluginDays:
    """One shown plug-in's days, each `{date, sections}` in the shared rows schema. `notice` is
    the public message of a taken-down plug-in (its days then hold no section), else None."""

    plugin: str
    status: str
    notice: str | None
    days: list[Day]


def check_range(first: date, last: date) -> None:
    """REQUEST-INVALID when `to` is before `from`; READER-TOO-MANY-DAYS above 62 days. The
    message names the parameter."""
    if last < first:
        raise InvalidInput(f"to: {last} is before from {first}")
    days = (last - first).days + 1
    if days > MAX_DAYS:
        raise InvalidInput(
            f"to: from {first} to {last} is {days} days; at most {MAX_DAYS} at once",
            code="READER-TOO-MANY-DAYS",
        )


def check_language(language: str) -> str:
    """A language code (two or three letters, optionally a region), else REQUEST-INVALID."""
    if not LANGUAGE.fullmatch(language) or len(language) > 35:
        raise InvalidInput(f"language: {language!r} is not a language code such as en or es-DO")
    return language


def read_days(
    db: Session,
    account: Account,
    *,
    first: date,
    last: date,
    today: date,
    language: str,
) -> list[PluginDays]:
    """The days `first`..`last` (at most 62) of every plug-in the account reads and shows, by
    plug-in id, as a reader whose day is `today` and whose language is `language` sees them."""
    check_range(first, last)
    check_language(language)
    readable = visible_plugins(db, account)
    shown = shown_of(db, account, readable)
    chosen = [p for p in readable if shown[p.id].shown]
    drawn = [p for p in chosen if not p.taken_down]
    stored = day_records(db.connection(), drawn, first, last, today)
    result = []
    for plugin in chosen:
        if plugin.taken_down:
            empty: list[Day] = [
                {"date": (first + timedelta(days=n)).isoformat(), "sections": []}
                for n in range((last - first).days + 1)
            ]
            result.append(PluginDays(plugin.id, plugin.status, plugin.takedown_message, empty))
            continue
        days = render_days(
            plugin.manifest,
            stored.get(plugin.id, ()),
            from_date=first,
            to_date=last,
            today=today,
            language=language,
            status=plugin.status,
        )
        result.append(PluginDays(plugin.id, plugin.status, None, days))
    return result


def _wanted(plugins: Sequence[ReadablePlugin]) -> list[SeriesWanted]:
    return [SeriesWanted(p.id, s.key, s.kind) for p in plugins for s in p.manifest.series]


def day_records(
    conn: Connection,
    plugins: Sequence[ReadablePlugin],
    first: date,
    last: date,
    today: date,
) -> dict[str, list[dict[str, Any]]]:
    """Per plug-in, the stored current records (withdrawn left out, a moved event's old date
    carrying `movedTo`) that `render_days` needs for `first`..`last` and `today`: every record
    in the range; per declared series its newest record on or before `today` (rule 9's
    newest); per value series its first record after the range and the two newest before it
    (rules 4 and 5); per event series with a happened value in the range, the newest happened
    event with a value before it (rule 6's change)."""
    found: dict[str, list[dict[str, Any]]] = {}
    ids = [p.id for p in plugins]
    for stored in records_for_days(conn, ids, _wanted(plugins), first, last, today):
        found.setdefault(stored.plugin_id, []).append(from_stored(stored))
    return found


def day_rows(
    conn: Connection,
    plugins: Sequence[ReadablePlugin],
    first: date,
    last: date,
    today: date,
) -> list[Row[Any]]:
    """The statement of `day_records` alone: (id, plugin, series, date, discriminator, kind,
    content text, moved_to) rows, a record possibly twice."""
    ids = [p.id for p in plugins]
    return records_for_days_rows(conn, ids, _wanted(plugins), first, last, today)


@dataclass(frozen=True, slots=True)
class RecordHistoryEntry:
    """One content and state a record had over [valid_from, valid_to); valid_to None = now."""

    record: dict[str, Any]
    withdrawn: bool
    digest: str
    valid_from: datetime
    valid_to: datetime | None


@dataclass(frozen=True, slots=True)
class RawRecord:
    """A stored record as it stands (or stood at `as_of`), with its history."""

    record: dict[str, Any]
    digest: str
    since: datetime
    revisions: list[RecordHistoryEntry]


@dataclass(frozen=True, slots=True)
class PluginRecords:
    plugin: str
    notice: str | None
    records: list[RawRecord]


def plugin_records(
    db: Session,
    account: Account,
    plugin_id: str,
    *,
    first: date,
    last: date,
    as_of: datetime | None = None,
) -> PluginRecords:
    """The records of a readable plug-in dated `first`..`last` (at most 62 days), as they stand
    or as they stood at `as_of`, each with every content it had up to then, oldest first
    ("Stored-record behaviour": a revision keeps the old content beside the new). Withdrawn
    records are left out; a taken-down plug-in shows none, only its public message."""
    check_range(first, last)
    plugin = readable_plugin(db, account, plugin_id)
    if plugin.taken_down:
        return PluginRecords(plugin.id, plugin.takedown_message, [])
    conn = db.connection()
    stored = records_between(conn, [plugin.id], first, last, as_of=as_of)
    histories = revision_histories(conn, [s.record_id for s in stored], as_of)
    return PluginRecords(
        plugin.id,
        None,
        [
            RawRecord(
                record=from_stored(s),
                digest=s.digest,
                since=s.since,
                revisions=[_history_entry(s, e) for e in histories.get(s.record_id, [])],
            )
            for s in stored
        ],
    )


def _history_entry(stored: StoredRecord, entry: RevisionEntry) -> RecordHistoryEntry:
    # The key never changes; each revision has its own content and moved date.
    shape = replace(stored, content=entry.content, moved_to=entry.moved_to)
    return RecordHistoryEntry(
        from_stored(shape), entry.withdrawn, entry.digest, entry.valid_from, entry.valid_to
    )


__all__ = [
    "PluginDays",
    "PluginRecords",
    "RawRecord",
    "RecordHistoryEntry",
    "check_language",
    "check_range",
    "day_records",
    "day_rows",
    "plugin_records",
    "read_days",
]
