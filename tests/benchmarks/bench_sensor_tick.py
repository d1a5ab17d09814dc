"""The minute sensor's tick against the number of registered plug-ins, all due at once, on
PostgreSQL through the production path (`tests/benchmarks/production.py`: `almanac up`'s
dagster.yaml, a code server over gRPC, the sensor daemon's own iteration).

For each size: the due decision (the platform's `plan_runs`, and the sensor's whole evaluation
in this process: what is in flight, the plan, the run requests), then one sensor daemon
iteration that evaluates the sensor in the code server and submits every run it asks for (each
run created, its execution plan asked of the code server, queued). Submission a run is the
iteration's time less the evaluation's, over the runs queued; the CPU a run costs is read for
this process (the daemon's side), the code server's processes and the database's backends.

Goals (issue 33): the due decision under 1 s at 10,000 plug-ins; submission under 50 ms a run.
Sizes 100, 1,000, 10,000 (`--quick`: 30, 100, 300); or name them. It ends with one JSON line.

    ALMANAC_TEST_DATABASE_URL=postgresql+psycopg://postgres@127.0.0.1:5432/postgres \\
    .venv/bin/python tests/benchmarks/bench_sensor_tick.py [--quick] [sizes...]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import sys
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import dagster as dg

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))

from almanac.orchestration.due import plan_runs  # noqa: E402
from almanac.sensors.runs import due_runs_sensor, plugins_in_flight  # noqa: E402
from tests.benchmarks.production import cpu_seconds, production, register_hourly  # noqa: E402
from tests.benchmarks.sweep import emit  # noqa: E402
from tests.orchestration.conftest import fresh_postgres_engine  # noqa: E402

SIZES = (100, 1000, 10000)
QUICK = (30, 100, 300)
DECISION_GOAL_S = 1.0
SUBMISSION_GOAL_MS = 50.0


def measure(size: int) -> dict[str, Any]:
    work = Path(tempfile.mkdtemp(prefix="bench-tick-"))
    try:
        with fresh_postgres_engine("tick") as engine:
            return measure_on(work, engine, size)
    finally:
        shutil.rmtree(work, ignore_errors=True)


def measure_on(work: Path, engine: Any, size: int) -> dict[str, Any]:
    ids = [f"tick-{n:05d}" for n in range(size)]
    began = time.perf_counter()
    # Each ran two hours ago: every one is due at the next minute, on the real clock the code
    # server's sensor reads.
    register_hourly(engine, work, ids, datetime.now(UTC) - timedelta(hours=2))
    registered_s = time.perf_counter() - began
    with production(work, engine, ids) as made:
        known = frozenset(ids)

        def decide() -> float:
            now = datetime.now(UTC)
            began = time.perf_counter()
            with engine.connect() as conn:
                plan = plan_runs(conn, now, in_flight=(), known=known)
            took = time.perf_counter() - began
            assert len(plan.orders) == size, len(plan.orders)
            return took

        sensor = due_runs_sensor(engine, known)

        def evaluate() -> float:
            began = time.perf_counter()
            # The sensor's own function, as its code server calls it (Dagster then resolves
            # the requests against the repository).
            result = sensor(dg.build_sensor_context(instance=made.instance))
            took = time.perf_counter() - began
            assert isinstance(result, dg.SensorResult)
            assert len(result.run_requests or []) == size
            return took

        in_flight_s = min(
            _timed(lambda: plugins_in_flight(made.instance, datetime.now(UTC), engine))
            for _ in range(3)
        )
        decision_s = statistics.median(decide() for _ in range(3))
        evaluation_s = statistics.median(evaluate() for _ in range(3))
        processes = made.processes()
        before = cpu_seconds(processes)
        tick_s = made.sensor_tick()
        after = cpu_seconds(processes | {"postgres": made.processes()["postgres"]})
        runs = len(made.instance.get_run_ids(dg.RunsFilter(statuses=[dg.DagsterRunStatus.QUEUED])))
    assert runs == size, f"{runs} runs queued of {size} due"
    submission_ms = (tick_s - evaluation_s) / runs * 1000
    cpu_ms = {name: (after[name] - before.get(name, 0.0)) / runs * 1000 for name in after}
    return {
        "plugins": size,
        "registered_s": round(registered_s, 1),
        "in_flight_ms": round(in_flight_s * 1000, 1),
        "decision_ms": round(decision_s * 1000, 1),
        "evaluation_ms": round(evaluation_s * 1000, 1),
        "tick_s": round(tick_s, 2),
        "runs": runs,
        "submission_ms_a_run": round(submission_ms, 1),
        "cpu_ms_a_run": {name: round(ms, 1) for name, ms in cpu_ms.items()},
        "submit_workers": made.submit_workers,
    }


def _timed(action: Any) -> float:
    began = time.perf_counter()
    action()
    return time.perf_counter() - began


def main(argv: list[str]) -> None:
    os.environ.setdefault(
        "ALMANAC_TEST_DATABASE_URL", "postgresql+psycopg://postgres@127.0.0.1:5432/postgres"
    )
    quick = "--quick" in argv
    named = [int(a) for a in argv if a.isdigit()]
    sizes = named or (QUICK if quick else SIZES)
    rows = []
    for size in sizes:
        print(f"{size} plug-ins, all due:", flush=True)
        row = measure(size)
        rows.append(row)
        print(f"   {json.dumps(row)}", flush=True)
    print("\nthe minute sensor's tick, every plug-in due (PostgreSQL, code server over gRPC)")
    print(
        f"{'plug-ins':>9} {'decision':>10} {'evaluation':>11} {'tick':>9} "
        f"{'submission':>12} {'CPU a run: daemon':>18} {'code server':>12} {'postgres':>9}"
    )
    for row in rows:
        cpu = row["cpu_ms_a_run"]
        print(
            f"{row['plugins']:>9,} {row['decision_ms']:>8.0f}ms {row['evaluation_ms']:>9.0f}ms "
            f"{row['tick_s']:>8.1f}s {row['submission_ms_a_run']:>8.1f}ms/run "
            f"{cpu['daemon']:>16.1f}ms {cpu['code server']:>10.1f}ms {cpu['postgres']:>7.1f}ms"
        )
    largest = rows[-1]
    decision_met = largest["decision_ms"] / 1000 < DECISION_GOAL_S
    submission_met = all(r["submission_ms_a_run"] < SUBMISSION_GOAL_MS for r in rows)
    print(
        f"goal: due decision under {DECISION_GOAL_S:g} s at {largest['plugins']:,}: "
        f"{largest['decision_ms']:.0f} ms ({'met' if decision_met else 'missed'})"
    )
    print(
        f"goal: submission under {SUBMISSION_GOAL_MS:g} ms a run at every size: "
        f"{'met' if submission_met else 'missed'} "
        f"(largest {max(r['submission_ms_a_run'] for r in rows):.1f} ms)"
    )
    if len(rows) > 1:
        first = rows[0]
        growth = largest["submission_ms_a_run"] / first["submission_ms_a_run"]
        print(
            f"submission a run at {largest['plugins']:,} / at {first['plugins']:,}: {growth:.1f}x; "
            f"decision: {largest['decision_ms'] / max(first['decision_ms'], 0.1):.1f}x "
            f"for {largest['plugins'] / first['plugins']:.0f}x the plug-ins"
        )
    emit(
        "sensor_tick_postgresql",
        argparse.Namespace(quick=quick),
        {
            "store": "postgresql",
            "x": "plugins",
            "points": rows,
            "decision_goal_ms": DECISION_GOAL_S * 1000,
            "submission_goal_ms": SUBMISSION_GOAL_MS,
            "decision_goal_met": decision_met,
            "submission_goal_met": submission_met,
        },
    )


if __name__ == "__main__":
    main(sys.argv[1:])
