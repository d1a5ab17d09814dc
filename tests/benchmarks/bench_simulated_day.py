"""A simulated day on PostgreSQL: plug-ins due hourly (300 by default) under a frozen clock
advanced through 24 hours (by default), with the real daemon iterations (the sensor daemon's
each simulated minute, the run queue's whenever runs wait) and the real locked room, through the
orchestration harness (`tests/orchestration/harness.py`: the service's definitions, its
dagster.yaml with Dagster's storage on the same PostgreSQL, runs executed by the synchronous
in-process launcher, sources from a loopback TLS server).

Time: the clock stands still while Dagster works and moves on by the real time each queue
iteration took (the runs it executed), so a run's wait from its scheduled time to its start is
what one-at-a-time running makes it; between runs it jumps to the next minute. It prints the
runs done, that each due run was done once (none missed, none twice), that none overlapped (the
pool let at most one run go at a time), the longest wait from due to start, the time per run,
and one JSON line of the figures.

    ALMANAC_TEST_DATABASE_URL=postgresql+psycopg://postgres@127.0.0.1:5432/postgres \\
    .venv/bin/python tests/benchmarks/bench_simulated_day.py [plugins] [hours]
"""

from __future__ import annotations

import json
import os
import shutil
import statistics
import sys
import tempfile
import time
from collections import Counter
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import dagster as dg
from dagster._core.definitions.reconstruct import ReconstructableJob
from dagster._core.test_utils import freeze_time
from dagster._daemon.sensor import execute_sensor_iteration

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))

from almanac.assets.tags import TAG_PLUGIN, TAG_SCHEDULED_FOR  # noqa: E402
from almanac.orchestration.catalog import load_catalog  # noqa: E402
from almanac.orchestration.folders import register_folder  # noqa: E402
from almanac.platform.store.engine import write_transaction  # noqa: E402
from almanac.platform.store.models import RunRequest  # noqa: E402
from tests.benchmarks.bench_orchestration import TimedRoom, first_runs_done  # noqa: E402
from tests.orchestration.conftest import fresh_postgres_engine  # noqa: E402
from tests.orchestration.harness import (  # noqa: E402
    Orchestrator,
    SourceServer,
    approve,
    source_host,
    source_path,
    write_plugin,
)

START = datetime(2026, 6, 1, 0, 0, tzinfo=UTC)
HOURLY = "0 * * * *"
LEFT_THE_QUEUE = [s for s in dg.DagsterRunStatus if s != dg.DagsterRunStatus.QUEUED]


def main(count: int, hours: int) -> None:
    os.environ.setdefault(
        "ALMANAC_TEST_DATABASE_URL", "postgresql+psycopg://postgres@127.0.0.1:5432/postgres"
    )
    work = Path(tempfile.mkdtemp(prefix="bench-day-"))
    try:
        with fresh_postgres_engine("day") as engine:
            run_day(work, engine, count, hours)
    finally:
        shutil.rmtree(work, ignore_errors=True)


def run_day(work: Path, engine: Any, count: int, hours: int) -> None:
    ids = [f"day-{n:03d}" for n in range(count)]
    began = time.perf_counter()
    registered = START - timedelta(days=1)
    for plugin_id in ids:
        folder = write_plugin(work / "plugins", plugin_id, schedule=HOURLY, timezone="UTC")
        register_folder(engine, folder, now=registered)
        approve(engine, plugin_id, registered)
    # Each has run (its first run) just before the day: from midnight on, only the hourly
    # schedule starts them.
    with engine.connect() as conn:
        catalog = load_catalog(conn)
    before = START - timedelta(minutes=1)
    with write_transaction(engine) as conn:
        first_runs_done(conn, catalog, before)
        conn.execute(RunRequest.__table__.update().values(taken_at=before))
    print(f"{count} plug-ins registered and approved in {time.perf_counter() - began:.1f} s")

    room = TimedRoom()
    end = START + timedelta(hours=hours)
    runs: list[dict[str, Any]] = []
    ticks: list[float] = []
    iterations: list[float] = []
    most_at_once = 0
    with (
        SourceServer([source_host(i) for i in ids]) as server,
        Orchestrator.open(
            work / "orch",
            engine,
            downloader=server.downloader,
            room=room,
            start=START,
            dagster_on_store=True,
        ) as orch,
    ):
        for plugin_id in ids:
            server.serve(source_path(plugin_id), b"ok\n")
        instance = orch.instance
        waiting = dg.RunsFilter(statuses=[dg.DagsterRunStatus.QUEUED])
        now, next_minute = START, START
        day_began = time.perf_counter()
        while True:
            # The sensor daemon: one iteration at each minute the clock reached.
            while next_minute <= now and next_minute < end:
                if next_minute.minute == 0 and next_minute > START:
                    print(
                        f"   {next_minute:%H:%M}: {len(runs)} runs done, "
                        f"{time.perf_counter() - day_began:.0f} s real time",
                        flush=True,
                    )
                orch.clock.set(next_minute)
                t = time.perf_counter()
                with freeze_time(next_minute):
                    for _ in execute_sensor_iteration(orch.workspace, orch.logger, None, None):
                        pass
                ticks.append(time.perf_counter() - t)
                next_minute += timedelta(minutes=1)
            queued = instance.get_run_ids(waiting)
            if not queued:
                if next_minute >= end:
                    break
                now = next_minute
                continue
            # The run queue's daemon: one iteration; the pool lets one run go, which the
            # in-process launcher executes to its end. Each run loads its own definitions
            # (a fresh run worker in production): Dagster's per-process cache is dropped.
            ReconstructableJob.get_repository_definition.cache_clear()
            ReconstructableJob.get_definition.cache_clear()
            orch.clock.set(now)
            t = time.perf_counter()
            with freeze_time(now):
                for _ in orch.queue.run_iteration(
                    orch.workspace, fixed_iteration_time=now.timestamp()
                ):
                    pass
            took = time.perf_counter() - t
            iterations.append(took)
            launched = list(
                instance.get_runs(dg.RunsFilter(run_ids=queued, statuses=LEFT_THE_QUEUE))
            )
            most_at_once = max(most_at_once, len(launched))
            for run in launched:
                runs.append(
                    {
                        "plugin": run.tags[TAG_PLUGIN],
                        "due": run.tags.get(TAG_SCHEDULED_FOR),
                        "start": now,
                        "status": run.status.value,
                    }
                )
            now += timedelta(seconds=took)
        day_s = time.perf_counter() - day_began

    expected = {(p, (START + timedelta(hours=h)).isoformat()) for p in ids for h in range(hours)}
    done = Counter((r["plugin"], r["due"]) for r in runs if r["status"] == "SUCCESS")
    failed = [r for r in runs if r["status"] != "SUCCESS"]
    missed = expected - set(done)
    twice = [key for key, n in done.items() if n > 1]
    unexpected = set(done) - expected
    waits = [
        (r["start"] - datetime.fromisoformat(r["due"])).total_seconds() for r in runs if r["due"]
    ]
    room_s = [left - entered for entered, left in zip(room.entered, room.left, strict=True)]
    per_run = sum(iterations) / max(len(runs), 1)
    print(f"\na simulated day: {count} plug-ins due hourly over {hours} hours, PostgreSQL")
    print(f"   runs done:                      {sum(done.values())} of {len(expected)} due")
    print(f"   missed / twice / failed:        {len(missed)} / {len(twice)} / {len(failed)}")
    print(f"   most runs going at once:        {most_at_once}")
    print(f"   longest wait from due to start: {max(waits, default=0):.1f} s")
    print(f"   time per run (queue iteration): {per_run * 1000:.0f} ms")
    print(f"   of which in the locked room:    {statistics.median(room_s) * 1000:.0f} ms (median)")
    print(
        f"   sensor iterations:              {len(ticks)}, median "
        f"{statistics.median(ticks) * 1000:.0f} ms, longest {max(ticks) * 1000:.0f} ms"
    )
    print(f"   real time of the day:           {day_s:.0f} s")
    assert not missed and not twice and not failed and not unexpected, (missed, twice, failed)
    assert most_at_once == 1
    figures = {
        "plugins": count,
        "hours": hours,
        "runs_due": len(expected),
        "runs_done": sum(done.values()),
        "missed": len(missed),
        "twice": len(twice),
        "failed": len(failed),
        "most_at_once": most_at_once,
        "longest_wait_s": round(max(waits, default=0), 1),
        "time_per_run_ms": round(per_run * 1000),
        "room_median_ms": round(statistics.median(room_s) * 1000),
        "sensor_iterations": len(ticks),
        "sensor_iteration_median_ms": round(statistics.median(ticks) * 1000),
        "sensor_iteration_max_ms": round(max(ticks) * 1000),
        "day_real_s": round(day_s),
    }
    print(json.dumps(figures, sort_keys=True))


if __name__ == "__main__":
    args = [int(a) for a in sys.argv[1:3]]
    main(args[0] if args else 300, args[1] if len(args) > 1 else 24)
