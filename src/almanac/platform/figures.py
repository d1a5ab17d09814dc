"""Figures drawn for publishers and operators, counted from what the store keeps: counts only,
never who. A publisher's plug-in: readers who show it and installs per day, runs per day by
outcome, records written and revised per run, check durations of its uploads, the review
queue's median wait. The host's operators: runs per hour by outcome, the longest wait from
due to start, the queue now, run duration percentiles."""

from __future__ import annotations

import statistics
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import date, datetime, timedelta

from sqlalchemy import Connection, func, select

from almanac.platform.audience.models import ShownPreference
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
    """A figure: x (dates, hours or moments, ISO), its lines and what its y counts."""

    key: str
    title: str
    label: str
    x: list[str]
    lines: list[Line]


@dataclass(frozen=True, slots=True)
class PublisherFigures:
    plugin: str
    days: int
    first: date
    last: date
    readers_now: int
    installs: int
    runs: int
    review_waiting: int
    review_median_wait_hours: float | None
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
    installed = [
        at.date().isoformat()
        for (at,) in conn.execute(
            select(shown.c.set_at).where(
                shown.c.plugin_id == plugin_id, shown.c.shown.is_(True), shown.c.set_at >= since
            )
        )
    ]
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
    moments = [r.ended_at.isoformat() for r in run_rows]
    check_moments = [r.finished_at.isoformat() for r in check_rows]
    check_names = sorted({r.name for r in check_rows})
    figures = [
        Figure("installs", "Installs per day", "installs", keys,
               [Line("installs", [float(installed.count(k)) for k in keys])]),
        Figure("runs", "Runs per day by outcome", "runs", keys,
               _per(keys, ((r.ended_at.date().isoformat(), r.outcome) for r in run_rows))),
        Figure("records", "Records written and revised per run", "records", moments,
               [Line("written", [float(r.new) for r in run_rows]),
                Line("revised", [float(r.revised) for r in run_rows])]),
        Figure("checks", "Check durations of its uploads", "seconds", check_moments,
               [Line(name, [_seconds(r.started_at, r.finished_at) if r.name == name else None
                            for r in check_rows]) for name in check_names]),
    ]  # fmt: skip
    return PublisherFigures(
        plugin=plugin_id,
        days=days,
        first=first,
        last=last,
        readers_now=int(readers_now),
        installs=len(installed),
        runs=len(run_rows),
        review_waiting=waiting,
        review_median_wait_hours=median,
        figures=figures,
    )


def review_queue(conn: Connection, since: datetime) -> tuple[int, float | None]:
    """The uploads waiting in review now, and the median hours from submission to the
    reviewer's decision of the decisions made since `since` (every plug-in's: the queue is
    one)."""
    uploads = PortalUpload.__table__
    decisions = ReviewDecision.__table__
    waiting = conn.execute(select(func.count()).where(uploads.c.state == "in_review")).scalar_one()
    waits = [
        (decided - submitted).total_seconds() / 3600
        for submitted, decided in conn.execute(
            select(uploads.c.submitted_at, decisions.c.decided_at)
            .join(decisions, decisions.c.upload_id == uploads.c.id)
            .where(decisions.c.decided_at >= since, uploads.c.submitted_at.is_not(None))
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
                runs.c.started_at >= since
            )
        )
    )

    def hour(at: datetime) -> str:
        return at.replace(minute=0, second=0, microsecond=0).isoformat()

    durations = sorted(_seconds(r.started_at, r.ended_at) for r in run_rows)
    taken = list(
        conn.execute(
            select(run_requests.c.not_before, run_requests.c.taken_at).where(
                run_requests.c.taken_at >= since
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
               _per(hours, ((hour(r.started_at), r.outcome) for r in run_rows))),
        Figure("waits", "Longest wait from due to start per hour", "seconds", hours,
               [Line("longest wait", [by_hour_wait.get(h) for h in hours])]),
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
