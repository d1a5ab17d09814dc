"""The write: one run, one transaction ("The write", "Stored-record behaviour", "Stored record in
a snapshot window", "Event record", Held, DECISIONS 8 for backfill runs).

The stored records of the plug-in are read with one SELECT and compared with the batch in one
pass keyed by record key; only what changed is written, with bulk statements (COPY on
PostgreSQL, executemany on SQLite).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import date, datetime
from typing import TYPE_CHECKING, Any

from sqlalchemy import (
    BigInteger,
    Boolean,
    Connection,
    Date,
    DateTime,
    Engine,
    Integer,
    String,
    Table,
    bindparam,
    delete,
    insert,
    literal,
    select,
    update,
)
from sqlalchemy.types import TypeDecorator, TypeEngine

from almanac.platform.contract.identity import record_key
from almanac.platform.contract.windows import snapshot_range
from almanac.platform.lifecycle import RunTrigger, State
from almanac.platform.store.engine import write_transaction
from almanac.platform.store.models import HeldSeries, Record, Revision, Run, RunSource
from almanac.platform.store.plugins import (
    RETRY_AFTER,
    lock_plugin,
    plugins,
    record_run_outcome,
    request_run,
)
from almanac.platform.store.types import UTCDateTime, content_text

if TYPE_CHECKING:
    from almanac.platform.contract.manifest import Manifest

records = Record.__table__
revisions = Revision.__table__
runs = Run.__table__
run_sources = RunSource.__table__
held_series = HeldSeries.__table__

MISSES_TO_WITHDRAW = 3
HELD_MOST_RECORDS = 10
HELD_WINDOW_FLOOR = 100
HELD_FIRST_DATES = 10
REASON_LENGTH = 300

Fault = Callable[[str], None]
"""Called between the statements of the write with the name of the step just done; tests
raise from it to prove a crash leaves nothing partial."""


class WriteRefused(Exception):
    """The write was refused before anything was written (taken down, not the approved version,
    removed)."""


@dataclass(frozen=True, slots=True)
class SourceFacts:
    """A downloaded source as kept with its run."""

    name: str
    final_url: str
    bytes: int
    sha256: str
    fetched_at: datetime


@dataclass(frozen=True, slots=True)
class RunFacts:
    """What is known of a run besides its records. `now` is the moment of the write (end time);
    `backfill` is the run context's flag; `trigger` BACKFILL marks a DECISIONS 8 backfill."""

    today: date
    trigger: RunTrigger
    started_at: datetime
    now: datetime
    backfill: bool = False
    node_version: str | None = None
    layers: Mapping[str, bool] | None = None
    request_id: int | None = None
    sources: Sequence[SourceFacts] = ()


@dataclass(slots=True)
class RunCounts:
    new: int = 0
    revised: int = 0
    unchanged: int = 0
    moved: int = 0
    missed: int = 0
    withdrawn: int = 0
    returned: int = 0


@dataclass(frozen=True, slots=True)
class HeldDetail:
    """A series whose withdrawals were held: how many, the window size, the first dates."""

    series: str
    run_id: int
    count: int
    window_count: int
    first_dates: list[str]
    record_ids: list[int] = field(default_factory=list, repr=False)


@dataclass(frozen=True, slots=True)
class WriteResult:
    run_id: int
    counts: RunCounts
    state: State
    held: list[HeldDetail] = field(default_factory=list)


_STORED = (
    records.c.id,
    records.c.series,
    records.c.date,
    records.c.discriminator,
    records.c.kind,
    records.c.content,
    records.c.misses,
    records.c.withdrawn,
    records.c.moved_to,
)
_ID, _SERIES, _DATE, _DISC, _KIND, _CONTENT, _MISSES, _WITHDRAWN, _MOVED = range(9)
_NEW = (
    "plugin_id",
    "series",
    "date",
    "discriminator",
    "kind",
    "content",
    "run_id",
    "version_id",
    "digest",
    "since",
    "misses",
    "withdrawn",
    "moved_to",
)
_CHUNK = 5000


def _no_fault(_step: str) -> None:
    return None


def held_limit_exceeded(withdrawals: int, window_count: int) -> bool:
    """Held: one run would withdraw more than 10 records of a series, or more than 1% of a
    snapshot window holding 100 or more ("States and transitions", Held paragraph)."""
    if withdrawals > HELD_MOST_RECORDS:
        return True
    return window_count >= HELD_WINDOW_FLOOR and withdrawals * 100 > window_count


def _bulk_insert(
    conn: Connection, table: Table, columns: Sequence[str], rows: list[tuple[Any, ...]]
) -> None:
    if not rows:
        return
    if conn.dialect.name != "postgresql":
        conn.execute(insert(table), [dict(zip(columns, row, strict=True)) for row in rows])
        return
    raw = conn.connection.driver_connection
    statement = f"COPY {table.name} ({', '.join(columns)}) FROM STDIN (FORMAT BINARY)"
    with raw.cursor() as cursor, cursor.copy(statement) as copy:
        copy.set_types([_binary_type(table.c[name].type) for name in columns])
        for row in rows:
            copy.write_row(row)


def _binary_type(column_type: TypeEngine[Any]) -> str:
    # Binary COPY needs each column's wire type: an int4 sent to a bigint column is an error.
    if isinstance(column_type, TypeDecorator):
        column_type = column_type.impl_instance
    if isinstance(column_type, Boolean):
        return "bool"
    if isinstance(column_type, DateTime):
        return "timestamptz" if column_type.timezone else "timestamp"
    if isinstance(column_type, Date):
        return "date"
    if isinstance(column_type, BigInteger):
        return "int8"
    if isinstance(column_type, Integer):
        return "int4"
    if isinstance(column_type, String):
        return "text"
    raise TypeError(f"no binary COPY type for {column_type!r}")


def _stored_records(conn: Connection, plugin_id: str) -> Sequence[tuple[Any, ...]]:
    """The plug-in's stored records as plain tuples in `_STORED` order (read straight from the
    driver on PostgreSQL: building 250,000 result rows costs more than the query)."""
    query = select(*_STORED).where(records.c.plugin_id == plugin_id)
    if conn.dialect.name != "postgresql":
        return conn.execute(query).all()
    compiled = query.compile(dialect=conn.dialect)
    raw = conn.connection.driver_connection
    with raw.cursor() as cursor:
        cursor.execute(str(compiled), compiled.params)
        return cursor.fetchall()


def _push_revisions(conn: Connection, record_ids: list[int], now: datetime) -> None:
    """Keep the stored content and state of these records as revisions that stopped being
    current at `now` (set-wise, before they are updated)."""
    columns = (
        "record_id",
        "content",
        "run_id",
        "version_id",
        "digest",
        "withdrawn",
        "moved_to",
        "valid_from",
        "valid_to",
    )
    for start in range(0, len(record_ids), _CHUNK):
        chunk = record_ids[start : start + _CHUNK]
        source = select(
            records.c.id,
            records.c.content,
            records.c.run_id,
            records.c.version_id,
            records.c.digest,
            records.c.withdrawn,
            records.c.moved_to,
            records.c.since,
            literal(now, UTCDateTime()),
        ).where(records.c.id.in_(chunk))
        conn.execute(insert(revisions).from_select(columns, source))


def _bulk_update(conn: Connection, rows: list[dict[str, Any]], columns: Iterable[str]) -> None:
    if not rows:
        return
    statement = (
        update(records)
        .where(records.c.id == bindparam("_id"))
        .values({c: bindparam(c) for c in columns})
    )
    conn.execute(statement, rows)


_FULL = ("content", "run_id", "version_id", "digest", "since", "misses", "withdrawn", "moved_to")


def write_run(
    engine: Engine,
    *,
    plugin_id: str,
    version_id: int,
    digest: str,
    manifest: Manifest,
    run: RunFacts,
    batch: Sequence[Mapping[str, Any]],
    fault: Fault | None = None,
) -> WriteResult:
    """Write a successful run and its batch (already checked by the contract) in one
    transaction, applying "Stored-record behaviour", snapshot windows and Held; WriteRefused
    when the plug-in is taken down or removed, or `version_id` is not its approved version."""
    step = fault or _no_fault
    past_day = run.trigger is RunTrigger.BACKFILL
    series_by_key = {s.key: s for s in manifest.series}
    now = run.now
    with write_transaction(engine) as conn:
        plugin = lock_plugin(conn, plugin_id)
        _refuse_unless_writable(plugin, version_id)
        step("locked")
        run_id = _insert_run(conn, plugin_id, version_id, digest, run, "success", None)
        step("run")
        stored = _stored_records(conn, plugin_id)
        by_key = {(r[_SERIES], r[_DATE], r[_DISC]): r for r in stored}
        step("read")

        counts = RunCounts()
        stamp = {"run_id": run_id, "version_id": version_id, "digest": digest, "since": now}
        fresh = (run_id, version_id, digest, now)
        new_rows: list[tuple[Any, ...]] = []
        pushed: list[int] = []
        changed: dict[int, dict[str, Any]] = {}
        misses_only: dict[int, int] = {}
        printed: set[int] = set()
        printed_events: dict[tuple[str, str], date] = {}
        window_new: dict[str, list[date]] = {}
        dates_of = {key: s.dates for key, s in series_by_key.items()}
        days: dict[str, date] = {}
        for record in batch:
            series_key = record["series"]
            kind = record["kind"]
            _, day_text, discriminator = record_key(record, dates_of[series_key])
            day = days.get(day_text)
            if day is None:
                day = days[day_text] = date.fromisoformat(day_text)
            content = content_text(record)
            if kind == "event":
                printed_events[(series_key, discriminator)] = day
            old = by_key.get((series_key, day, discriminator))
            if old is None:
                new_rows.append(
                    (
                        plugin_id,
                        series_key,
                        day,
                        discriminator,
                        kind,
                        content,
                        *fresh,
                        0,
                        False,
                        None,
                    )
                )
                window_new.setdefault(series_key, []).append(day)
                continue
            record_id = old[_ID]
            printed.add(record_id)
            if old[_WITHDRAWN] or old[_CONTENT] != content or old[_MOVED] is not None:
                if old[_WITHDRAWN]:
                    counts.returned += 1
                else:
                    counts.revised += 1
                pushed.append(record_id)
                changed[record_id] = {
                    "_id": record_id,
                    "content": content,
                    **stamp,
                    "misses": old[_MISSES] if past_day else 0,
                    "withdrawn": False,
                    "moved_to": None,
                }
            else:
                counts.unchanged += 1
                if old[_MISSES] and not past_day:
                    misses_only[record_id] = 0
        counts.new = len(new_rows)

        # "Event record": the same id on another date marks each stored old date moved. A
        # backfill run reads sources as they were on a past day, so it marks no move.
        for old in [] if past_day else stored:
            if old[_KIND] != "event" or old[_ID] in printed or old[_WITHDRAWN]:
                continue
            new_day = printed_events.get((old[_SERIES], old[_DISC]))
            if new_day is None or new_day == old[_DATE] or old[_MOVED] == new_day:
                continue
            counts.moved += 1
            pushed.append(old[_ID])
            changed[old[_ID]] = {
                "_id": old[_ID],
                "content": old[_CONTENT],
                **stamp,
                "misses": 0,
                "withdrawn": False,
                "moved_to": new_day,
            }

        held: list[HeldDetail] = []
        if not past_day:
            held = _count_misses(
                manifest,
                run,
                run_id,
                stored,
                printed,
                changed,
                misses_only,
                pushed,
                window_new,
                counts,
                stamp,
            )

        _bulk_insert(conn, records, _NEW, new_rows)
        step("inserted")
        _push_revisions(conn, pushed, now)
        step("revisions")
        _bulk_update(conn, list(changed.values()), _FULL)
        _bulk_update(conn, [{"_id": i, "misses": m} for i, m in misses_only.items()], ("misses",))
        step("updated")
        if not past_day:
            _record_held(conn, plugin_id, run_id, held, now)
        conn.execute(update(runs).where(runs.c.id == run_id).values(**_counts(counts)))
        state = State(plugin["state"])
        if not past_day:
            state = record_run_outcome(conn, plugin, True, now)
        step("state")
        return WriteResult(run_id=run_id, counts=counts, state=state, held=held)


def _count_misses(
    manifest: Manifest,
    run: RunFacts,
    run_id: int,
    stored: Sequence[tuple[Any, ...]],
    printed: set[int],
    changed: dict[int, dict[str, Any]],
    misses_only: dict[int, int],
    pushed: list[int],
    window_new: dict[str, list[date]],
    counts: RunCounts,
    stamp: dict[str, Any],
) -> list[HeldDetail]:
    """ "Stored record in a snapshot window": each stored record inside the window that this
    run omitted gets one more miss (moved events excepted); the third in a row withdraws it,
    unless the Held limits are exceeded for its series."""
    ranges = {s.key: snapshot_range(run.today, s.snapshot) for s in manifest.series if s.snapshot}
    if not ranges:
        return []
    in_window: dict[str, int] = {}
    candidates: dict[str, list[tuple[Any, ...]]] = {}
    for old in stored:
        bounds = ranges.get(old[_SERIES])
        if bounds is None or old[_WITHDRAWN] or not bounds[0] <= old[_DATE] <= bounds[1]:
            continue
        in_window[old[_SERIES]] = in_window.get(old[_SERIES], 0) + 1
        if old[_ID] in printed or old[_MOVED] is not None:
            continue
        mark = changed.get(old[_ID])
        if mark is not None and mark["moved_to"] is not None:
            continue  # moved by this run: not missing on its old date
        misses = old[_MISSES] + 1
        counts.missed += 1
        misses_only[old[_ID]] = misses
        if misses >= MISSES_TO_WITHDRAW:
            candidates.setdefault(old[_SERIES], []).append(old)
    for key, days in window_new.items():
        bounds = ranges.get(key)
        if bounds is not None:
            in_window[key] = in_window.get(key, 0) + sum(bounds[0] <= d <= bounds[1] for d in days)

    held: list[HeldDetail] = []
    for key, gone in candidates.items():
        window_count = in_window.get(key, 0)
        if held_limit_exceeded(len(gone), window_count):
            days = sorted(old[_DATE] for old in gone)
            held.append(
                HeldDetail(
                    series=key,
                    run_id=run_id,
                    count=len(gone),
                    window_count=window_count,
                    first_dates=[d.isoformat() for d in days[:HELD_FIRST_DATES]],
                    record_ids=[old[_ID] for old in gone],
                )
            )
            continue
        for old in gone:
            counts.withdrawn += 1
            misses_only.pop(old[_ID], None)
            pushed.append(old[_ID])
            changed[old[_ID]] = {
                "_id": old[_ID],
                "content": old[_CONTENT],
                **stamp,
                "misses": 0,
                "withdrawn": True,
                "moved_to": None,
            }
    return held


def _refuse_unless_writable(plugin: Mapping[str, Any], version_id: int) -> None:
    if plugin["taken_down"]:
        raise WriteRefused(f"plug-in {plugin['id']} is taken down: the write is refused")
    if plugin["state"] == State.REMOVED:
        raise WriteRefused(f"plug-in {plugin['id']} is removed: the write is refused")
    if plugin["approved_version_id"] != version_id:
        raise WriteRefused(
            f"version {version_id} is not the approved version of plug-in {plugin['id']}"
        )


def _counts(counts: RunCounts) -> dict[str, int]:
    return {
        "new": counts.new,
        "revised": counts.revised,
        "unchanged": counts.unchanged,
        "moved": counts.moved,
        "missed": counts.missed,
        "withdrawn": counts.withdrawn,
        "returned": counts.returned,
    }


def _insert_run(
    conn: Connection,
    plugin_id: str,
    version_id: int,
    digest: str,
    run: RunFacts,
    outcome: str,
    reason: str | None,
) -> int:
    run_id = conn.execute(
        insert(runs)
        .values(
            plugin_id=plugin_id,
            version_id=version_id,
            digest=digest,
            node_version=run.node_version,
            layers=None if run.layers is None else dict(run.layers),
            trigger=str(run.trigger),
            request_id=run.request_id,
            today=run.today,
            backfill=run.backfill,
            started_at=run.started_at,
            ended_at=run.now,
            outcome=outcome,
            reason=reason,
            **_counts(RunCounts()),
        )
        .returning(runs.c.id)
    ).scalar_one()
    if run.sources:
        conn.execute(
            insert(run_sources),
            [
                {
                    "run_id": run_id,
                    "position": position,
                    "name": source.name,
                    "final_url": source.final_url,
                    "bytes": source.bytes,
                    "sha256": source.sha256,
                    "fetched_at": source.fetched_at,
                }
                for position, source in enumerate(run.sources)
            ],
        )
    return run_id


def _record_held(
    conn: Connection, plugin_id: str, run_id: int, held: list[HeldDetail], now: datetime
) -> None:
    """Replace the plug-in's Held details with this run's and set its Held flag."""
    conn.execute(delete(held_series).where(held_series.c.plugin_id == plugin_id))
    for detail in held:
        conn.execute(
            insert(held_series).values(
                plugin_id=plugin_id,
                series=detail.series,
                run_id=run_id,
                record_ids=detail.record_ids,
                first_dates=detail.first_dates,
                window_count=detail.window_count,
                held_at=now,
            )
        )
    conn.execute(update(plugins).where(plugins.c.id == plugin_id).values(held=bool(held)))


def short_reason(reason: str) -> str:
    """A run's reason kept at most 300 characters ("The write" rule 4)."""
    reason = " ".join(reason.split())
    if len(reason) <= REASON_LENGTH:
        return reason
    return reason[: REASON_LENGTH - 1] + "\u2026"


def record_failed_run(
    engine: Engine,
    *,
    plugin_id: str,
    version_id: int,
    digest: str,
    run: RunFacts,
    reason: str,
) -> int:
    """A failed run writes nothing but its run row and reason; Approved -> Failing, and a retry
    is requested 30 minutes later unless this was the retry (Running rule 4). A backfill run
    changes no state (DECISIONS 8). Returns the run id."""
    with write_transaction(engine) as conn:
        plugin = lock_plugin(conn, plugin_id)
        run_id = _insert_run(
            conn, plugin_id, version_id, digest, run, "failure", short_reason(reason)
        )
        if run.trigger is not RunTrigger.BACKFILL:
            state = record_run_outcome(conn, plugin, False, run.now)
            if run.trigger is not RunTrigger.RETRY and state is State.FAILING:
                request_run(
                    conn,
                    plugin_id,
                    version_id,
                    RunTrigger.RETRY,
                    "run",
                    run.now,
                    not_before=run.now + RETRY_AFTER,
                )
        return run_id
