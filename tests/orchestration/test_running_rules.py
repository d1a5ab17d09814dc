"""The Running rules through the real Dagster machinery: a real instance with the queued run
coordinator, the sensor daemon's iteration, the run queue's iteration with the `almanac` pool,
runs executed by Dagster in this process, the real downloader over TLS and the real locked room.

The clock is frozen and moved by each test (the sensor, the pipeline and Dagster read it); the
store is the embedded SQLite default. See `harness.py`.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import dagster as dg
import pytest
from sqlalchemy import Engine

from almanac.assets.control import deploy, run_slots
from almanac.assets.tags import TAG_PLUGIN, TAG_SCHEDULED_FOR, TAG_TRIGGER
from almanac.orchestration.folders import register_folder
from almanac.platform.store import moves
from almanac.platform.store.engine import write_transaction
from almanac.sandbox.room import LockedRoom, RoomResult
from almanac.settings import Settings
from tests.orchestration.harness import (
    HARNESS_BY,
    Orchestrator,
    SourceServer,
    approve,
    source_host,
    source_path,
    state_of,
    store_runs,
    write_plugin,
)


def utc(*parts: int) -> datetime:
    return datetime(*parts, tzinfo=UTC)


@dataclass
class World:
    orch: Orchestrator
    server: SourceServer
    engine: Engine
    folder: Path

    def add(self, plugin_id: str, schedule: str, zone: str, *, approve_now: bool = True) -> None:
        """Write, serve ("ok"), register and (by default) approve a small plug-in now."""
        folder = write_plugin(self.folder, plugin_id, schedule=schedule, timezone=zone)
        self.server.serve(source_path(plugin_id), b"ok\n")
        register_folder(self.engine, folder, now=self.orch.clock.now)
        if approve_now:
            approve(self.engine, plugin_id, self.orch.clock.now)

    def minute(self, at: datetime) -> list[tuple[str, str, str | None]]:
        """One minute at `at`; (plug-in, trigger, scheduled-for) of each run launched, after
        checking that each ran to its end."""
        done = self.orch.minute(at)
        assert not self.orch.queued(), "a run was left in the queue"
        for run in done.launched:
            assert run.status in (dg.DagsterRunStatus.SUCCESS, dg.DagsterRunStatus.FAILURE)
        return [
            (r.tags[TAG_PLUGIN], r.tags[TAG_TRIGGER], r.tags.get(TAG_SCHEDULED_FOR))
            for r in done.launched
        ]


@contextlib.contextmanager
def world(
    tmp_path: Path,
    engine: Engine,
    ids: Sequence[str],
    start: datetime,
    room: Any = None,
) -> Iterator[World]:
    with (
        SourceServer([source_host(i) for i in ids]) as server,
        Orchestrator.open(
            tmp_path, engine, downloader=server.downloader, room=room, start=start
        ) as orch,
    ):
        yield World(orch, server, engine, tmp_path / "plugins")


# -- Running rules 1-2 under real clock changes ----------------------------------------------

SPRING = [
    # zone, schedule, the day before (exists), the skipped day's moments, the day after
    pytest.param(
        "America/New_York",
        "30 2 * * *",
        utc(2026, 3, 7, 7, 30),
        [utc(2026, 3, 8, 7, 0), utc(2026, 3, 8, 7, 30), utc(2026, 3, 8, 12, 0)],
        utc(2026, 3, 9, 6, 30),
        id="new-york",
    ),
    pytest.param(
        "Europe/Berlin",
        "30 2 * * *",
        utc(2026, 3, 28, 1, 30),
        [utc(2026, 3, 29, 1, 0), utc(2026, 3, 29, 1, 30), utc(2026, 3, 29, 12, 0)],
        utc(2026, 3, 30, 0, 30),
        id="berlin",
    ),
    pytest.param(
        "Australia/Lord_Howe",  # a half-hour change: 02:00 -> 02:30
        "15 2 * * *",
        utc(2026, 10, 2, 15, 45),
        [utc(2026, 10, 3, 15, 30), utc(2026, 10, 3, 15, 45), utc(2026, 10, 4, 1, 0)],
        utc(2026, 10, 4, 15, 15),
        id="lord-howe",
    ),
]


@pytest.mark.parametrize(("zone", "schedule", "before", "skipped_day", "after"), SPRING)
def test_a_time_skipped_by_spring_forward_does_not_run(
    tmp_path: Path,
    sqlite_engine: Engine,
    zone: str,
    schedule: str,
    before: datetime,
    skipped_day: list[datetime],
    after: datetime,
) -> None:
    start = before - timedelta(hours=12)
    with world(tmp_path, sqlite_engine, ["tick"], start) as w:
        w.add("tick", schedule, zone)
        assert w.minute(start) == [("tick", "first", None)]
        assert w.minute(before - timedelta(minutes=1)) == []
        assert w.minute(before) == [("tick", "schedule", before.isoformat())]
        assert w.minute(before + timedelta(minutes=1)) == []
        for moment in skipped_day:
            assert w.minute(moment) == [], f"ran at {moment} although its time was skipped"
        assert w.minute(after - timedelta(minutes=1)) == []
        assert w.minute(after) == [("tick", "schedule", after.isoformat())]
        runs = store_runs(sqlite_engine, "tick")
        assert [r["outcome"] for r in runs] == ["success"] * 3
        assert [r["started_at"] for r in runs] == [start, before, after]


FALL = [
    # zone, schedule, first instant of the repeated time, its second instant, next day's time
    pytest.param(
        "America/New_York",
        "30 1 * * *",
        utc(2026, 11, 1, 5, 30),
        utc(2026, 11, 1, 6, 30),
        utc(2026, 11, 2, 6, 30),
        id="new-york",
    ),
    pytest.param(
        "Europe/Berlin",
        "30 2 * * *",
        utc(2026, 10, 25, 0, 30),
        utc(2026, 10, 25, 1, 30),
        utc(2026, 10, 26, 1, 30),
        id="berlin",
    ),
    pytest.param(
        "Australia/Lord_Howe",  # a half-hour change: 02:00 -> 01:30
        "45 1 * * *",
        utc(2026, 4, 4, 14, 45),
        utc(2026, 4, 4, 15, 15),
        utc(2026, 4, 5, 15, 15),
        id="lord-howe",
    ),
]


@pytest.mark.parametrize(("zone", "schedule", "first", "second", "next_day"), FALL)
def test_a_time_repeated_by_fall_back_runs_once_at_its_first_instant(
    tmp_path: Path,
    sqlite_engine: Engine,
    zone: str,
    schedule: str,
    first: datetime,
    second: datetime,
    next_day: datetime,
) -> None:
    start = first - timedelta(hours=12)
    with world(tmp_path, sqlite_engine, ["tick"], start) as w:
        w.add("tick", schedule, zone)
        assert w.minute(start) == [("tick", "first", None)]
        assert w.minute(first - timedelta(minutes=1)) == []
        assert w.minute(first) == [("tick", "schedule", first.isoformat())]
        for moment in (first + timedelta(minutes=1), second, second + timedelta(minutes=1)):
            assert w.minute(moment) == [], f"the repeated time ran again at {moment}"
        assert w.minute(next_day) == [("tick", "schedule", next_day.isoformat())]
        assert len(store_runs(sqlite_engine, "tick")) == 3


# -- Running rules 1-3 -----------------------------------------------------------------------


def test_due_times_run_once_and_missed_times_run_once(
    tmp_path: Path, sqlite_engine: Engine
) -> None:
    start = utc(2026, 3, 2, 15, 0)  # 10:00 in New York; the schedule is 09:00 there
    with world(tmp_path, sqlite_engine, ["daily"], start) as w:
        w.add("daily", "0 9 * * *", "America/New_York")
        assert w.minute(start) == [("daily", "first", None)]
        # Three 09:00s pass unseen (Mar 3, 4, 5): one run, standing for the newest of them.
        newest = utc(2026, 3, 5, 14, 0)
        assert w.minute(utc(2026, 3, 5, 20, 0)) == [("daily", "schedule", newest.isoformat())]
        assert w.minute(utc(2026, 3, 5, 20, 1)) == []
        # A due time seen as it comes runs once, however many minutes follow.
        due = utc(2026, 3, 6, 14, 0)
        assert w.minute(due - timedelta(minutes=1)) == []
        assert w.minute(due) == [("daily", "schedule", due.isoformat())]
        assert w.minute(due + timedelta(minutes=1)) == []
        assert w.minute(due + timedelta(minutes=2)) == []
        runs = store_runs(sqlite_engine, "daily")
        assert [(r["trigger"], r["outcome"]) for r in runs] == [
            ("first", "success"),
            ("schedule", "success"),
            ("schedule", "success"),
        ]


def test_approval_and_resume_run_at_once_and_pending_never_runs(
    tmp_path: Path, sqlite_engine: Engine
) -> None:
    start = utc(2026, 6, 10, 3, 17)  # the schedule (Mondays 06:00 Berlin) is days away
    with world(tmp_path, sqlite_engine, ["weekly"], start) as w:
        w.add("weekly", "0 6 * * 1", "Europe/Berlin", approve_now=False)
        assert w.minute(start) == [], "a Pending plug-in ran"
        approve(sqlite_engine, "weekly", utc(2026, 6, 10, 3, 20))
        assert w.minute(utc(2026, 6, 10, 3, 20)) == [("weekly", "first", None)]
        with write_transaction(sqlite_engine) as conn:
            moves.pause(conn, "weekly", by=HARNESS_BY, now=utc(2026, 6, 10, 4, 0))
        # Paused: the scheduled time passes without a run.
        assert w.minute(utc(2026, 6, 15, 4, 0)) == []
        with write_transaction(sqlite_engine) as conn:
            moves.resume(conn, "weekly", by=HARNESS_BY, now=utc(2026, 6, 15, 9, 41))
        assert w.minute(utc(2026, 6, 15, 9, 41)) == [("weekly", "resume", None)]
        assert w.minute(utc(2026, 6, 15, 9, 42)) == []
        assert state_of(sqlite_engine, "weekly") == "approved"


# -- Running rule 4 --------------------------------------------------------------------------


def test_a_failed_run_is_retried_30_minutes_later_once_then_waits_for_its_time(
    tmp_path: Path, sqlite_engine: Engine
) -> None:
    start = utc(2026, 3, 2, 15, 0)
    with world(tmp_path, sqlite_engine, ["flaky"], start) as w:
        w.add("flaky", "0 9 * * *", "America/New_York")
        w.server.fail(source_path("flaky"), 404)
        assert w.minute(start) == [("flaky", "first", None)]
        assert state_of(sqlite_engine, "flaky") == "failing"
        assert w.minute(start + timedelta(minutes=29)) == []
        assert w.minute(start + timedelta(minutes=30)) == [("flaky", "retry", None)]
        # The retry failed too: no second retry; the plug-in waits for its next time.
        for later in (31, 60, 90, 240):
            assert w.minute(start + timedelta(minutes=later)) == []
        w.server.serve(source_path("flaky"), b"ok\n")
        nine = utc(2026, 3, 3, 14, 0)
        assert w.minute(nine) == [("flaky", "schedule", nine.isoformat())]
        runs = store_runs(sqlite_engine, "flaky")
        assert [(r["trigger"], r["outcome"]) for r in runs] == [
            ("first", "failure"),
            ("retry", "failure"),
            ("schedule", "success"),
        ]
        assert runs[0]["reason"] == (
            "could not download data: the server answered HTTP 404, not 200"
        )
        assert state_of(sqlite_engine, "flaky") == "approved"
        # Failures the asset kept are not kept again by the run-failure sensor.
        dagster_runs = w.orch.instance.get_runs()
        assert len(dagster_runs) == len(runs)


class CrashingRoom:
    """A room whose host side breaks (not a refusal): the asset's code raises an unexpected
    error, so only the run-failure sensor can keep the failure."""

    def run(self, *args: Any, **kwargs: Any) -> RoomResult:
        raise OSError("the room's host folder vanished")


def test_a_run_that_fails_outside_the_pipeline_is_kept_by_the_failure_sensor(
    tmp_path: Path, sqlite_engine: Engine
) -> None:
    start = utc(2026, 3, 2, 15, 0)
    with world(tmp_path, sqlite_engine, ["crashy"], start, room=CrashingRoom()) as w:
        w.add("crashy", "0 9 * * *", "America/New_York")
        done = w.orch.minute(start)
        assert [r.status for r in done.launched] == [dg.DagsterRunStatus.FAILURE]
        assert store_runs(sqlite_engine, "crashy") == []
        w.orch.minute(start + timedelta(minutes=1))  # the run-failure sensor's evaluation
        runs = store_runs(sqlite_engine, "crashy")
        assert [(r["trigger"], r["outcome"]) for r in runs] == [("first", "failure")]
        assert runs[0]["reason"].startswith("the run stopped outside the fetcher:")
        assert state_of(sqlite_engine, "crashy") == "failing"
        w.orch.minute(start + timedelta(minutes=2))
        kept = [
            (r["trigger"], r["started_at"], r["reason"])
            for r in store_runs(sqlite_engine, "crashy")
        ]
        assert len(kept) == 1, f"the failure was kept twice: {kept}"


# -- Running rule 5 --------------------------------------------------------------------------


class ProbingRoom:
    """The real locked room, which before each run asks the run queue to launch what it can
    (while this run is in progress) and notes the order of room starts and ends."""

    def __init__(self) -> None:
        self.room = LockedRoom()
        self.events: list[str] = []
        self.orch: Orchestrator | None = None
        self.launched_meanwhile: list[list[str]] = []
        self.queued_meanwhile: list[list[str]] = []

    def run(self, plugin_files: Any, sources: Any, context: Any, limits: Any = None) -> RoomResult:
        assert self.orch is not None
        self.events.append("start")
        launched = self.orch.dequeue()
        self.launched_meanwhile.append([r.tags[TAG_PLUGIN] for r in launched])
        self.queued_meanwhile.append([r.tags[TAG_PLUGIN] for r in self.orch.queued()])
        try:
            return self.room.run(plugin_files, sources, context, limits)
        finally:
            self.events.append("end")


def test_two_due_plugins_run_one_after_the_other(tmp_path: Path, sqlite_engine: Engine) -> None:
    start = utc(2026, 5, 4, 11, 0)
    room = ProbingRoom()
    with world(tmp_path, sqlite_engine, ["one", "two"], start, room=room) as w:
        room.orch = w.orch
        w.add("one", "0 8 * * *", "Europe/Berlin")
        w.add("two", "0 2 * * *", "America/New_York")
        created = w.orch.tick(start)
        assert sorted(r.tags[TAG_PLUGIN] for r in created) == ["one", "two"]
        first = w.orch.dequeue()
        assert len(first) == 1, "the pool let two runs go together"
        waiting = w.orch.queued()
        assert len(waiting) == 1 and waiting[0].tags[TAG_PLUGIN] != first[0].tags[TAG_PLUGIN]
        # While the first run was in its room, the queue launched nothing and the other waited.
        assert room.launched_meanwhile == [[]]
        assert room.queued_meanwhile == [[waiting[0].tags[TAG_PLUGIN]]]
        second = w.orch.dequeue()
        assert [r.run_id for r in second] == [waiting[0].run_id]
        assert room.launched_meanwhile == [[], []]
        assert room.events == ["start", "end", "start", "end"]
        statuses = {w.orch.run(r.run_id).status for r in created}
        assert statuses == {dg.DagsterRunStatus.SUCCESS}


def test_a_deployment_hold_keeps_runs_queued_and_releases_them(
    tmp_path: Path, sqlite_engine: Engine
) -> None:
    start = utc(2026, 5, 4, 11, 0)
    with world(tmp_path, sqlite_engine, ["held"], start) as w:
        w.add("held", "0 8 * * *", "Europe/Berlin")
        seen: dict[str, Any] = {}

        def migrate(url: str) -> None:
            # Inside the deployment: the approval run is due, but the pool's limit is 0.
            seen["slots"] = run_slots(w.orch.instance)
            done = w.orch.minute(start)
            later = w.orch.minute(start + timedelta(minutes=5))
            seen["created"] = [r.tags[TAG_PLUGIN] for r in done.created + later.created]
            seen["launched"] = done.launched + later.launched
            seen["queued"] = [r.tags[TAG_PLUGIN] for r in w.orch.queued()]

        settings = Settings(
            home=tmp_path, api_port=0, dagster_port=0, database_url="sqlite://", base_url="x"
        )
        deploy(w.orch.instance, settings, migrate=migrate, say=lambda _: None)
        assert seen == {"slots": 0, "created": ["held"], "launched": [], "queued": ["held"]}
        assert run_slots(w.orch.instance) == 1
        released = w.orch.dequeue(start + timedelta(minutes=6))
        assert [r.tags[TAG_PLUGIN] for r in released] == ["held"]
        assert w.orch.run(released[0].run_id).status == dg.DagsterRunStatus.SUCCESS
        assert [r["outcome"] for r in store_runs(sqlite_engine, "held")] == ["success"]
