"""The write: one run, one transaction ("The write", "Stored-record behaviour", "Stored record in
a snapshot window", "Event record", Held, DECISIONS 8 for backfill runs).

The batch is compared with the plug-in's stored records by record key (`compare_batch`, which
the record diff of an update shares); only what changed is written, with bulk statements (COPY
on PostgreSQL, executemany on SQLite). On SQLite the stored records are read with one SELECT
and compared in one pass. On PostgreSQL the comparison is the server's: the batch's keys and
contents stream into a temporary table as they are made, and one join returns only the stored
records that are not printed again unchanged (with those a snapshot window counts) and the keys
of the new ones; a rerun of an unchanged batch reads back nothing. The new records stream into
the table while the rest of the batch is classified. A first run (nothing stored) compares
nothing.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import date, datetime
from typing import TYPE_CHECKING, Any, Final, TypedDict, cast

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
    or_,
    select,
    update,
)
from sqlalchemy.types import TypeDecorator, TypeEngine

from almanac.platform.contract.identity import record_key
from almanac.platform.contract.windows import snapshot_range
from almanac.platform.lifecycle import RunTrigger, State
from almanac.platform.store.engine import write_transaction
from almanac.platform.store.moves import record_run_outcome
from almanac.platform.store.plugins import lock_plugin, mark_records_changed
from almanac.platform.store.run_requests import RETRY_AFTER, request_run
from almanac.platform.store.tables import (
    held_series,
    plugins,
    records,
    revisions,
    run_sources,
    runs,
)
from almanac.platform.store.types import UTCDateTime, content_text
from almanac.platform.webhooks.outbox import record_run_changes, record_status

if TYPE_CHECKING:
    import psycopg

    from almanac.platform.contract.manifest import Manifest

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
    orchestrator_run: str | None = None


@dataclass(slots=True)
class RunCounts:
    """What one run did to the plug-in's records, kept with the run ("The write" rule 2)."""

    new: int = 0
    revised: int = 0
    unchanged: int = 0
    moved: int = 0
    missed: int = 0
    withdrawn: int = 0
    returned: int = 0

    def as_dict(self) -> dict[str, int]:
        """The counts by name, as the run row's columns hold them."""
        return {
            "new": self.new,
            "revised": self.revised,
            "unchanged": self.unchanged,
            "moved": self.moved,
            "missed": self.missed,
            "withdrawn": self.withdrawn,
            "returned": self.returned,
        }


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
StoredRecord = tuple[int, str, date, str, str, str, int, bool, date | None]
"""A stored record as the write compares it, in `_STORED` order (plain tuples: a run may hold
hundreds of thousands)."""
_ID: Final = 0
_SERIES: Final = 1
_DATE: Final = 2
_DISC: Final = 3
_KIND: Final = 4
_CONTENT: Final = 5
_MISSES: Final = 6
_WITHDRAWN: Final = 7
_MOVED: Final = 8

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
NewRecord = tuple[str, str, date, str, str, str, int, int, str, datetime, int, bool, None]
"""A record the run adds, in `_NEW` order."""
Printed = tuple[str, date, str, str, str]
"""A record of the batch as the write compares it: series, date and discriminator (its key),
kind and content text."""
_CHUNK = 5000


class RecordUpdate(TypedDict):
    """The new current row of a stored record, `_id` naming it (`_bulk_update`'s bind names)."""

    _id: int
    content: str
    run_id: int
    version_id: int
    digest: str
    since: datetime
    misses: int
    withdrawn: bool
    moved_to: date | None


_FULL = ("content", "run_id", "version_id", "digest", "since", "misses", "withdrawn", "moved_to")


@dataclass(frozen=True, slots=True)
class WrittenBy:
    """The run, version and digest that write a record, and the moment its row becomes current
    ("Stored-record behaviour": each record keeps the run, version and digest that last wrote
    it)."""

    run_id: int
    version_id: int
    digest: str
    since: datetime


@dataclass(slots=True)
class RunChanges:
    """What one run changes in a plug-in's stored records: filled by `_classify`, `_mark_moves`,
    `_count_misses` and `_withdraw_or_hold`, then written by `_apply` (the new records by
    `write_run` as `_classify` finds them)."""

    plugin_id: str
    by: WrittenBy
    counts: RunCounts = field(default_factory=RunCounts)
    new_records: list[NewRecord] = field(default_factory=list)
    """The records the run adds, when `_classify` is given no other place for them."""
    new_dates: dict[str, list[date]] = field(default_factory=dict)
    """The dates of the new records by series with a snapshot window (they count in it)."""
    printed: set[int] = field(default_factory=set)
    """Ids of the stored records the batch printed."""
    printed_events: dict[tuple[str, str], date] = field(default_factory=dict)
    """The date the batch gives each printed event, by series and event id."""
    moved: set[int] = field(default_factory=set)
    """Ids of the stored events this run marked moved."""
    kept_as_revision: list[int] = field(default_factory=list)
    """Ids of the stored records whose current row becomes a revision before `updates`."""
    updates: dict[int, RecordUpdate] = field(default_factory=dict)
    misses: dict[int, int] = field(default_factory=dict)
    """New miss counts of the stored records nothing else changes, by id."""
    held: list[HeldDetail] = field(default_factory=list)
    window_counts: dict[str, int] = field(default_factory=dict)
    """The records each series' snapshot window holds with this run's (set by `_count_misses`)."""

    def rewrite(
        self,
        old: StoredRecord,
        content: str,
        *,
        misses: int = 0,
        withdrawn: bool = False,
        moved_to: date | None = None,
    ) -> None:
        """Give the stored record `old` a new current row, its present one kept as a revision."""
        self.kept_as_revision.append(old[_ID])
        self.updates[old[_ID]] = {
            "_id": old[_ID],
            "content": content,
            "run_id": self.by.run_id,
            "version_id": self.by.version_id,
            "digest": self.by.digest,
            "since": self.by.since,
            "misses": misses,
            "withdrawn": withdrawn,
            "moved_to": moved_to,
        }


@dataclass(frozen=True, slots=True)
class WithdrawalsDue:
    """The records of one series at their third miss in a row, and how many records its
    snapshot window holds with this run's."""

    series: str
    records: Sequence[StoredRecord]
    window_count: int


def _no_fault(_step: str) -> None:
    return None


def held_limit_exceeded(withdrawals: int, window_count: int) -> bool:
    """Held: one run would withdraw more than 10 records of a series, or more than 1% of a
    snapshot window holding 100 or more ("States and transitions", Held paragraph)."""
    if withdrawals > HELD_MOST_RECORDS:
        return True
    return window_count >= HELD_WINDOW_FLOOR and withdrawals * 100 > window_count


def _driver(conn: Connection) -> psycopg.Connection[tuple[Any, ...]]:
    """The psycopg connection under a PostgreSQL `conn`, for COPY and plain-tuple reads."""
    raw = conn.connection.driver_connection
    if raw is None:
        raise RuntimeError("the connection was closed during the write")
    return cast("psycopg.Connection[tuple[Any, ...]]", raw)


@contextmanager
def _inserting(
    conn: Connection, table: Table, columns: Sequence[str]
) -> Iterator[Callable[[tuple[object, ...]], object]]:
    """Yield a function that adds a row, a tuple in `columns` order; the rows are inserted by the
    end of the block. On PostgreSQL they stream through binary COPY as they are added, so the
    server stores them while the caller makes the rest (the connection takes no other statement
    meanwhile); elsewhere one executemany at the end."""
    if conn.dialect.name != "postgresql":
        rows: list[tuple[object, ...]] = []
        yield rows.append
        if rows:
            conn.execute(insert(table), [dict(zip(columns, row, strict=True)) for row in rows])
        return
    statement = f"COPY {table.name} ({', '.join(columns)}) FROM STDIN (FORMAT BINARY)"
    with _driver(conn).cursor() as cursor, cursor.copy(statement) as copy:
        copy.set_types([_binary_type(table.c[name].type) for name in columns])
        yield copy.write_row


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


def _stored_records(conn: Connection, plugin_id: str) -> Sequence[StoredRecord]:
    """The plug-in's stored records as plain tuples in `_STORED` order (read straight from the
    driver on PostgreSQL: building 250,000 result rows costs more than the query)."""
    query = select(*_STORED).where(records.c.plugin_id == plugin_id)
    if conn.dialect.name != "postgresql":
        # SQLAlchemy's rows index like these tuples; converting them would only cost time.
        return cast("Sequence[StoredRecord]", conn.execute(query).all())
    compiled = query.compile(dialect=conn.dialect)
    with _driver(conn).cursor() as cursor:
        cursor.execute(str(compiled), compiled.params)
        return cast("list[StoredRecord]", cursor.fetchall())


def _has_stored(conn: Connection, plugin_id: str) -> bool:
    """Whether the plug-in has any stored record (withdrawn ones too)."""
    query = select(records.c.id).where(records.c.plugin_id == plugin_id).limit(1)
    return conn.execute(query).first() is not None


def _printed(batch: Iterable[Mapping[str, Any]], manifest: Manifest) -> Iterator[Printed]:
    """Each record of the batch (already checked by the contract) as `Printed`, in batch order."""
    dates_of = {s.key: s.dates for s in manifest.series}
    # One date object per distinct day: a batch repeats few days over many series.
    days: dict[str, date] = {}
    for record in batch:
        series_key: str = record["series"]
        _, day_text, discriminator = record_key(record, dates_of[series_key])
        day = days.get(day_text)
        if day is None:
            day = days[day_text] = date.fromisoformat(day_text)
        yield series_key, day, discriminator, record["kind"], content_text(record)


Key = tuple[str, date, str]
"""A record key as the write compares it: series, date, discriminator."""


@dataclass(frozen=True, slots=True)
class Comparison:
    """A batch set beside the plug-in's stored records: the printed records, the stored records
    the run's stages must see, and, when the comparison was the database's, the keys of the
    printed records that are new (`new_keys`): a printed record neither among `stored` nor
    new is stored with the same content, plain (not withdrawn, moved or missed), outside any
    snapshot window, so unchanged. `new_keys` None: `stored` holds every stored record."""

    printed: Iterable[Printed]
    stored: Sequence[StoredRecord]
    new_keys: set[Key] | None = None


# The stored records a run's stages must see: all but those the batch prints again with the same
# content and a plain state outside every snapshot window (a window counts its records), and, as
# rows with only the batch's key, the printed records nothing is stored under.
_COMPARE = """
SELECT b.series, b.date, b.discriminator, r.id, r.series, r.date, r.discriminator, r.kind,
       r.content, r.misses, r.withdrawn, r.moved_to
FROM run_printed b
FULL JOIN (SELECT id, series, date, discriminator, kind, content, misses, withdrawn, moved_to
           FROM records WHERE plugin_id = %(plugin_id)s) r
  ON r.date = b.date AND r.series = b.series AND r.discriminator = b.discriminator
WHERE r.id IS NULL OR b.series IS NULL OR r.content <> b.content OR r.withdrawn
   OR r.moved_to IS NOT NULL OR r.misses <> 0
"""
_IN_A_WINDOW = """
   OR EXISTS (
     SELECT 1 FROM unnest(%(w_series)s::text[], %(w_first)s::date[], %(w_last)s::date[])
       AS w(series, first_day, last_day)
     WHERE w.series = r.series AND r.date BETWEEN w.first_day AND w.last_day)
"""
_COMPARE_MEMORY = "64MB"
"""The join's memory (`work_mem`, for this statement alone): at PostgreSQL's default of 4 MB the
hash of 250,000 stored records spills to disk in 8 batches."""


def compare_batch(
    conn: Connection,
    plugin_id: str,
    batch: Iterable[Mapping[str, Any]],
    manifest: Manifest,
    today: date,
) -> Comparison:
    """The batch (already checked by the contract) beside the plug-in's stored records, for
    `_classify`, `_mark_moves` and `_count_misses` (the write's and the record diff's stages).
    Nothing stored (a first run): every printed record is new, made as it is used."""
    printed = _printed(batch, manifest)
    if not _has_stored(conn, plugin_id):
        return Comparison(printed, ())
    if conn.dialect.name != "postgresql":
        return Comparison(list(printed), _stored_records(conn, plugin_id))
    return _compared_in_database(conn, plugin_id, printed, manifest, today)


def _compared_in_database(
    conn: Connection, plugin_id: str, printed: Iterable[Printed], manifest: Manifest, today: date
) -> Comparison:
    """`compare_batch` on PostgreSQL: the printed records stream into a temporary table (binary
    COPY, while the next are made), then one join (`_COMPARE`)."""
    kept: list[Printed] = []
    windows = [(s.key, *snapshot_range(today, s.snapshot)) for s in manifest.series if s.snapshot]
    with _driver(conn).cursor() as cursor:
        cursor.execute(
            "CREATE TEMPORARY TABLE IF NOT EXISTS run_printed (series text, date date,"
            " discriminator text, content text) ON COMMIT DROP"
        )
        cursor.execute("TRUNCATE run_printed")
        statement = (
            "COPY run_printed (series, date, discriminator, content) FROM STDIN (FORMAT BINARY)"
        )
        with cursor.copy(statement) as copy:
            copy.set_types(["text", "date", "text", "text"])
            add, write = kept.append, copy.write_row
            for record in printed:
                add(record)
                write((record[0], record[1], record[2], record[4]))
        cursor.execute(f"SET LOCAL work_mem = '{_COMPARE_MEMORY}'")
        cursor.execute(
            _COMPARE + _IN_A_WINDOW if windows else _COMPARE,
            {
                "plugin_id": plugin_id,
                "w_series": [w[0] for w in windows],
                "w_first": [w[1] for w in windows],
                "w_last": [w[2] for w in windows],
            },
        )
        found = cursor.fetchall()
        cursor.execute("SET LOCAL work_mem TO DEFAULT")
    stored: list[StoredRecord] = []
    new_keys: set[Key] = set()
    for row in found:
        if row[3] is None:
            new_keys.add((row[0], row[1], row[2]))
        else:
            stored.append(cast("StoredRecord", row[3:]))
    return Comparison(kept, stored, new_keys)


def _push_revisions(conn: Connection, record_ids: Sequence[int], now: datetime) -> None:
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


def _bulk_update(
    conn: Connection, rows: Sequence[Mapping[str, object]], columns: Iterable[str]
) -> None:
    """Set `columns` of each record named by a row's `_id` to that row's values (executemany)."""
    if not rows:
        return
    statement = (
        update(records)
        .where(records.c.id == bindparam("_id"))
        .values({c: bindparam(c) for c in columns})
    )
    conn.execute(statement, rows)


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
    when the plug-in is taken down or removed, `version_id` is not its approved version, or
    the run's outcome is already kept (`outcome_kept`)."""
    step = fault or _no_fault
    past_day = run.trigger is RunTrigger.BACKFILL
    with write_transaction(engine) as conn:
        plugin = lock_plugin(conn, plugin_id)
        _refuse_unless_writable(plugin, version_id)
        kept = outcome_kept(conn, plugin_id, run)
        if kept is not None:
            raise WriteRefused(f"this run's outcome is already kept as run {kept}")
        step("locked")
        run_id = _insert_run(conn, plugin_id, version_id, digest, run, "success", None)
        step("run")
        compared = compare_batch(conn, plugin_id, batch, manifest, run.today)
        stored = compared.stored
        step("read")
        changes = RunChanges(plugin_id, WrittenBy(run_id, version_id, digest, run.now))
        with _inserting(conn, records, _NEW) as add_new:
            _classify(changes, compared, manifest, past_day=past_day, add_new=add_new)
        step("inserted")
        # DECISIONS 8: a backfill reads the sources as they were on a past day, so what it
        # leaves out says nothing of today: it marks no move, counts no miss, withdraws nothing.
        if not past_day:
            _mark_moves(changes, stored)
            _withdraw_or_hold(changes, _count_misses(changes, stored, manifest, run.today))
        _apply(conn, changes, step)
        mark_records_changed(conn, plugin_id)
        if not past_day:
            _record_held(conn, plugin, run_id, changes.held, run.now)
        conn.execute(update(runs).where(runs.c.id == run_id).values(**changes.counts.as_dict()))
        record_run_changes(
            conn,
            plugin_id=plugin_id,
            run_id=run_id,
            version_id=version_id,
            counts=changes.counts.as_dict(),
            now=run.now,
        )
        step("events")
        state = State(plugin["state"])
        if not past_day:
            state = record_run_outcome(conn, plugin, True, run.now)
        step("state")
        return WriteResult(run_id=run_id, counts=changes.counts, state=state, held=changes.held)


def _classify(
    changes: RunChanges,
    compared: Comparison,
    manifest: Manifest,
    *,
    past_day: bool,
    add_new: Callable[[NewRecord], object] | None = None,
) -> None:
    """ "Stored-record behaviour": each printed record is new, unchanged, revised, or returns
    when it had been withdrawn or moved; printing a record starts its miss count over ("Stored
    record in a snapshot window"), except on a backfill (DECISIONS 8). Each new record goes to
    `add_new` as soon as it is found (by default to `changes.new_records`). A printed record
    the database found unchanged (`Comparison.new_keys`) is counted and nothing more."""
    by_key = {(r[_SERIES], r[_DATE], r[_DISC]): r for r in compared.stored}
    new_keys = compared.new_keys
    windowed = {s.key for s in manifest.series if s.snapshot}
    # Plain locals for the loop below: it runs once per printed record, hundreds of thousands.
    by = changes.by
    fresh = (by.run_id, by.version_id, by.digest, by.since, 0, False, None)
    plugin_id = changes.plugin_id
    counts = changes.counts
    add = changes.new_records.append if add_new is None else add_new
    new = unchanged = 0
    new_dates = changes.new_dates
    printed_ids = changes.printed
    printed_events = changes.printed_events
    misses = changes.misses
    for series_key, day, discriminator, kind, content in compared.printed:
        if kind == "event":
            printed_events[(series_key, discriminator)] = day
        key = (series_key, day, discriminator)
        old = by_key.get(key)
        if old is None:
            if new_keys is not None and key not in new_keys:
                unchanged += 1
                continue
            add((plugin_id, series_key, day, discriminator, kind, content, *fresh))
            new += 1
            if series_key in windowed:
                new_dates.setdefault(series_key, []).append(day)
            continue
        printed_ids.add(old[_ID])
        if old[_CONTENT] == content and not old[_WITHDRAWN] and old[_MOVED] is None:
            unchanged += 1
            if old[_MISSES] and not past_day:
                misses[old[_ID]] = 0
            continue
        if old[_WITHDRAWN]:
            counts.returned += 1
        else:
            counts.revised += 1
        changes.rewrite(old, content, misses=old[_MISSES] if past_day else 0)
    counts.new = new
    counts.unchanged = unchanged


def _mark_moves(changes: RunChanges, stored: Sequence[StoredRecord]) -> None:
    """ "Event record": a stored event whose id the batch prints on another date is marked
    moved to that date (once; a withdrawn one stays withdrawn)."""
    printed = changes.printed
    printed_events = changes.printed_events
    for old in stored:
        if old[_KIND] != "event" or old[_ID] in printed or old[_WITHDRAWN]:
            continue
        new_day = printed_events.get((old[_SERIES], old[_DISC]))
        if new_day is None or new_day == old[_DATE] or old[_MOVED] == new_day:
            continue
        changes.counts.moved += 1
        changes.moved.add(old[_ID])
        changes.rewrite(old, old[_CONTENT], moved_to=new_day)


def _count_misses(
    changes: RunChanges, stored: Sequence[StoredRecord], manifest: Manifest, today: date
) -> list[WithdrawalsDue]:
    """ "Stored record in a snapshot window": each stored record inside the window that this
    run omitted gets one more miss (moved events excepted); returns, by series, those at their
    third miss in a row with the window's record count."""
    ranges = {s.key: snapshot_range(today, s.snapshot) for s in manifest.series if s.snapshot}
    if not ranges:
        return []
    printed = changes.printed
    moved = changes.moved
    misses = changes.misses
    in_window = changes.window_counts
    third_misses: dict[str, list[StoredRecord]] = {}
    for old in stored:
        bounds = ranges.get(old[_SERIES])
        if bounds is None or old[_WITHDRAWN] or not bounds[0] <= old[_DATE] <= bounds[1]:
            continue
        in_window[old[_SERIES]] = in_window.get(old[_SERIES], 0) + 1
        if old[_ID] in printed or old[_MOVED] is not None or old[_ID] in moved:
            continue
        count = old[_MISSES] + 1
        changes.counts.missed += 1
        misses[old[_ID]] = count
        if count >= MISSES_TO_WITHDRAW:
            third_misses.setdefault(old[_SERIES], []).append(old)
    for key, days in changes.new_dates.items():
        bounds = ranges.get(key)
        if bounds is not None:
            in_window[key] = in_window.get(key, 0) + sum(bounds[0] <= d <= bounds[1] for d in days)
    return [
        WithdrawalsDue(series=key, records=gone, window_count=in_window.get(key, 0))
        for key, gone in third_misses.items()
    ]


def _withdraw_or_hold(changes: RunChanges, due: Sequence[WithdrawalsDue]) -> None:
    """Records at their third miss are withdrawn ("Stored record in a snapshot window"), unless
    their series exceeds the Held limits: then none of its records is withdrawn and the run
    keeps a HeldDetail ("States and transitions", Held paragraph)."""
    for series in due:
        gone = series.records
        if held_limit_exceeded(len(gone), series.window_count):
            days = sorted(old[_DATE] for old in gone)
            changes.held.append(
                HeldDetail(
                    series=series.series,
                    run_id=changes.by.run_id,
                    count=len(gone),
                    window_count=series.window_count,
                    first_dates=[d.isoformat() for d in days[:HELD_FIRST_DATES]],
                    record_ids=[old[_ID] for old in gone],
                )
            )
            continue
        for old in gone:
            changes.counts.withdrawn += 1
            changes.misses.pop(old[_ID], None)
            changes.rewrite(old, old[_CONTENT], withdrawn=True)


def _apply(conn: Connection, changes: RunChanges, step: Fault) -> None:
    """Write the run's changes to the stored records with bulk statements, each replaced
    current row kept as a revision first ("Every change is kept as a revision")."""
    _push_revisions(conn, changes.kept_as_revision, changes.by.since)
    step("revisions")
    _bulk_update(conn, list(changes.updates.values()), _FULL)
    misses_only = [{"_id": i, "misses": m} for i, m in changes.misses.items()]
    _bulk_update(conn, misses_only, ("misses",))
    step("updated")


def _refuse_unless_writable(plugin: Mapping[str, Any], version_id: int) -> None:
    if plugin["taken_down"]:
        raise WriteRefused(f"plug-in {plugin['id']} is taken down: the write is refused")
    if plugin["state"] == State.REMOVED:
        raise WriteRefused(f"plug-in {plugin['id']} is removed: the write is refused")
    if plugin["retired"]:
        raise WriteRefused(f"plug-in {plugin['id']} is retired: the write is refused")
    if plugin["approved_version_id"] != version_id:
        raise WriteRefused(
            f"version {version_id} is not the approved version of plug-in {plugin['id']}"
        )


def _insert_run(
    conn: Connection,
    plugin_id: str,
    version_id: int,
    digest: str,
    run: RunFacts,
    outcome: str,
    reason: str | None,
) -> int:
    run_id: int = conn.execute(
        insert(runs)
        .values(
            plugin_id=plugin_id,
            version_id=version_id,
            digest=digest,
            node_version=run.node_version,
            layers=None if run.layers is None else dict(run.layers),
            trigger=str(run.trigger),
            request_id=run.request_id,
            orchestrator_run=run.orchestrator_run,
            today=run.today,
            backfill=run.backfill,
            started_at=run.started_at,
            ended_at=run.now,
            outcome=outcome,
            reason=reason,
            **RunCounts().as_dict(),
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
    conn: Connection, plugin: Mapping[str, Any], run_id: int, held: list[HeldDetail], now: datetime
) -> None:
    """Replace the plug-in's Held details with this run's and set its Held flag; a flag that
    changes tells the webhook subscribers (held, or back)."""
    plugin_id = plugin["id"]
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
    if bool(held) != bool(plugin["held"]):
        record_status(conn, plugin_id, "held" if held else "held-cleared", now)


def short_reason(reason: str) -> str:
    """A run's reason kept at most 300 characters ("The write" rule 4)."""
    reason = " ".join(reason.split())
    if len(reason) <= REASON_LENGTH:
        return reason
    return reason[: REASON_LENGTH - 1] + "\u2026"


def outcome_kept(conn: Connection, plugin_id: str, run: RunFacts) -> int | None:
    """The run already kept for this run's orchestrator run or run request, if any: a run
    request has exactly one outcome ("Running rules" 1 and 4: one run a request, its one
    outcome deciding the state), whatever fails between the store and the orchestrator
    (issue 31). Called with the plug-in locked, so two recorders of one run see each other."""
    keys = []
    if run.orchestrator_run is not None:
        keys.append(runs.c.orchestrator_run == run.orchestrator_run)
    if run.request_id is not None:
        keys.append(runs.c.request_id == run.request_id)
    if not keys:
        return None
    found = conn.execute(
        select(runs.c.id).where(runs.c.plugin_id == plugin_id, or_(*keys)).limit(1)
    ).scalar_one_or_none()
    return None if found is None else int(found)


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
    changes no state (DECISIONS 8). Returns the run id: the one already kept when the store
    has this run's outcome (`outcome_kept`), and then nothing changes."""
    with write_transaction(engine) as conn:
        plugin = lock_plugin(conn, plugin_id)
        kept = outcome_kept(conn, plugin_id, run)
        if kept is not None:
            return kept
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
