"""A reader's pictures of what is stored: a series drawn as a chart over a month, a year or all
its days, and the calendar as it stood at a past moment, with the records revised since marked
and their revisions listed (when, from what to what, which run). Both read only what the store
keeps; the days are drawn by the same `render_days` as today's."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date, datetime
from typing import Any

from sqlalchemy.orm import Session

from almanac.platform.accounts.models import Account
from almanac.platform.audience.days import (
    PluginDays,
    checked_shown_plugins,
    empty_days,
    kept_series,
    wanted_series,
)
from almanac.platform.audience.visibility import readable_plugin
from almanac.platform.errors import Invalid
from almanac.platform.reader import from_stored, render_days
from almanac.platform.reader.chart import (
    SeriesChart,
    chart_series,
    chart_span,
    check_chart_range,
    series_chart,
)
from almanac.platform.store.reading import (
    ChangedRecord,
    DayRecord,
    RevisionEntry,
    changed_since,
    records_for_days_as_of,
    series_chart_records,
    series_first_date,
)


def reader_series_chart(
    db: Session,
    account: Account,
    plugin_id: str,
    series: str,
    *,
    field: str | None,
    span: str,
    today: date,
    language: str,
) -> SeriesChart:
    """The chart of a series of a plug-in the reader may read (NOT-FOUND otherwise, and for a
    series it does not have), over `span` (`month`, `year` or `all`) for the reader's today,
    filled as the reader's days are. A taken-down plug-in's chart draws nothing."""
    chosen = check_chart_range(span)
    plugin = readable_plugin(db, account, plugin_id)
    conn = db.connection()
    kept = kept_series(conn, [plugin]).get(plugin.id, ())
    drawn = chart_series(plugin.manifest, series, kept)
    first_record = None if chosen != "all" else series_first_date(conn, plugin.id, drawn.key)
    first, last = chart_span(drawn, chosen, today, first_record)
    stored = (
        []
        if plugin.taken_down
        else series_chart_records(conn, plugin.id, drawn.key, drawn.kind, first, last)
    )
    return series_chart(
        plugin.manifest,
        [from_stored(r) for r in stored],
        series=drawn,
        field=field,
        span=chosen,
        first=first,
        last=last,
        today=today,
        language=language,
        kept=kept,
    )


@dataclass(frozen=True, slots=True)
class RecordChange:
    """One change of a record after the moment asked for: when it became known, the run that
    made it, and the record before and after (None where it did not stand: new, withdrawn)."""

    when: datetime
    run: int
    before: dict[str, Any] | None
    after: dict[str, Any] | None


@dataclass(frozen=True, slots=True)
class RevisedRecord:
    """A record of the days that changed after the moment: its key and the changes since."""

    series: str
    date: date
    key: str
    changes: list[RecordChange]


@dataclass(frozen=True, slots=True)
class PluginDaysAsOf:
    """One shown plug-in's days as its records stood at a moment, and the records of those
    days revised since."""

    days: PluginDays
    revised: list[RevisedRecord]


def _shape(changed: ChangedRecord, entry: RevisionEntry | None) -> dict[str, Any] | None:
    if entry is None or entry.withdrawn:
        return None
    return from_stored(
        DayRecord(
            changed.record_id,
            changed.plugin_id,
            changed.series,
            changed.date,
            changed.discriminator,
            changed.kind,
            entry.content,
            entry.moved_to,
        )
    )


def revised_since(changed: ChangedRecord, as_of: datetime) -> RevisedRecord:
    """The record's changes that began after `as_of`, each from the content before it."""
    changes = []
    for index, entry in enumerate(changed.history):
        if entry.valid_from <= as_of:
            continue
        previous = changed.history[index - 1] if index else None
        changes.append(
            RecordChange(
                entry.valid_from,
                entry.run_id,
                _shape(changed, previous),
                _shape(changed, entry),
            )
        )
    return RevisedRecord(changed.series, changed.date, changed.discriminator, changes)


def read_days_as_of(
    db: Session,
    account: Account,
    *,
    first: date,
    last: date,
    today: date,
    language: str,
    as_of: datetime,
) -> list[PluginDaysAsOf]:
    """The days `first`..`last` of every plug-in the reader shows now, drawn from its records
    as they stood at `as_of` (the approved manifest and status as they are), each with the
    records of those days revised since. Never kept: a moment is rarely asked twice."""
    if as_of.tzinfo is None:
        raise Invalid("as_of: give a moment with its time zone, such as 2026-06-01T12:00Z")
    chosen = checked_shown_plugins(db, account, first, last, language)
    drawn = [p for p in chosen if not p.taken_down]
    conn = db.connection()
    kept = kept_series(conn, drawn)
    ids = [p.id for p in drawn]
    by_plugin: dict[str, list[dict[str, Any]]] = {}
    for record in records_for_days_as_of(
        conn, ids, wanted_series(drawn, kept), first, last, today, as_of
    ):
        by_plugin.setdefault(record.plugin_id, []).append(from_stored(record))
    revised: dict[str, list[RevisedRecord]] = {}
    for changed in changed_since(conn, ids, first, last, as_of):
        revised.setdefault(changed.plugin_id, []).append(revised_since(changed, as_of))
    result = []
    for plugin in chosen:
        if plugin.taken_down:
            days = PluginDays(
                plugin.id, plugin.status, plugin.takedown_message, empty_days(first, last)
            )
            result.append(PluginDaysAsOf(days, []))
            continue
        rendered = render_days(
            plugin.manifest,
            by_plugin.get(plugin.id, []),
            from_date=first,
            to_date=last,
            today=today,
            language=language,
            status=plugin.status,
            kept=kept.get(plugin.id, ()),
        )
        days = PluginDays(plugin.id, plugin.status, None, rendered)
        result.append(PluginDaysAsOf(days, revised.get(plugin.id, [])))
    return result


__all__ = [
    "PluginDaysAsOf",
    "RecordChange",
    "RevisedRecord",
    "read_days_as_of",
    "reader_series_chart",
]
