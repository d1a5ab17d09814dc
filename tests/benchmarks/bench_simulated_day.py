"""A simulated day on PostgreSQL through the production path: plug-ins due hourly (300 by
default) over a number of simulated hours (24 by default), `almanac up`'s dagster.yaml (queued
runs, the `almanac` pool with `--slots` run slots, `ForkServerRunLauncher`, the sensors' runs
submitted in threads), a code server over gRPC, the sensor daemon's iteration each simulated
minute and the queue daemon's each second in two threads of this process (as `dagster-daemon`
runs them), real run workers and the real locked room, sources from a loopback TLS server.

Time: a simulated clock (`bench_location.SimulatedClock`) that the code server's sensor and
every run worker read; it runs at the real pace while anything is queued or going (so a run's
wait from its scheduled time to its start is what submission, the queue and the run slots make
it) and jumps to the next hour once all is done. Quiet minutes in between are skipped (nothing
is due in them). It prints the runs done, that each due run was done once (none missed, none
twice, none failed), the most runs going at once and that no plug-in ran twice at once, the
longest wait from due to start and the runs that waited more than 10 minutes, each hour's first
sensor tick (the one that submits the hour's runs), and one JSON line of the figures.

    ALMANAC_TEST_DATABASE_URL=postgresql+psycopg://postgres@127.0.0.1:5432/postgres \\
    .venv/bin/python tests/benchmarks/bench_simulated_day.py [plugins=300] [hours=24] \\
        [--slots N] [--quick]

`--quick`: 30 plug-ins over 2 hours. For 3,000 hourly plug-ins: `3000 3 --slots 4`.
`--stop-after M`: stop after M real minutes and print what the day reached by then: the runs
done, the due runs still queued or going (not counted missed), their wait so far (the longest
wait is then at least that), the runs a minute done and the minutes the due runs would take
at that pace. For a size whose hour outlasts the machine's patience (3,000 hourly plug-ins on
2 cores: `3000 1 --slots 4 --stop-after 15`).
"""

from __future__ import annotations

import argparse
import itertools
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
from sqlalchemy import select

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))

from almanac.assets.tags import TAG_PLUGIN, TAG_SCHEDULED_FOR  # noqa: E402
from almanac.platform.store.tables import runs as store_runs  # noqa: E402
from tests.benchmarks.production import BUSY, Daemons, production, register_hourly  # noqa: E402
from tests.orchestration.conftest import fresh_postgres_engine  # noqa: E402

START = datetime(2026, 6, 1, 0, 0, tzinfo=UTC)
WAIT_GOAL = timedelta(minutes=10)


def main(count: int, hours: int, slots: int, stop_after: float | None = None) -> None:
    os.environ.setdefault(
        "ALMANAC_TEST_DATABASE_URL", "postgresql+psycopg://postgres@127.0.0.1:5432/postgres"
    )
    work = Path(tempfile.mkdtemp(prefix="bench-day-"))
    try:
        with fresh_postgres_engine("day") as engine:
            run_day(work, engine, count, hours, slots, stop_after)
    finally:
        shutil.rmtree(work, ignore_errors=True)


def run_day(
    work: Path, engine: Any, count: int, hours: int, slots: int, stop_after: float | None
) -> None:
    ids = [f"day-{n:04d}" for n in range(count)]
    began = time.perf_counter()
    register_hourly(engine, work, ids, START - timedelta(minutes=1))
    print(f"{count} plug-ins registered and approved in {time.perf_counter() - began:.1f} s")
    end = START + timedelta(hours=hours)
    stopped_at: datetime | None = None
    with production(work, engine, ids, slots=slots, clock_at=START - timedelta(seconds=1)) as made:
        day_began = time.perf_counter()
        with Daemons(made, START, end) as daemons:
            while not daemons.errors:
                if stop_after is not None and time.perf_counter() - day_began > stop_after * 60:
                    stopped_at = daemons.clock()
                    print(f"   stopped after {stop_after:g} real minutes", flush=True)
                    break
                if daemons.idle():
                    after = daemons.clock()
                    following = after.replace(minute=0, second=0, microsecond=0) + timedelta(
                        hours=1
                    )
                    if following >= end:
                        break
                    print(
                        f"   {after:%H:%M:%S} all done, {time.perf_counter() - day_began:.0f} s "
                        "real time",
                        flush=True,
                    )
                    daemons.jump(following)
                time.sleep(0.2)
        if daemons.errors:
            raise daemons.errors[0]
        day_s = time.perf_counter() - day_began
        if stopped_at is not None:
            _let_launched_runs_end(made.instance)
        dagster_runs = list(made.instance.get_runs())
        ticks = daemons.ticks
    report(engine, ids, hours, slots, dagster_runs, ticks, day_s, stopped_at)


WAITING = frozenset({dg.DagsterRunStatus.QUEUED, dg.DagsterRunStatus.NOT_STARTED})
"""A run not launched yet: at a `--stop-after` stop it has waited at least until the stop. Runs
still waiting or going (`production.BUSY`) at the stop are not counted as failed."""


def _let_launched_runs_end(instance: dg.DagsterInstance, seconds: float = 120) -> None:
    """After a `--stop-after` stop (the queue no longer launches): the runs already launched
    end before the database goes, else their workers outlive the benchmark."""
    launched = dg.RunsFilter(statuses=[dg.DagsterRunStatus.STARTING, dg.DagsterRunStatus.STARTED])
    deadline = time.monotonic() + seconds
    while instance.get_run_ids(launched) and time.monotonic() < deadline:
        time.sleep(0.5)


def report(
    engine: Any,
    ids: list[str],
    hours: int,
    slots: int,
    dagster_runs: list[dg.DagsterRun],
    ticks: list[tuple[datetime, float]],
    day_s: float,
    stopped_at: datetime | None = None,
) -> None:
    with engine.connect() as conn:
        kept = {
            row.orchestrator_run: row
            for row in conn.execute(
                select(
                    store_runs.c.orchestrator_run,
                    store_runs.c.plugin_id,
                    store_runs.c.started_at,
                    store_runs.c.ended_at,
                    store_runs.c.outcome,
                ).where(store_runs.c.orchestrator_run.is_not(None))
            )
        }
    runs = []
    for run in dagster_runs:
        row = kept.get(run.run_id)
        runs.append(
            {
                "plugin": run.tags.get(TAG_PLUGIN),
                "due": run.tags.get(TAG_SCHEDULED_FOR),
                "status": run.status.value,
                "unfinished": run.status in BUSY,
                "waiting": run.status in WAITING,
                "start": row.started_at if row else None,
                "end": row.ended_at if row else None,
            }
        )
    dues = [START + timedelta(hours=h) for h in range(hours)]
    if stopped_at is not None:
        dues = [due for due in dues if due <= stopped_at]
    expected = {(p, due.isoformat()) for p in ids for due in dues}
    done = Counter((r["plugin"], r["due"]) for r in runs if r["status"] == "SUCCESS")
    pending = [r for r in runs if stopped_at is not None and r["waiting"]]
    going = {(r["plugin"], r["due"]) for r in runs if stopped_at is not None and r["unfinished"]}
    failed = [r for r in runs if r["status"] != "SUCCESS" and (r["plugin"], r["due"]) not in going]
    missed = expected - set(done) - going
    twice = [key for key, n in done.items() if n > 1]
    waits = [
        (r["start"] - datetime.fromisoformat(r["due"])).total_seconds()
        for r in runs
        if r["due"] and r["start"]
    ]
    if stopped_at is not None:
        # A run not started by the stop has waited at least until it.
        waits += [(stopped_at - datetime.fromisoformat(r["due"])).total_seconds() for r in pending]
    over = [w for w in waits if w > WAIT_GOAL.total_seconds()]
    spans = [(r["start"], r["end"], r["plugin"]) for r in runs if r["start"] and r["end"]]
    most = most_at_once(spans)
    same_plugin = overlapping_runs_of_one_plugin(spans)
    first_ticks = [took for at, took in ticks if at.minute == 0]
    quiet = [took for at, took in ticks if at.minute != 0]
    span_s = [(e - s).total_seconds() for s, e, _ in spans]
    print(
        f"\na simulated day: {len(ids)} plug-ins due hourly over {hours} hours, {slots} run "
        "slot(s), PostgreSQL, production launcher"
    )
    print(f"   runs done:                          {sum(done.values())} of {len(expected)} due")
    if stopped_at is not None:
        pace = sum(done.values()) / (day_s / 60)
        print(
            f"   at the stop ({stopped_at:%H:%M:%S}):         {len(going)} due runs queued or going"
        )
        print(f"   runs a minute done:                 {pace:.1f}")
        print(f"   the due runs at that pace:          {len(expected) / pace:.1f} minutes")
    print(f"   missed / twice / failed:            {len(missed)} / {len(twice)} / {len(failed)}")
    print(f"   most runs going at once:            {most} (slots {slots})")
    print(f"   runs of one plug-in at once:        {same_plugin} times")
    at_least = "at least " if stopped_at is not None and pending else ""
    print(f"   longest wait from due to start:     {at_least}{max(waits, default=0):.1f} s")
    print(f"   waits over {WAIT_GOAL.seconds // 60} minutes:                {len(over)}")
    print(f"   a run, start to end (store):        {statistics.median(span_s) * 1000:.0f} ms")
    print(
        "   each hour's first sensor tick:      "
        + ", ".join(f"{s:.1f}" for s in first_ticks)
        + " s"
    )
    if quiet:
        print(f"   other ticks (median):               {statistics.median(quiet) * 1000:.0f} ms")
    print(f"   real time:                          {day_s:.0f} s")
    assert not missed and not twice and not failed, (sorted(missed)[:5], twice[:5], failed[:5])
    assert most <= slots and same_plugin == 0
    figures = {
        "plugins": len(ids),
        "hours": hours,
        "slots": slots,
        "runs_due": len(expected),
        "runs_done": sum(done.values()),
        "missed": len(missed),
        "twice": len(twice),
        "failed": len(failed),
        "most_at_once": most,
        "one_plugin_twice_at_once": same_plugin,
        "longest_wait_s": round(max(waits, default=0), 1),
        "waits_over_10_min": len(over),
        "run_median_ms": round(statistics.median(span_s) * 1000),
        "first_tick_s": [round(s, 1) for s in first_ticks],
        "quiet_tick_median_ms": round(statistics.median(quiet) * 1000) if quiet else None,
        "real_s": round(day_s),
    }
    if stopped_at is not None:
        figures |= {
            "stopped_after_real_s": round(day_s),
            "unfinished_at_stop": len(going),
            "runs_a_minute": round(sum(done.values()) / (day_s / 60), 1),
        }
    print(json.dumps(figures, sort_keys=True))


def most_at_once(spans: list[tuple[datetime, datetime, Any]]) -> int:
    """The most spans open at one instant (an end before a start at the same instant)."""
    edges = sorted([(s, 1) for s, _, _ in spans] + [(e, -1) for _, e, _ in spans])
    most = going = 0
    for _, step in edges:
        going += step
        most = max(most, going)
    return most


def overlapping_runs_of_one_plugin(spans: list[tuple[datetime, datetime, Any]]) -> int:
    """How many times a plug-in's run started before its previous run ended."""
    by_plugin: dict[Any, list[tuple[datetime, datetime]]] = {}
    for start, end, plugin in spans:
        by_plugin.setdefault(plugin, []).append((start, end))
    overlaps = 0
    for plugin_spans in by_plugin.values():
        plugin_spans.sort()
        for (_, ended), (started, _) in itertools.pairwise(plugin_spans):
            overlaps += started < ended
    return overlaps


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("plugins", type=int, nargs="?", default=300)
    parser.add_argument("hours", type=int, nargs="?", default=24)
    parser.add_argument("--slots", type=int, default=1)
    parser.add_argument("--quick", action="store_true", help="30 plug-ins over 2 hours")
    parser.add_argument(
        "--stop-after", type=float, metavar="MINUTES", help="stop after this many real minutes"
    )
    args = parser.parse_args()
    if args.quick:
        args.plugins, args.hours = 30, 2
    main(args.plugins, args.hours, args.slots, args.stop_after)
