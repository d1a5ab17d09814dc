"""A reader's days and a plug-in's raw records (DECISIONS 6, reader API; "Reader presentation
rules"; "Limits": at most 62 days at once).

The days of every plug-in the reader shows are drawn by `reader.render_days` from exactly the
stored records its docstring names, read in one statement for all plug-ins: the records dated
in the range, and per series only the few records around it that decide a value in force, a
change or the status row. A taken-down plug-in's records are hidden: its days are empty and its
public message goes beside them (see `PluginDays.notice`).

A plug-in's days also draw the records of series its approved version no longer declares
(`kept_series`: an update never removes records), with the definitions the newest version that
ran gave them. `day_sources` reads both for the reader's days and the calendar feeds alike.

Drawing is a pure function of the records, the range, the reader's today, the language and the
status, so `read_days_json` keeps each plug-in's drawn days (as JSON) by those and the
plug-in's `records_stamp`, which every write of its records changes in the same transaction:
a second read of unchanged records neither reads nor draws them again, in any process. Which
plug-ins a reader may read and shows is decided anew on every read.
"""

from __future__ import annotations

import json
import re
import threading
from collections import OrderedDict
from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import date, datetime, timedelta
from typing import Any, Generic, TypeVar

from sqlalchemy import Connection, Row
from sqlalchemy.orm import Session

from almanac.platform.accounts.models import Account
from almanac.platform.audience.preferences import may_show, shown_of
from almanac.platform.audience.visibility import (
    ReadablePlugin,
    checked_manifest,
    readable_plugin,
    visible_plugins,
)
from almanac.platform.contract.manifest import Series
from almanac.platform.errors import Invalid
from almanac.platform.reader import MAX_DAYS, Day, from_stored, render_days
from almanac.platform.store.reading import (
    DayRecord,
    RanVersion,
    RevisionEntry,
    SeriesWanted,
    StoredRecord,
    earlier_versions_that_ran,
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
        raise Invalid(f"to: {last} is before from {first}")
    days = (last - first).days + 1
    if days > MAX_DAYS:
        raise Invalid(
            f"to: from {first} to {last} is {days} days; at most {MAX_DAYS} at once",
            code="READER-TOO-MANY-DAYS",
        )


def check_language(language: str) -> str:
    """A language code (two or three letters, optionally a region), else REQUEST-INVALID."""
    if not LANGUAGE.fullmatch(language) or len(language) > 35:
        raise Invalid(f"language: {language!r} is not a language code such as en or es-DO")
    return language


@dataclass(frozen=True, slots=True)
class EncodedPluginDays:
    """`PluginDays` with its `days` already encoded: `days_json` is the JSON array, written
    by `compact_json`."""

    plugin: str
    status: str
    notice: str | None
    days_json: bytes


def compact_json(value: Any) -> bytes:
    """UTF-8 JSON without spaces, the bytes the API's JSON answers are made of (Starlette's
    `JSONResponse.render`), so pre-encoded parts join into the same answer."""
    return json.dumps(
        value, ensure_ascii=False, allow_nan=False, indent=None, separators=(",", ":")
    ).encode("utf-8")


def shown_plugins(db: Session, account: Account) -> list[ReadablePlugin]:
    """The plug-ins the account reads and shows (rule 1), by id: the ones its days draw."""
    readable = visible_plugins(db, account, among=may_show(db, account))
    shown = shown_of(db, account, readable)
    return [p for p in readable if shown[p.id].shown]


def checked_shown_plugins(
    db: Session, account: Account, first: date, last: date, language: str
) -> list[ReadablePlugin]:
    """The request checked, then the plug-ins the account reads and shows, by id."""
    check_range(first, last)
    check_language(language)
    return shown_plugins(db, account)


def empty_days(first: date, last: date) -> list[Day]:
    """A taken-down plug-in's days: every day, no section."""
    return [
        {"date": (first + timedelta(days=n)).isoformat(), "sections": []}
        for n in range((last - first).days + 1)
    ]


def _drawn(
    plugin: ReadablePlugin,
    sources: DaySources,
    first: date,
    last: date,
    today: date,
    language: str,
) -> list[Day]:
    """The plug-in's days drawn from what `day_sources` read."""
    return render_days(
        plugin.manifest,
        sources.records_of(plugin.id),
        from_date=first,
        to_date=last,
        today=today,
        language=language,
        status=plugin.status,
        kept=sources.kept.get(plugin.id, ()),
    )


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
    chosen = checked_shown_plugins(db, account, first, last, language)
    drawn = [p for p in chosen if not p.taken_down]
    stored = day_sources(db.connection(), drawn, first, last, today)
    result = []
    for plugin in chosen:
        if plugin.taken_down:
            empty = empty_days(first, last)
            result.append(PluginDays(plugin.id, plugin.status, plugin.takedown_message, empty))
            continue
        days = _drawn(plugin, stored, first, last, today, language)
        result.append(PluginDays(plugin.id, plugin.status, None, days))
    return result


_DrawnKey = tuple[str, int, str, str, date, date, date, str]
K = TypeVar("K", bound=Hashable)


class DrawnDays(Generic[K]):
    """Drawn days as JSON (or any other drawn bytes, such as a calendar feed's), by key, least
    recently used first out, at most `max_bytes` of them. Safe to share between threads."""

    def __init__(self, max_bytes: int) -> None:
        self.max_bytes = max_bytes
        self._kept: OrderedDict[K, bytes] = OrderedDict()
        self._bytes = 0
        self._lock = threading.Lock()

    def get(self, key: K) -> bytes | None:
        with self._lock:
            found = self._kept.get(key)
            if found is not None:
                self._kept.move_to_end(key)
            return found

    def put(self, key: K, encoded: bytes) -> None:
        if len(encoded) > self.max_bytes:
            return
        with self._lock:
            old = self._kept.pop(key, None)
            if old is not None:
                self._bytes -= len(old)
            self._kept[key] = encoded
            self._bytes += len(encoded)
            while self._bytes > self.max_bytes:
                _, dropped = self._kept.popitem(last=False)
                self._bytes -= len(dropped)

    def __len__(self) -> int:
        return len(self._kept)

    def clear(self) -> None:
        with self._lock:
            self._kept.clear()
            self._bytes = 0


DRAWN_DAYS: DrawnDays[_DrawnKey] = DrawnDays(max_bytes=64 * 1024 * 1024)
"""The process's drawn days (62 days of a busy plug-in are some 60 KB of JSON)."""


def _drawn_key(
    plugin: ReadablePlugin, first: date, last: date, today: date, language: str
) -> _DrawnKey | None:
    """Everything the drawn days of a plug-in depend on; None when its records carry no stamp
    (never written since the stamp came), so nothing may be kept."""
    if plugin.records_stamp is None:
        return None
    return (
        plugin.id,
        plugin.version_id,
        plugin.records_stamp,
        plugin.status,
        first,
        last,
        today,
        language,
    )


def read_days_json(
    db: Session,
    account: Account,
    *,
    first: date,
    last: date,
    today: date,
    language: str,
) -> list[EncodedPluginDays]:
    """`read_days` with each plug-in's days encoded by `compact_json`. Days drawn before from
    the same records stamp, version, status, range, today and language are reused (see the
    module's docstring); the others are read and drawn in one go and kept."""
    chosen = checked_shown_plugins(db, account, first, last, language)
    encoded: dict[str, bytes] = {}
    missing: list[tuple[ReadablePlugin, _DrawnKey | None]] = []
    for plugin in chosen:
        if plugin.taken_down:
            encoded[plugin.id] = compact_json(empty_days(first, last))
            continue
        key = _drawn_key(plugin, first, last, today, language)
        found = None if key is None else DRAWN_DAYS.get(key)
        if found is None:
            missing.append((plugin, key))
        else:
            encoded[plugin.id] = found
    if missing:
        stored = day_sources(db.connection(), [p for p, _ in missing], first, last, today)
        for plugin, key in missing:
            days = compact_json(_drawn(plugin, stored, first, last, today, language))
            encoded[plugin.id] = days
            if key is not None:
                DRAWN_DAYS.put(key, days)
    return [
        EncodedPluginDays(
            p.id, p.status, p.takedown_message if p.taken_down else None, encoded[p.id]
        )
        for p in chosen
    ]


Kept = Mapping[str, tuple[Series, ...]]
"""Per plug-in id, the series `kept_series` found (plug-ins without any left out)."""
_KeptKey = tuple[str, int, str]
_KEPT: OrderedDict[_KeptKey, tuple[Series, ...]] = OrderedDict()
_KEPT_MAX = 4096
_KEPT_LOCK = threading.Lock()


def kept_series(
    conn: Connection, plugins: Sequence[ReadablePlugin]
) -> dict[str, tuple[Series, ...]]:
    """Per plug-in, the series its readers' days and feeds draw besides its approved version's
    ("Versioning" 4 and 5: an update never removes records; removing a series keeps them, and
    readers move to an update "without reinstalling or losing records"): each series key that
    an earlier version which ran declared and the approved version does not, defined as the
    newest such version defined it, so its records are drawn under the last names readers
    saw them by. Newest version first, each in its own order (`render_days`' `kept`).

    Which versions ran only changes with a write of records (a successful run), which renews
    the records stamp, or with the approved version: the answer is kept by both."""
    found: dict[str, tuple[Series, ...]] = {}
    missing: list[ReadablePlugin] = []
    for plugin in plugins:
        key = _kept_key(plugin)
        with _KEPT_LOCK:
            kept = None if key is None else _KEPT.get(key)
        if kept is None:
            missing.append(plugin)
        elif kept:
            found[plugin.id] = kept
    if not missing:
        return found
    earlier: dict[str, list[RanVersion]] = {}
    for version in earlier_versions_that_ran(conn, {p.id: p.version_id for p in missing}):
        earlier.setdefault(version.plugin_id, []).append(version)
    for plugin in missing:
        kept = _kept_of(plugin, earlier.get(plugin.id, []))
        key = _kept_key(plugin)
        if key is not None:
            with _KEPT_LOCK:
                _KEPT[key] = kept
                if len(_KEPT) > _KEPT_MAX:
                    _KEPT.popitem(last=False)
        if kept:
            found[plugin.id] = kept
    return found


def _kept_key(plugin: ReadablePlugin) -> _KeptKey | None:
    if plugin.records_stamp is None:
        return None
    return (plugin.id, plugin.version_id, plugin.records_stamp)


def _kept_of(plugin: ReadablePlugin, earlier: Sequence[RanVersion]) -> tuple[Series, ...]:
    """`kept_series` of one plug-in from its earlier versions that ran, newest first. A
    version's manifest is parsed only when it declares a key not seen yet."""
    seen = {series.key for series in plugin.manifest.series}
    kept: list[Series] = []
    for version in earlier:
        keys = [s.get("key") for s in version.manifest.get("series", ())]
        if all(key in seen for key in keys):
            continue
        for series in checked_manifest(version.manifest).series:
            if series.key not in seen:
                seen.add(series.key)
                kept.append(series)
    return tuple(kept)


def wanted_series(plugins: Sequence[ReadablePlugin], kept: Kept) -> list[SeriesWanted]:
    """Every series the plug-ins' approved manifests declare, then their kept series, as
    `records_for_days` asks."""
    return [
        SeriesWanted(p.id, s.key, s.kind)
        for p in plugins
        for s in (*p.manifest.series, *kept.get(p.id, ()))
    ]


@dataclass(frozen=True, slots=True)
class DaySources:
    """What some plug-ins' days over a range are drawn from: their kept series and, by
    plug-in, the records `records_for_days` read."""

    kept: Kept
    records: Mapping[str, list[DayRecord]]

    def records_of(self, plugin_id: str) -> list[dict[str, Any]]:
        """The plug-in's records in `render_days`' shape."""
        return [from_stored(r) for r in self.records.get(plugin_id, ())]


def day_sources(
    conn: Connection,
    plugins: Sequence[ReadablePlugin],
    first: date,
    last: date,
    today: date,
) -> DaySources:
    """The stored current records (withdrawn left out, a moved event's old date carrying
    `movedTo`) that `render_days` needs to draw these plug-ins over `first`..`last` for
    `today`, and their kept series (`kept_series`), read for the reader's days and the
    calendar feeds alike: every record in the range; per declared or kept series its newest
    record on or before `today` (rule 9's newest); per value series its first record after
    the range and the two newest before it (rules 4 and 5); per event series with a happened
    value in the range, the newest happened event with a value before it (rule 6's change)."""
    kept = kept_series(conn, plugins)
    ids = [p.id for p in plugins]
    found: dict[str, list[DayRecord]] = {}
    for record in records_for_days(conn, ids, wanted_series(plugins, kept), first, last, today):
        found.setdefault(record.plugin_id, []).append(record)
    return DaySources(kept, found)


def day_records(
    conn: Connection,
    plugins: Sequence[ReadablePlugin],
    first: date,
    last: date,
    today: date,
) -> dict[str, list[dict[str, Any]]]:
    """Per plug-in, the records of `day_sources` in `render_days`' shape."""
    sources = day_sources(conn, plugins, first, last, today)
    return {plugin_id: sources.records_of(plugin_id) for plugin_id in sources.records}


def day_rows(
    conn: Connection,
    plugins: Sequence[ReadablePlugin],
    first: date,
    last: date,
    today: date,
) -> list[Row[Any]]:
    """The statement of `day_sources` alone: (id, plugin, series, date, discriminator, kind,
    content text, moved_to) rows, a record possibly twice."""
    ids = [p.id for p in plugins]
    wanted = wanted_series(plugins, kept_series(conn, plugins))
    return records_for_days_rows(conn, ids, wanted, first, last, today)


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
    "DRAWN_DAYS",
    "DaySources",
    "DrawnDays",
    "EncodedPluginDays",
    "PluginDays",
    "PluginRecords",
    "RawRecord",
    "RecordHistoryEntry",
    "check_language",
    "check_range",
    "compact_json",
    "day_records",
    "day_rows",
    "day_sources",
    "kept_series",
    "plugin_records",
    "read_days",
    "read_days_json",
    "shown_plugins",
    "wanted_series",
]
