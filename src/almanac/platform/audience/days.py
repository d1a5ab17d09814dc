"""A reader's days and a plug-in's raw records (DECISIONS 6, reader API; "Reader presentation
rules"; "Limits": at most 62 days at once).

The days of every plug-in the reader shows are drawn by `reader.render_days` from exactly the
stored records its docstring names, read in one statement for all plug-ins: the records dated
in the range, and per series only the few records around it that decide a value in force, a
change or the status row. A taken-down plug-in's records are hidden: its days are empty and its
public message goes beside them (see `PluginDays.notice`).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import date, datetime, timedelta
from typing import Any

from sqlalchemy import (
    Connection,
    and_,
    bindparam,
    func,
    select,
    text,
    union_all,
)
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
from almanac.platform.store.reading import records_between
from almanac.platform.store.tables import records, revisions

LANGUAGE = re.compile(r"[A-Za-z]{2,3}(-[A-Za-z0-9]{1,8})*")


@dataclass(frozen=True, slots=True)
class PluginDays:
    """One shown plug-in's days, each `{date, sections}` in the shared rows schema. `notice` is
    the public message of a taken-down plug-in (its days then hold no section), else None."""

    plugin: str
    status: str
    notice: str | None
    days: list[Day]


@dataclass(frozen=True, slots=True)
class _Stored:
    """What `reader.from_stored` reads of a stored record."""

    kind: str
    series: str
    date: date
    discriminator: str
    content: dict[str, Any]
    moved_to: date | None


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


_COLUMNS = "r.id, r.plugin_id, r.series, r.date, r.discriminator, r.kind, r.content, r.moved_to"
_HAPPENED_WITH_VALUE = (
    "r.kind = 'event' AND r.moved_to IS NULL "
    "AND CAST(r.content AS jsonb) ->> 'state' = 'happened' "
    "AND jsonb_typeof(CAST(r.content AS jsonb) -> 'value') = 'number'"
)
# One statement for every shown plug-in. `wanted` lists each declared series; per series a
# LATERAL index scan fetches the few records outside the range that render_days reads.
_POSTGRES_DAYS = text(
    f"""
WITH wanted AS (
  SELECT * FROM unnest(CAST(:plugin_ids AS varchar[]), CAST(:series AS varchar[]),
                       CAST(:kinds AS varchar[])) AS w(plugin_id, series, kind)
)
SELECT {_COLUMNS} FROM records r
WHERE r.plugin_id = ANY(CAST(:ids AS varchar[])) AND r.date BETWEEN :first AND :last
  AND NOT r.withdrawn
UNION ALL
SELECT n.* FROM wanted w CROSS JOIN LATERAL (
  SELECT {_COLUMNS} FROM records r
  WHERE r.plugin_id = w.plugin_id AND r.series = w.series AND r.date <= :today
    AND NOT r.withdrawn
  ORDER BY r.date DESC, r.discriminator DESC LIMIT 1) n
UNION ALL
SELECT a.* FROM (SELECT * FROM wanted WHERE kind = 'value') w CROSS JOIN LATERAL (
  SELECT {_COLUMNS} FROM records r
  WHERE r.plugin_id = w.plugin_id AND r.series = w.series AND r.date > :last
    AND NOT r.withdrawn
  ORDER BY r.date, r.discriminator LIMIT 1) a
UNION ALL
SELECT b.* FROM (SELECT * FROM wanted WHERE kind = 'value') w CROSS JOIN LATERAL (
  SELECT {_COLUMNS} FROM records r
  WHERE r.plugin_id = w.plugin_id AND r.series = w.series AND r.date < :first
    AND NOT r.withdrawn
  ORDER BY r.date DESC, r.discriminator DESC LIMIT 2) b
UNION ALL
SELECT e.* FROM (
  SELECT * FROM wanted w WHERE w.kind = 'event' AND EXISTS (
    SELECT 1 FROM records r
    WHERE r.plugin_id = w.plugin_id AND r.series = w.series
      AND r.date BETWEEN :first AND :last AND NOT r.withdrawn AND {_HAPPENED_WITH_VALUE})
) w CROSS JOIN LATERAL (
  SELECT {_COLUMNS} FROM records r
  WHERE r.plugin_id = w.plugin_id AND r.series = w.series AND r.date < :first
    AND NOT r.withdrawn AND {_HAPPENED_WITH_VALUE}
  ORDER BY r.date DESC, r.discriminator DESC LIMIT 1) e
"""
)


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
    seen: set[int] = set()
    found: dict[str, list[dict[str, Any]]] = {}
    for record_id, plugin_id, series, day, discriminator, kind, content, moved_to in day_rows(
        conn, plugins, first, last, today
    ):
        if record_id in seen:
            continue
        seen.add(record_id)
        stored = _Stored(kind, series, day, discriminator, json.loads(content), moved_to)
        found.setdefault(plugin_id, []).append(from_stored(stored))
    return found


def day_rows(
    conn: Connection,
    plugins: Sequence[ReadablePlugin],
    first: date,
    last: date,
    today: date,
) -> list[Any]:
    """The statement of `day_records` alone: (id, plugin, series, date, discriminator, kind,
    content text, moved_to) rows, a record possibly twice."""
    wanted = [(p.id, s.key, s.kind) for p in plugins for s in p.manifest.series]
    if not wanted:
        return []
    if conn.dialect.name == "postgresql":
        return list(
            conn.execute(
                _POSTGRES_DAYS,
                {
                    "plugin_ids": [w[0] for w in wanted],
                    "series": [w[1] for w in wanted],
                    "kinds": [w[2] for w in wanted],
                    "ids": [p.id for p in plugins],
                    "first": first,
                    "last": last,
                    "today": today,
                },
            ).all()
        )
    return list(conn.execute(_portable_day_records(plugins, wanted, first, last, today)).all())


_PORTABLE = (
    records.c.id,
    records.c.plugin_id,
    records.c.series,
    records.c.date,
    records.c.discriminator,
    records.c.kind,
    records.c.content,
    records.c.moved_to,
)


def _portable_day_records(
    plugins: Sequence[ReadablePlugin],
    wanted: Iterable[tuple[str, str, str]],
    first: date,
    last: date,
    today: date,
):  # type: ignore[no-untyped-def]
    """The same records for a database without LATERAL (SQLite): one limited select per
    series, joined by UNION ALL."""
    live = records.c.withdrawn.is_(False)
    happened = and_(
        records.c.kind == "event",
        records.c.moved_to.is_(None),
        func.json_extract(records.c.content, "$.state") == "happened",
        func.json_type(records.c.content, "$.value").in_(("integer", "real")),
    )
    parts = [
        select(*_PORTABLE).where(
            records.c.plugin_id.in_([p.id for p in plugins]),
            records.c.date.between(first, last),
            live,
        )
    ]
    for plugin_id, series, kind in wanted:
        own = and_(records.c.plugin_id == plugin_id, records.c.series == series, live)
        newest = records.c.date.desc(), records.c.discriminator.desc()
        limited = [
            select(*_PORTABLE).where(own, records.c.date <= today).order_by(*newest).limit(1)
        ]
        if kind == "value":
            limited.append(
                select(*_PORTABLE)
                .where(own, records.c.date > last)
                .order_by(records.c.date, records.c.discriminator)
                .limit(1)
            )
            limited.append(
                select(*_PORTABLE).where(own, records.c.date < first).order_by(*newest).limit(2)
            )
        if kind == "event":
            limited.append(
                select(*_PORTABLE)
                .where(own, happened, records.c.date < first)
                .order_by(*newest)
                .limit(1)
            )
        parts.extend(select(sub).select_from(sub) for sub in (q.subquery() for q in limited))
    return union_all(*parts)


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
    history = _histories(conn, [s.record_id for s in stored], as_of)
    return PluginRecords(
        plugin.id,
        None,
        [
            RawRecord(
                record=from_stored(s),
                digest=s.digest,
                since=s.since,
                revisions=history.get(s.record_id, []),
            )
            for s in stored
        ],
    )


def _histories(
    conn: Connection, record_ids: list[int], as_of: datetime | None
) -> dict[int, list[RecordHistoryEntry]]:
    """Every content of each record, oldest first, in two statements for all records: the kept
    revisions and the current rows; with `as_of`, only what had begun by then."""
    if not record_ids:
        return {}
    ids = bindparam("ids", expanding=True)
    key = (records.c.id, records.c.kind, records.c.series, records.c.date, records.c.discriminator)
    earlier = (
        select(
            *key,
            revisions.c.content,
            revisions.c.withdrawn,
            revisions.c.moved_to,
            revisions.c.digest,
            revisions.c.valid_from,
            revisions.c.valid_to,
        )
        .join(records, records.c.id == revisions.c.record_id)
        .where(revisions.c.record_id.in_(ids))
    )
    current = select(
        *key,
        records.c.content,
        records.c.withdrawn,
        records.c.moved_to,
        records.c.digest,
        records.c.since,
    ).where(records.c.id.in_(ids))
    if as_of is not None:
        earlier = earlier.where(revisions.c.valid_from <= as_of)
        current = current.where(records.c.since <= as_of)
    found: dict[int, list[RecordHistoryEntry]] = {}
    given = {"ids": record_ids}
    rows = [*conn.execute(earlier, given), *conn.execute(current, given)]
    for row in rows:
        shape = _Stored(
            row.kind, row.series, row.date, row.discriminator, json.loads(row.content), row.moved_to
        )
        valid_to = row.valid_to if len(row) > 10 else None
        valid_from = row.valid_from if len(row) > 10 else row.since
        entry = RecordHistoryEntry(
            from_stored(shape), bool(row.withdrawn), row.digest, valid_from, valid_to
        )
        found.setdefault(row.id, []).append(entry)
    for entries in found.values():
        entries.sort(key=lambda e: (e.valid_from, e.valid_to is None))
    return found


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
