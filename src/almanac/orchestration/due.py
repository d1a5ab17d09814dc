"""Which runs start now: the Running rules as the minute sensor asks them.

Rules 1-2 (scheduled times, missed and clock-changed times) are `is_due` (here `due_since`
the newest scheduled time, shared by the plug-ins of one schedule and zone); rule 3 (approval,
resume, first run) and rule 4 (the retry 30 minutes after a failure, left by the store's
`record_failed_run`) arrive as run requests. Every clock read is the `now` argument.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Collection
from dataclasses import dataclass
from datetime import date, datetime

from sqlalchemy import Connection, Engine, func, select

from almanac.platform.contract.context import today_in_zone
from almanac.platform.contract.schedule import (
    Schedule,
    due_since,
    latest_scheduled_at_or_before,
    parse_schedule,
)
from almanac.platform.lifecycle import RunTrigger, State
from almanac.platform.store.engine import write_transaction
from almanac.platform.store.run_requests import OpenRunRequest, open_run_requests, take_run_request
from almanac.platform.store.tables import plugins, runs, versions

RUNNABLE = (State.APPROVED, State.FAILING)
"""Only these states run; Pending, Paused and Removed never do (States and transitions)."""


@dataclass(frozen=True, slots=True)
class RunOrder:
    """A run to start: the plug-in, why, its partition (today in the manifest's zone), the run
    key that keeps it from starting twice, and the request it answers, if any."""

    plugin_id: str
    trigger: RunTrigger
    today: date
    run_key: str
    request_id: int | None = None
    scheduled_for: datetime | None = None


@dataclass(frozen=True, slots=True)
class Runnable:
    """A plug-in allowed to run, with its approved schedule and its last attempt."""

    id: str
    version_id: int
    schedule: str
    timezone: str
    last_attempt: datetime | None


@dataclass(frozen=True, slots=True)
class DuePlan:
    """The orders of one evaluation, and the requests it answers or drops (to mark taken)."""

    orders: list[RunOrder]
    dropped: list[int]

    @property
    def taken(self) -> list[int]:
        return [o.request_id for o in self.orders if o.request_id is not None] + self.dropped


@functools.lru_cache(maxsize=4096)
def _schedule(text: str) -> Schedule:
    return parse_schedule(text)


def _newest_scheduled(now: datetime) -> Callable[[str, str], datetime | None]:
    """The newest scheduled instant at or before `now` of a schedule in a zone, worked out once
    for every plug-in of one evaluation that shares them (issue 33: the cron search was 0.4 ms
    a plug-in, 4 s an evaluation at 10,000 plug-ins)."""

    @functools.cache
    def newest(schedule: str, zone: str) -> datetime | None:
        return latest_scheduled_at_or_before(_schedule(schedule), zone, now)

    return newest


def runnable_plugins(conn: Connection) -> dict[str, Runnable]:
    """Approved or Failing plug-ins not taken down, with their approved schedule, zone and last
    attempt (newest start of a run that was not a backfill), in one statement."""
    last = (
        select(runs.c.plugin_id, func.max(runs.c.started_at).label("at"))
        .where(runs.c.trigger != str(RunTrigger.BACKFILL))
        .group_by(runs.c.plugin_id)
        .subquery("last_attempt")
    )
    query = (
        select(
            plugins.c.id,
            versions.c.id.label("version_id"),
            versions.c.manifest["schedule"].as_string().label("schedule"),
            versions.c.manifest["timezone"].as_string().label("timezone"),
            last.c.at,
        )
        .join(versions, versions.c.id == plugins.c.approved_version_id)
        .outerjoin(last, last.c.plugin_id == plugins.c.id)
        .where(
            plugins.c.state.in_([str(s) for s in RUNNABLE]),
            plugins.c.taken_down.is_(False),
        )
        .order_by(plugins.c.id)
    )
    return {
        row.id: Runnable(row.id, row.version_id, row.schedule, row.timezone, row.at)
        for row in conn.execute(query)
    }


def retry_stands(request: OpenRunRequest, last_attempt: datetime | None) -> bool:
    """Running rule 4: a failed run is retried once, 30 minutes later (the request's
    `not_before`), unless another attempt already ran after the failure; then the plug-in
    waits for its next scheduled time."""
    return last_attempt is None or last_attempt <= request.requested_at


def plan_runs(
    conn: Connection,
    now: datetime,
    *,
    in_flight: Collection[str] = (),
    known: Collection[str] | None = None,
) -> DuePlan:
    """The runs to start at `now` (Running rules 1-4): open run requests first (approval,
    resume, first run, retry), then plug-ins whose schedule is due. At most one order per
    plug-in; none for a plug-in with a run `in_flight` (queued or running: it waits, rule 5)
    or, when `known` is given, one the orchestrator has not loaded yet (it is asked again at
    the next evaluation)."""
    candidates = runnable_plugins(conn)
    newest = _newest_scheduled(now)
    orders: dict[str, RunOrder] = {}
    dropped: list[int] = []
    for request in open_run_requests(conn, now):
        plugin = candidates.get(request.plugin_id)
        trigger = RunTrigger(request.trigger)
        if plugin is None or plugin.version_id != request.version_id:
            dropped.append(request.id)  # paused, removed, pending, or another version now
            continue
        if trigger is RunTrigger.RETRY and not retry_stands(request, plugin.last_attempt):
            dropped.append(request.id)
            continue
        if plugin.id in orders:
            dropped.append(request.id)  # one run answers every request left for it
            continue
        if plugin.id in in_flight or (known is not None and plugin.id not in known):
            continue
        orders[plugin.id] = RunOrder(
            plugin_id=plugin.id,
            trigger=trigger,
            today=today_in_zone(now, plugin.timezone),
            run_key=f"request:{request.id}",
            request_id=request.id,
        )
    for plugin in candidates.values():
        if plugin.id in orders or plugin.id in in_flight:
            continue
        if known is not None and plugin.id not in known:
            continue
        due = due_since(newest(plugin.schedule, plugin.timezone), plugin.last_attempt)
        if not due.due:
            continue
        if due.first_run:
            trigger, key = RunTrigger.FIRST, f"{plugin.id}:first"
        else:
            assert due.scheduled_for is not None
            trigger, key = RunTrigger.SCHEDULE, f"{plugin.id}:{due.scheduled_for.isoformat()}"
        orders[plugin.id] = RunOrder(
            plugin_id=plugin.id,
            trigger=trigger,
            today=today_in_zone(now, plugin.timezone),
            run_key=key,
            scheduled_for=due.scheduled_for,
        )
    return DuePlan(orders=list(orders.values()), dropped=dropped)


def take_requests(engine: Engine, request_ids: Collection[int], now: datetime) -> None:
    """Mark the answered and dropped requests taken, in one transaction."""
    if not request_ids:
        return
    with write_transaction(engine) as conn:
        for request_id in request_ids:
            take_run_request(conn, request_id, now)
