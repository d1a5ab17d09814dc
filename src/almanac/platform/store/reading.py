"""Reading the store: series state for the run context, records over a range of days (current
or as they stood at a past moment), the records a reader's days are drawn from, records'
revision histories, the last runs, Held details."""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import date, datetime
from typing import Any, NamedTuple

from sqlalchemy import (
    BindParameter,
    CompoundSelect,
    Connection,
    Row,
    Select,
    and_,
    bindparam,
    case,
    cast,
    func,
    literal,
    or_,
    select,
    text,
    union_all,
)
from sqlalchemy.dialects.postgresql import JSONB

from almanac.platform.store.tables import (
    held_series,
    plugins,
    records,
    revisions,
    run_sources,
    runs,
    versions,
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

    # `dt.date`: in the class body the field `date` hides the type of the same name.
    record_id: int
    plugin_id: str
    series: str
    date: dt.date
    discriminator: str
    kind: str
    content: dict[str, Any]
    moved_to: dt.date | None
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


@dataclass(frozen=True, slots=True)
class RanVersion:
    """A version of a plug-in that had a successful run, and its manifest as stored."""

    plugin_id: str
    version_id: int
    manifest: dict[str, Any]


def earlier_versions_that_ran(conn: Connection, approved: Mapping[str, int]) -> list[RanVersion]:
    """Per plug-in of `approved` (plug-in id to its approved version's id), every other version
    of it that had a successful run, newest version first. Only a successful run writes
    records (in the run's own transaction), so these are the versions that may have written
    records the approved version does not declare."""
    if not approved:
        return []
    ids: BindParameter[list[str]] = bindparam("plugin_ids", expanding=True)
    skipped: BindParameter[list[int]] = bindparam("approved_ids", expanding=True)
    ran = (
        select(runs.c.id)
        .where(
            runs.c.plugin_id == versions.c.plugin_id,
            runs.c.version_id == versions.c.id,
            runs.c.outcome == "success",
        )
        .exists()
    )
    query = (
        select(versions.c.plugin_id, versions.c.id, versions.c.manifest)
        .where(versions.c.plugin_id.in_(ids), versions.c.id.not_in(skipped), ran)
        .order_by(versions.c.plugin_id, versions.c.id.desc())
    )
    given = {"plugin_ids": list(approved), "approved_ids": list(approved.values())}
    return [RanVersion(row.plugin_id, row.id, row.manifest) for row in conn.execute(query, given)]


class SeriesWanted(NamedTuple):
    """A declared series whose records a reader's days are drawn from."""

    plugin_id: str
    series: str
    kind: str


@dataclass(frozen=True, slots=True)
class DayRecord:
    """A current record a reader's days are drawn from: what `reader.from_stored` reads, and
    the record's id and plug-in."""

    # `dt.date`: in the class body the field `date` hides the type of the same name.
    record_id: int
    plugin_id: str
    series: str
    date: dt.date
    discriminator: str
    kind: str
    content: dict[str, Any]
    moved_to: dt.date | None


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


def records_for_days_rows(
    conn: Connection,
    plugin_ids: Sequence[str],
    wanted: Sequence[SeriesWanted],
    first: date,
    last: date,
    today: date,
) -> list[Row[Any]]:
    """The statement of `records_for_days` alone: (id, plugin, series, date, discriminator,
    kind, content text, moved_to) rows, a record possibly twice."""
    if not wanted:
        return []
    if conn.dialect.name == "postgresql":
        return list(
            conn.execute(
                _POSTGRES_DAYS,
                {
                    "plugin_ids": [w.plugin_id for w in wanted],
                    "series": [w.series for w in wanted],
                    "kinds": [w.kind for w in wanted],
                    "ids": list(plugin_ids),
                    "first": first,
                    "last": last,
                    "today": today,
                },
            ).all()
        )
    return list(conn.execute(_portable_days(plugin_ids, wanted, first, last, today)).all())


def records_for_days(
    conn: Connection,
    plugin_ids: Sequence[str],
    wanted: Sequence[SeriesWanted],
    first: date,
    last: date,
    today: date,
) -> list[DayRecord]:
    """The current records (withdrawn left out) of these plug-ins that a reader's days
    `first`..`last` seen on `today` are drawn from, each once: every record in the range; per
    wanted series its newest record on or before `today`; per value series its first record
    after the range and the two newest before it; per event series with a happened value in
    the range, the newest happened event with a value before it."""
    return _each_once(records_for_days_rows(conn, plugin_ids, wanted, first, last, today))


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


def _portable_days(
    plugin_ids: Sequence[str],
    wanted: Iterable[SeriesWanted],
    first: date,
    last: date,
    today: date,
) -> CompoundSelect[Any]:
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
            records.c.plugin_id.in_(list(plugin_ids)),
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


def revision_histories(
    conn: Connection, record_ids: Sequence[int], as_of: datetime | None = None
) -> dict[int, list[RevisionEntry]]:
    """Every content and state each record had, oldest first, the current one last, in two
    statements for all records; with `as_of`, only what had begun by then."""
    if not record_ids:
        return {}
    ids: BindParameter[list[int]] = bindparam("ids", expanding=True)
    earlier = select(revisions).where(revisions.c.record_id.in_(ids)).order_by(revisions.c.id)
    current = select(records).where(records.c.id.in_(ids))
    if as_of is not None:
        earlier = earlier.where(revisions.c.valid_from <= as_of)
        current = current.where(records.c.since <= as_of)
    given = {"ids": list(record_ids)}
    found: dict[int, list[RevisionEntry]] = {}
    for r in conn.execute(earlier, given):
        found.setdefault(r.record_id, []).append(
            RevisionEntry(
                content=json.loads(r.content),
                withdrawn=bool(r.withdrawn),
                moved_to=r.moved_to,
                run_id=r.run_id,
                version_id=r.version_id,
                digest=r.digest,
                valid_from=r.valid_from,
                valid_to=r.valid_to,
            )
        )
    for r in conn.execute(current, given):
        found.setdefault(r.id, []).append(
            RevisionEntry(
                content=json.loads(r.content),
                withdrawn=bool(r.withdrawn),
                moved_to=r.moved_to,
                run_id=r.run_id,
                version_id=r.version_id,
                digest=r.digest,
                valid_from=r.since,
                valid_to=None,
            )
        )
    return found


@dataclass(frozen=True, slots=True)
class RecordStamp:
    """When a record's current content and state began, and how many earlier ones it had."""

    since: datetime
    revisions: int


_STAMPS_AT_ONCE = 10_000


def record_stamps(conn: Connection, record_ids: Sequence[int]) -> dict[int, RecordStamp]:
    """Per record id, the moment its current row began and the count of its revisions (each
    revision, move or return keeps one), in statements of at most 10,000 ids."""
    ids: BindParameter[list[int]] = bindparam("ids", expanding=True)
    counts = (
        select(revisions.c.record_id, func.count().label("n"))
        .where(revisions.c.record_id.in_(ids))
        .group_by(revisions.c.record_id)
        .subquery()
    )
    query = (
        select(records.c.id, records.c.since, func.coalesce(counts.c.n, 0).label("n"))
        .outerjoin(counts, counts.c.record_id == records.c.id)
        .where(records.c.id.in_(ids))
    )
    found: dict[int, RecordStamp] = {}
    unique = sorted(set(record_ids))
    for start in range(0, len(unique), _STAMPS_AT_ONCE):
        part = unique[start : start + _STAMPS_AT_ONCE]
        for row in conn.execute(query, {"ids": part}):
            found[row.id] = RecordStamp(since=row.since, revisions=int(row.n))
    return found


def revision_history(conn: Connection, record_id: int) -> list[RevisionEntry]:
    """Every content and state the record had, oldest first; the last entry is current."""
    return revision_histories(conn, [record_id]).get(record_id, [])


@dataclass(frozen=True, slots=True)
class RecordState:
    """The stored row of a record: its key, content and who wrote it, misses, withdrawn and
    moved_to."""

    # `dt.date`: in the class body the field `date` hides the type of the same name.
    id: int
    plugin_id: str
    series: str
    date: dt.date
    discriminator: str
    kind: str
    content: dict[str, Any]
    run_id: int
    version_id: int
    digest: str
    since: datetime
    misses: int
    withdrawn: bool
    moved_to: dt.date | None


def record_state(conn: Connection, record_id: int) -> RecordState:
    """The stored row of a record: misses, withdrawn, moved_to, content and who wrote it."""
    row = conn.execute(select(records).where(records.c.id == record_id)).one()
    return RecordState(
        id=row.id,
        plugin_id=row.plugin_id,
        series=row.series,
        date=row.date,
        discriminator=row.discriminator,
        kind=row.kind,
        content=json.loads(row.content),
        run_id=row.run_id,
        version_id=row.version_id,
        digest=row.digest,
        since=row.since,
        misses=row.misses,
        withdrawn=row.withdrawn,
        moved_to=row.moved_to,
    )


@dataclass(frozen=True, slots=True)
class RunSource:
    """A source downloaded for a run: its place in the manifest's list, name, final URL, bytes,
    SHA-256 and when it was fetched."""

    run_id: int
    position: int
    name: str
    final_url: str
    bytes: int
    sha256: str
    fetched_at: datetime


@dataclass(frozen=True, slots=True)
class StoredRun:
    """One attempt as kept: version, digest, Node version, the locked room's layers, trigger,
    times, counts, outcome and reason, and the sources it downloaded in order."""

    id: int
    plugin_id: str
    version_id: int
    digest: str
    node_version: str | None
    layers: dict[str, bool] | None
    trigger: str
    request_id: int | None
    today: date
    backfill: bool
    started_at: datetime
    ended_at: datetime
    outcome: str
    reason: str | None
    new: int
    revised: int
    unchanged: int
    moved: int
    missed: int
    withdrawn: int
    returned: int
    sources: list[RunSource]


def last_runs(conn: Connection, plugin_id: str, limit: int = LAST_RUNS) -> list[StoredRun]:
    """The plug-in's newest runs, newest first, each with its sources (the host shows five)."""
    rows = conn.execute(
        select(runs).where(runs.c.plugin_id == plugin_id).order_by(runs.c.id.desc()).limit(limit)
    ).all()
    by_run: dict[int, list[RunSource]] = {}
    if rows:
        sources = conn.execute(
            select(run_sources)
            .where(run_sources.c.run_id.in_([r.id for r in rows]))
            .order_by(run_sources.c.run_id, run_sources.c.position)
        )
        for source in sources:
            by_run.setdefault(source.run_id, []).append(
                RunSource(
                    run_id=source.run_id,
                    position=source.position,
                    name=source.name,
                    final_url=source.final_url,
                    bytes=source.bytes,
                    sha256=source.sha256,
                    fetched_at=source.fetched_at,
                )
            )
    return [
        StoredRun(
            id=r.id,
            plugin_id=r.plugin_id,
            version_id=r.version_id,
            digest=r.digest,
            node_version=r.node_version,
            layers=r.layers,
            trigger=r.trigger,
            request_id=r.request_id,
            today=r.today,
            backfill=r.backfill,
            started_at=r.started_at,
            ended_at=r.ended_at,
            outcome=r.outcome,
            reason=r.reason,
            new=r.new,
            revised=r.revised,
            unchanged=r.unchanged,
            moved=r.moved,
            missed=r.missed,
            withdrawn=r.withdrawn,
            returned=r.returned,
            sources=by_run.get(r.id, []),
        )
        for r in rows
    ]


@dataclass(frozen=True, slots=True)
class HeldDetail:
    """A series whose withdrawals a run held back: the run, how many records, the window's
    size, the first missing dates (ISO text) and when it was held."""

    series: str
    run_id: int
    count: int
    window_count: int
    first_dates: list[str]
    held_at: datetime


def held_details(conn: Connection, plugin_id: str) -> list[HeldDetail]:
    """The series held back from withdrawal: run, how many, window size, first missing dates."""
    query = (
        select(held_series, literal(0).label("_"))
        .where(held_series.c.plugin_id == plugin_id)
        .order_by(held_series.c.series)
    )
    return [
        HeldDetail(
            series=r.series,
            run_id=r.run_id,
            count=len(r.record_ids),
            window_count=r.window_count,
            first_dates=list(r.first_dates),
            held_at=r.held_at,
        )
        for r in conn.execute(query)
    ]


def orchestrator_runs_kept(conn: Connection, orchestrator_runs: Sequence[str]) -> set[str]:
    """Which of these orchestrator runs (Dagster run ids) have their outcome in the store."""
    if not orchestrator_runs:
        return set()
    query = select(runs.c.orchestrator_run).where(
        runs.c.orchestrator_run.in_(sorted(set(orchestrator_runs)))
    )
    return {str(found) for found in conn.execute(query).scalars()}


def _happened_with_value(dialect: str, content: Any, moved_to: Any) -> Any:
    """A happened event with a numeric `value`, not moved away (rule 6's change), on the
    record content stored as JSON text."""
    if dialect == "postgresql":
        doc = cast(content, JSONB)
        state = doc["state"].astext
        value_type = func.jsonb_typeof(doc["value"])
        number = value_type == "number"
    else:
        state = func.json_extract(content, "$.state")
        number = func.json_type(content, "$.value").in_(("integer", "real"))
    return and_(moved_to.is_(None), state == "happened", number)


def _each_once(rows: Iterable[Row[Any]]) -> list[DayRecord]:
    """The records of rows in `_PORTABLE`'s columns, each once (a record chosen for several
    reasons comes back from several parts of a union)."""
    seen: set[int] = set()
    found: list[DayRecord] = []
    for row in rows:
        if row.id in seen:
            continue
        seen.add(row.id)
        found.append(
            DayRecord(
                record_id=row.id,
                plugin_id=row.plugin_id,
                series=row.series,
                date=row.date,
                discriminator=row.discriminator,
                kind=row.kind,
                content=json.loads(row.content),
                moved_to=row.moved_to,
            )
        )
    return found


def series_first_date(conn: Connection, plugin_id: str, series: str) -> date | None:
    """The date of the series' first current (not withdrawn) record."""
    first: date | None = conn.execute(
        select(func.min(records.c.date)).where(
            records.c.plugin_id == plugin_id,
            records.c.series == series,
            records.c.withdrawn.is_(False),
        )
    ).scalar()
    return first


def series_chart_records(
    conn: Connection, plugin_id: str, series: str, kind: str, first: date, last: date
) -> list[DayRecord]:
    """The current records a chart of one series over `first`..`last` is drawn from, by date:
    every record in the range; for a value series the newest before it (the value in force)
    and the first after it (in force, not last rate); for an event series the newest happened
    event with a value before it (where the step line starts)."""
    own = and_(
        records.c.plugin_id == plugin_id,
        records.c.series == series,
        records.c.withdrawn.is_(False),
    )
    newest = records.c.date.desc(), records.c.discriminator.desc()
    parts = [select(*_PORTABLE).where(own, records.c.date.between(first, last))]
    if kind == "value":
        parts.append(select(*_PORTABLE).where(own, records.c.date < first).order_by(*newest))
        parts.append(
            select(*_PORTABLE)
            .where(own, records.c.date > last)
            .order_by(records.c.date, records.c.discriminator)
        )
    else:
        happened = _happened_with_value(conn.dialect.name, records.c.content, records.c.moved_to)
        parts.append(
            select(*_PORTABLE).where(own, happened, records.c.date < first).order_by(*newest)
        )
    limited = [parts[0], *(p.limit(1) for p in parts[1:])]
    query = union_all(*(select(sub).select_from(sub) for sub in (q.subquery() for q in limited)))
    return sorted(
        _each_once(conn.execute(query)),
        key=lambda r: (r.date, r.discriminator),
    )


@dataclass(frozen=True, slots=True)
class _StoodAt:
    """Records joined to the state each had at a moment (its current content when that
    began by then, else the revision current then): the columns of `_PORTABLE` over those
    states, and the condition that a record stood then (existed, not withdrawn)."""

    source: Any
    columns: tuple[Any, ...]
    stood: Any


def _stood_at(as_of: datetime) -> _StoodAt:
    then = revisions.alias("then")
    source = records.outerjoin(
        then,
        and_(
            then.c.record_id == records.c.id,
            then.c.valid_from <= as_of,
            then.c.valid_to > as_of,
        ),
    )
    began = records.c.since <= as_of
    content = case((began, records.c.content), else_=then.c.content)
    moved_to = case((began, records.c.moved_to), else_=then.c.moved_to)
    withdrawn = case((began, records.c.withdrawn), else_=then.c.withdrawn)
    columns = (
        *(records.c[name] for name in ("id", "plugin_id", "series", "date", "discriminator")),
        records.c.kind,
        content.label("content"),
        moved_to.label("moved_to"),
    )
    stood = and_(or_(began, then.c.record_id.is_not(None)), withdrawn.is_(False))
    return _StoodAt(source, columns, stood)


def records_for_days_as_of(
    conn: Connection,
    plugin_ids: Sequence[str],
    wanted: Sequence[SeriesWanted],
    first: date,
    last: date,
    today: date,
    as_of: datetime,
) -> list[DayRecord]:
    """`records_for_days` as the records stood at `as_of`: the same choice of records (every
    record in the range; per wanted series the newest on or before `today`; per value series
    the first after the range and the two newest before it; per event series the newest
    happened event with a value before it), made over the records' states at that moment.
    Each choice outside the range is a limited select per series walking the records' key
    from the range outwards, so the read is bounded by the asked days and the few records in
    force around them, not by the plug-in's whole history; one statement on either database."""
    if not wanted:
        return []
    at = _stood_at(as_of)
    content, moved_to = at.columns[6], at.columns[7]
    happened = _happened_with_value(conn.dialect.name, content, moved_to)
    newest = (records.c.date.desc(), records.c.discriminator.desc())
    oldest = (records.c.date, records.c.discriminator)

    def chosen(*where: Any) -> Select[Any]:
        return select(*at.columns).select_from(at.source).where(at.stood, *where)

    parts: list[Any] = [
        chosen(records.c.plugin_id.in_(list(plugin_ids)), records.c.date.between(first, last))
    ]
    for plugin_id, series, kind in wanted:
        own = (records.c.plugin_id == plugin_id, records.c.series == series)
        limited = [chosen(*own, records.c.date <= today).order_by(*newest).limit(1)]
        if kind == "value":
            limited.append(chosen(*own, records.c.date > last).order_by(*oldest).limit(1))
            limited.append(chosen(*own, records.c.date < first).order_by(*newest).limit(2))
        if kind == "event":
            limited.append(
                chosen(*own, happened, records.c.date < first).order_by(*newest).limit(1)
            )
        parts.extend(select(sub).select_from(sub) for sub in (q.subquery() for q in limited))
    return _each_once(conn.execute(union_all(*parts)))


@dataclass(frozen=True, slots=True)
class ChangedRecord:
    """A record dated in a range whose content or state changed after a moment: its key and
    every content it had, oldest first (the last is current)."""

    record_id: int
    plugin_id: str
    series: str
    date: dt.date
    discriminator: str
    kind: str
    history: list[RevisionEntry]


def changed_since(
    conn: Connection, plugin_ids: Sequence[str], first: date, last: date, since: datetime
) -> list[ChangedRecord]:
    """The records of the plug-ins dated `first`..`last` whose current content began after
    `since` (revised, moved, withdrawn, returned or new since then), with their histories."""
    query = (
        select(*_PORTABLE)
        .where(
            records.c.plugin_id.in_(list(plugin_ids)),
            records.c.date.between(first, last),
            records.c.since > since,
        )
        .order_by(records.c.date, records.c.plugin_id, records.c.series, records.c.discriminator)
    )
    rows = list(conn.execute(query))
    histories = revision_histories(conn, [r.id for r in rows])
    return [
        ChangedRecord(
            r.id, r.plugin_id, r.series, r.date, r.discriminator, r.kind, histories.get(r.id, [])
        )
        for r in rows
    ]
