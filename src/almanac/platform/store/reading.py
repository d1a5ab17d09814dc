"""Reading the store: series state for the run context, records over a range of days (current
or as they stood at a past moment), a record's revision history, the last runs, Held details."""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import date, datetime
from typing import Any

from sqlalchemy import Connection, and_, func, literal, select, union_all

from almanac.platform.store.tables import (
    held_series,
    plugins,
    records,
    revisions,
    run_sources,
    runs,
)

LAST_RUNS = 5


@dataclass(frozen=True, slots=True)
class SeriesState:
    """Series context of the run context: newest stored date on or before today, and count."""

    last: date | None
    count: int

    def as_context(self) -> dict[str, Any]:
        return {"last": self.last.isoformat() if self.last else None, "count": self.count}


@dataclass(frozen=True, slots=True)
class StoredRecord:
    """A record as it stands (or stood): key, content and the run, version and digest that
    wrote that content."""

    record_id: int
    plugin_id: str
    series: str
    date: date
    discriminator: str
    kind: str
    content: dict[str, Any]
    moved_to: date | None
    run_id: int
    version_id: int
    digest: str
    since: datetime


@dataclass(frozen=True, slots=True)
class RevisionEntry:
    """One content and state of a record over [valid_from, valid_to); valid_to None = current."""

    content: dict[str, Any]
    withdrawn: bool
    moved_to: date | None
    run_id: int
    version_id: int
    digest: str
    valid_from: datetime
    valid_to: datetime | None


def series_state(
    conn: Connection, plugin_id: str, series_keys: Iterable[str], today: date
) -> dict[str, SeriesState]:
    """ "Run context" Series context for each series: `last` = newest stored non-withdrawn record
    dated on or before today, `count` = stored non-withdrawn records."""
    keys = list(series_keys)
    query = (
        select(
            records.c.series,
            func.max(records.c.date).filter(records.c.date <= today),
            func.count(),
        )
        .where(
            records.c.plugin_id == plugin_id,
            records.c.withdrawn.is_(False),
            records.c.series.in_(keys),
        )
        .group_by(records.c.series)
    )
    found = {series: SeriesState(last, count) for series, last, count in conn.execute(query)}
    return {key: found.get(key, SeriesState(None, 0)) for key in keys}


def records_between(
    conn: Connection,
    plugin_ids: Sequence[str],
    first: date,
    last: date,
    *,
    as_of: datetime | None = None,
) -> list[StoredRecord]:
    """Visible records of the plug-ins dated first..last, as they stand now, or as they stood
    at `as_of` (revision validity intervals). Withdrawn records and taken-down plug-ins are
    hidden."""
    visible = select(plugins.c.id).where(
        plugins.c.id.in_(list(plugin_ids)), plugins.c.taken_down.is_(False)
    )
    in_range = and_(
        records.c.plugin_id.in_(visible), records.c.date >= first, records.c.date <= last
    )
    current = select(
        records.c.id.label("record_id"),
        records.c.content,
        records.c.withdrawn,
        records.c.moved_to,
        records.c.run_id,
        records.c.version_id,
        records.c.digest,
        records.c.since,
    ).where(in_range)
    if as_of is None:
        states = current.subquery()
    else:
        earlier = (
            select(
                revisions.c.record_id,
                revisions.c.content,
                revisions.c.withdrawn,
                revisions.c.moved_to,
                revisions.c.run_id,
                revisions.c.version_id,
                revisions.c.digest,
                revisions.c.valid_from.label("since"),
            )
            .join(records, records.c.id == revisions.c.record_id)
            .where(in_range, revisions.c.valid_from <= as_of, revisions.c.valid_to > as_of)
        )
        states = union_all(current.where(records.c.since <= as_of), earlier).subquery()
    query = (
        select(
            records.c.plugin_id,
            records.c.series,
            records.c.date,
            records.c.discriminator,
            records.c.kind,
            states,
        )
        .join(states, states.c.record_id == records.c.id)
        .where(states.c.withdrawn.is_(False))
        .order_by(records.c.date, records.c.plugin_id, records.c.series, records.c.discriminator)
    )
    return [
        StoredRecord(
            record_id=row.record_id,
            plugin_id=row.plugin_id,
            series=row.series,
            date=row.date,
            discriminator=row.discriminator,
            kind=row.kind,
            content=json.loads(row.content),
            moved_to=row.moved_to,
            run_id=row.run_id,
            version_id=row.version_id,
            digest=row.digest,
            since=row.since,
        )
        for row in conn.execute(query)
    ]


def find_record(
    conn: Connection, plugin_id: str, series: str, day: date, discriminator: str = ""
) -> int | None:
    """The id of the stored record with this key, withdrawn or not."""
    return conn.execute(
        select(records.c.id).where(
            records.c.plugin_id == plugin_id,
            records.c.series == series,
            records.c.date == day,
            records.c.discriminator == discriminator,
        )
    ).scalar()


def revision_history(conn: Connection, record_id: int) -> list[RevisionEntry]:
    """Every content and state the record had, oldest first; the last entry is current."""
    earlier = conn.execute(
        select(revisions).where(revisions.c.record_id == record_id).order_by(revisions.c.id)
    ).mappings()
    entries = [
        RevisionEntry(
            content=json.loads(r["content"]),
            withdrawn=bool(r["withdrawn"]),
            moved_to=r["moved_to"],
            run_id=r["run_id"],
            version_id=r["version_id"],
            digest=r["digest"],
            valid_from=r["valid_from"],
            valid_to=r["valid_to"],
        )
        for r in earlier
    ]
    now = conn.execute(select(records).where(records.c.id == record_id)).mappings().first()
    if now is not None:
        entries.append(
            RevisionEntry(
                content=json.loads(now["content"]),
                withdrawn=bool(now["withdrawn"]),
                moved_to=now["moved_to"],
                run_id=now["run_id"],
                version_id=now["version_id"],
                digest=now["digest"],
                valid_from=now["since"],
                valid_to=None,
            )
        )
    return entries


def record_state(conn: Connection, record_id: int) -> dict[str, Any]:
    """The stored row of a record: misses, withdrawn, moved_to, content and who wrote it."""
    row = conn.execute(select(records).where(records.c.id == record_id)).mappings().one()
    return {**row, "content": json.loads(row["content"])}


def last_runs(conn: Connection, plugin_id: str, limit: int = LAST_RUNS) -> list[dict[str, Any]]:
    """The plug-in's newest runs, newest first, each with its sources (the host shows five)."""
    rows = [
        dict(r)
        for r in conn.execute(
            select(runs)
            .where(runs.c.plugin_id == plugin_id)
            .order_by(runs.c.id.desc())
            .limit(limit)
        ).mappings()
    ]
    if rows:
        sources = conn.execute(
            select(run_sources)
            .where(run_sources.c.run_id.in_([r["id"] for r in rows]))
            .order_by(run_sources.c.run_id, run_sources.c.position)
        ).mappings()
        by_run: dict[int, list[dict[str, Any]]] = {}
        for source in sources:
            by_run.setdefault(source["run_id"], []).append(dict(source))
        for row in rows:
            row["sources"] = by_run.get(row["id"], [])
    return rows


def held_details(conn: Connection, plugin_id: str) -> list[dict[str, Any]]:
    """The series held back from withdrawal: run, how many, window size, first missing dates."""
    query = (
        select(held_series, literal(0).label("_"))
        .where(held_series.c.plugin_id == plugin_id)
        .order_by(held_series.c.series)
    )
    return [
        {
            "series": r["series"],
            "run_id": r["run_id"],
            "count": len(r["record_ids"]),
            "window_count": r["window_count"],
            "first_dates": list(r["first_dates"]),
            "held_at": r["held_at"],
        }
        for r in conn.execute(query).mappings()
    ]
