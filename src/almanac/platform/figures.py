"""Figures drawn for publishers and operators, counted from what the store keeps: counts only,
never who. A publisher's plug-in: readers who show it, installs and uninstalls per day (from
the history of shown choices, kept since migration 0019), runs per day by outcome, records
written and revised per run, check durations of its uploads, the review queue's median wait
(the whole queue's and its own uploads'). The host's operators: runs per hour by outcome, the
longest wait from due to start, the queue now, run duration percentiles."""

from __future__ import annotations

import statistics
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta

from sqlalchemy import Connection, case, func, select

from almanac.platform.audience.models import ShownChange, ShownPreference
from almanac.platform.errors import Invalid
from almanac.platform.publishing.models import PortalUpload, ReviewDecision, UploadCheck
from almanac.platform.store.tables import requests as run_requests
from almanac.platform.store.tables import runs

PUBLISHER_DAYS = (30, 365)
OPERATOR_DAYS = (1, 7)


@dataclass(frozen=True, slots=True)
class Line:
    """One drawn line: its label and a value for each x (None: nothing to draw)."""

    label: str
    values: list[float | None]


@dataclass(frozen=True, slots=True)
class Figure:
    """A figure: x (dates, hours or moments, ISO), its lines and what its y counts. `total`
    says how a line is told in one figure: `sum` of its values, its `last` (a level, such as
    readers, is not summed over days) or its `max` (the longest of longest waits); `empty`
    the words said when nothing is drawn; `x_kind` what x holds: a `day`, an `hour` (a count
    holds until the next) or a `moment` of its own (a run's or a check's end)."""

    key: str
    title: str
    label: str
    x: list[str]
    lines: list[Line]
    total: str = "sum"
    empty: str = "Nothing to draw in these days."
    x_kind: str = "day"

    @property
    def drawn(self) -> bool:
        """Whether any line has a value to draw; a page says `empty` in words otherwise."""
        return any(v is not None for line in self.lines for v in line.values)


@dataclass(frozen=True, slots=True)
class PublisherFigures:
    plugin: str
    days: int
    first: date
    last: date
    readers_now: int
    installs: int
    uninstalls: int
    history_since: date | None
    runs: int
    review_queue_waiting: int
    review_queue_median_wait_hours: float | None
    plugin_review_median_wait_hours: float | None
    figures: list[Figure]


@dataclass(frozen=True, slots=True)
class OperatorFigures:
    days: int
    since: datetime
    until: datetime
    runs: int
    queue_now: int
    longest_wait_seconds: float | None
    duration_p50: float | None
    duration_p90: float | None
    duration_p99: float | None
    figures: list[Figure]


def check_days(days: int, allowed: Sequence[int]) -> int:
    """One of the spans a figure is drawn over, else REQUEST-INVALID naming `days`."""
    if days not in allowed:
        raise Invalid(f"days: {days} is not one of {', '.join(str(d) for d in allowed)}")
    return days


def _per(keys: Sequence[str], counted: Iterable[tuple[str, str]]) -> list[Line]:
    """Lines by label (outcome) of counts per key (a day or an hour); zero where none."""
    counts = Counter(counted)
    labels = sorted({label for _, label in counts})
    return [Line(label, [float(counts[(k, label)]) for k in keys]) for label in labels]


def _day_keys(first: date, last: date) -> list[str]:
    return [(first + timedelta(days=n)).isoformat() for n in range((last - first).days + 1)]


@dataclass(frozen=True, slots=True)
class ShownDays:
    """Readers who show a plug-in at the end of each day, and its installs and uninstalls
    that day; None on days before `since`, the first whole day the history of shown choices
    covers (None: it covers every day)."""

    since: date | None
    readers: list[float | None]
    installs: list[float | None]
    uninstalls: list[float | None]


def _turned(before: bool | None, after: bool | None) -> int:
    """+1 when a choice turns shown on, -1 when it turns it off, else 0."""
    return (after is True) - (before is True)


def shown_days(conn: Connection, plugin_id: str, keys: Sequence[str]) -> ShownDays:
    """Readers who show the plug-in per day (counts only, never who) from the history of
    shown choices: the choices standing when it began (baseline rows) and each change since,
    the ones before the first day summed in one statement."""
    history = ShownChange.__table__
    first = datetime.combine(date.fromisoformat(keys[0]), datetime.min.time(), tzinfo=UTC)
    mine = history.c.plugin_id == plugin_id
    on = case((history.c.shown_after.is_(True), 1), else_=0)
    off = case((history.c.shown_before.is_(True), 1), else_=0)
    readers_before, began = conn.execute(
        select(
            func.coalesce(func.sum(on - off).filter(history.c.changed_at < first), 0),
            func.min(history.c.changed_at).filter(history.c.baseline.is_(True)),
        ).where(mine)
    ).one()
    rows = conn.execute(
        select(history.c.changed_at, history.c.shown_before, history.c.shown_after,
               history.c.baseline)
        .where(mine, history.c.changed_at >= first)
        .order_by(history.c.changed_at)
    ).all()  # fmt: skip
    since = began.date() + timedelta(days=1) if began is not None else None
    delta: Counter[str] = Counter()
    installs: Counter[str] = Counter()
    uninstalls: Counter[str] = Counter()
    for row in rows:
        day = row.changed_at.astimezone(UTC).date().isoformat()
        turned = _turned(row.shown_before, row.shown_after)
        delta[day] += turned
        if not row.baseline:
            installs[day] += turned > 0
            uninstalls[day] += turned < 0
    known = [since is None or date.fromisoformat(k) >= since for k in keys]
    readers: list[float | None] = []
    level = int(readers_before)
    for key, whole in zip(keys, known, strict=True):
        level += delta[key]
        readers.append(float(level) if whole else None)
    return ShownDays(
        since=since,
        readers=readers,
        installs=[float(installs[k]) if w else None for k, w in zip(keys, known, strict=True)],
        uninstalls=[float(uninstalls[k]) if w else None for k, w in zip(keys, known, strict=True)],
    )


def publisher_figures(
    conn: Connection, plugin_id: str, days: int, now: datetime
) -> PublisherFigures:
    """The plug-in's figures over the last `days` days (30 or 365) ending today (UTC)."""
    check_days(days, PUBLISHER_DAYS)
    last = now.date()
    first = last - timedelta(days=days - 1)
    since = datetime.combine(first, datetime.min.time(), tzinfo=now.tzinfo)
    keys = _day_keys(first, last)
    shown = ShownPreference.__table__
    readers_now = conn.execute(
        select(func.count()).where(shown.c.plugin_id == plugin_id, shown.c.shown.is_(True))
    ).scalar_one()
    shown_per_day = shown_days(conn, plugin_id, keys)
    run_rows = list(
        conn.execute(
            select(runs.c.ended_at, runs.c.outcome, runs.c.new, runs.c.revised)
            .where(runs.c.plugin_id == plugin_id, runs.c.ended_at >= since)
            .order_by(runs.c.ended_at)
        )
    )
    uploads = PortalUpload.__table__
    checks = UploadCheck.__table__
    check_rows = list(
        conn.execute(
            select(checks.c.name, checks.c.started_at, checks.c.finished_at)
            .join(uploads, uploads.c.id == checks.c.upload_id)
            .where(
                uploads.c.plugin_id == plugin_id,
                checks.c.finished_at >= since,
                checks.c.started_at.is_not(None),
            )
            .order_by(checks.c.finished_at)
        )
    )
    waiting, median = review_queue(conn, since)
    _, own_median = review_queue(conn, since, plugin_id)
    moments = [r.ended_at.isoformat() for r in run_rows]
    check_moments = [r.finished_at.isoformat() for r in check_rows]
    check_names = sorted({r.name for r in check_rows})
    figures = [
        Figure("readers", "Readers who show it, per day", "readers", keys,
               [Line("readers", shown_per_day.readers)], total="last",
               empty="Not known for these days: the history of shown choices began later."),
        Figure("installs", "Installs and uninstalls per day", "readers", keys,
               [Line("installs", shown_per_day.installs),
                Line("uninstalls", shown_per_day.uninstalls)]),
        Figure("runs", "Runs per day by outcome", "runs", keys,
               _per(keys, ((r.ended_at.date().isoformat(), r.outcome) for r in run_rows)),
               empty="No run ended in these days."),
        Figure("records", "Records written and revised per run", "records", moments,
               [Line("written", [float(r.new) for r in run_rows]),
                Line("revised", [float(r.revised) for r in run_rows])],
               empty="No run ended in these days: no records to draw.", x_kind="moment"),
        Figure("checks", "Check durations of its uploads", "seconds", check_moments,
               [Line(name, [_seconds(r.started_at, r.finished_at) if r.name == name else None
                            for r in check_rows]) for name in check_names],
               empty="No check of its uploads finished in these days.", x_kind="moment"),
    ]  # fmt: skip
    return PublisherFigures(
        plugin=plugin_id,
        days=days,
        first=first,
        last=last,
        readers_now=int(readers_now),
        installs=int(sum(v or 0 for v in shown_per_day.installs)),
        uninstalls=int(sum(v or 0 for v in shown_per_day.uninstalls)),
        history_since=shown_per_day.since,
        runs=len(run_rows),
        review_queue_waiting=waiting,
        review_queue_median_wait_hours=median,
        plugin_review_median_wait_hours=own_median,
        figures=figures,
    )


def review_queue(
    conn: Connection, since: datetime, plugin_id: str | None = None
) -> tuple[int, float | None]:
    """The uploads waiting in review now, and the median hours from submission to the
    reviewer's decision of the decisions made since `since`: of every plug-in's uploads (the
    queue is one), or of `plugin_id`'s only."""
    uploads = PortalUpload.__table__
    decisions = ReviewDecision.__table__
    theirs = [uploads.c.plugin_id == plugin_id] if plugin_id is not None else []
    waiting = conn.execute(
        select(func.count()).where(uploads.c.state == "in_review", *theirs)
    ).scalar_one()
    waits = [
        (decided - submitted).total_seconds() / 3600
        for submitted, decided in conn.execute(
            select(uploads.c.submitted_at, decisions.c.decided_at)
            .join(decisions, decisions.c.upload_id == uploads.c.id)
            .where(decisions.c.decided_at >= since, uploads.c.submitted_at.is_not(None), *theirs)
        )
    ]
    return int(waiting), (round(statistics.median(waits), 2) if waits else None)


def _seconds(start: datetime, end: datetime) -> float:
    return round((end - start).total_seconds(), 3)


def _percentile(ordered: Sequence[float], share: float) -> float | None:
    """The nearest-rank percentile of sorted values."""
    if not ordered:
        return None
    rank = max(1, -(-int(share * len(ordered) * 1000) // 1000))
    return ordered[min(rank, len(ordered)) - 1]


def operator_figures(conn: Connection, days: int, now: datetime) -> OperatorFigures:
    """The host's figures over the last day or week, by hour."""
    check_days(days, OPERATOR_DAYS)
    until = now.replace(minute=0, second=0, microsecond=0) + timedelta(hours=1)
    since = until - timedelta(days=days)
    hours = [(since + timedelta(hours=n)).isoformat() for n in range(days * 24)]
    run_rows = list(
        conn.execute(
            select(runs.c.started_at, runs.c.ended_at, runs.c.outcome).where(
                runs.c.started_at >= since, runs.c.started_at < until
            )
        )
    )

    def hour(at: datetime) -> str:
        return at.replace(minute=0, second=0, microsecond=0).isoformat()

    durations = sorted(_seconds(r.started_at, r.ended_at) for r in run_rows)
    taken = list(
        conn.execute(
            select(run_requests.c.not_before, run_requests.c.taken_at).where(
                run_requests.c.taken_at >= since, run_requests.c.taken_at < until
            )
        )
    )
    waits = [_seconds(r.not_before, r.taken_at) for r in taken if r.taken_at >= r.not_before]
    queue_now = conn.execute(
        select(func.count()).where(
            run_requests.c.taken_at.is_(None), run_requests.c.not_before <= now
        )
    ).scalar_one()
    by_hour_wait: dict[str, float] = {}
    for r in taken:
        key = hour(r.taken_at)
        by_hour_wait[key] = max(by_hour_wait.get(key, 0.0), _seconds(r.not_before, r.taken_at))
    figures = [
        Figure("runs", "Runs per hour by outcome", "runs", hours,
               _per(hours, ((hour(r.started_at), r.outcome) for r in run_rows)),
               empty="No run started in these hours.", x_kind="hour"),
        Figure("waits", "Longest wait from due to start per hour", "seconds", hours,
               [Line("longest wait", [by_hour_wait.get(h) for h in hours])],
               empty="No run was taken from the queue in these hours: no wait to draw.",
               x_kind="hour", total="max"),
    ]  # fmt: skip
    return OperatorFigures(
        days=days,
        since=since,
        until=until,
        runs=len(run_rows),
        queue_now=int(queue_now),
        longest_wait_seconds=max(waits) if waits else None,
        duration_p50=_percentile(durations, 0.5),
        duration_p90=_percentile(durations, 0.9),
        duration_p99=_percentile(durations, 0.99),
        figures=figures,
    )
