"""Runs a day against the run slots (`ALMANAC_RUN_SLOTS`) when each run's download takes 1 s:
a loopback source server that waits a second before it answers, plug-ins all due at once, on
PostgreSQL through the production path (`tests/benchmarks/production.py`: `almanac up`'s
dagster.yaml, a code server over gRPC, the sensor and queue daemons' iterations in two threads,
`ForkServerRunLauncher`'s run workers, the real locked room).

For 1, 2 and 4 slots (or those named): the time from the hour's start to the last run's end,
a run's time in the store (download, room, write), the most runs going at once, and the runs a
day at that pace (86,400 s over the time a run adds to the hour), with the ratio to one slot.
It ends with one JSON line. `--quick`: 8 plug-ins a size instead of 24.

    ALMANAC_TEST_DATABASE_URL=postgresql+psycopg://postgres@127.0.0.1:5432/postgres \\
    .venv/bin/python tests/benchmarks/bench_run_slots.py [--quick] [--plugins N] [slots...]
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

from sqlalchemy import select

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))

from almanac.platform.store.tables import runs as store_runs  # noqa: E402
from tests.benchmarks.bench_simulated_day import (  # noqa: E402
    most_at_once,
    overlapping_runs_of_one_plugin,
)
from tests.benchmarks.production import Daemons, production, register_hourly  # noqa: E402
from tests.orchestration.conftest import fresh_postgres_engine  # noqa: E402

START = datetime(2026, 6, 1, 0, 0, tzinfo=UTC)
DOWNLOAD_S = 1.0


def measure(slots: int, count: int) -> dict[str, Any]:
    work = Path(tempfile.mkdtemp(prefix="bench-slots-"))
    try:
        with fresh_postgres_engine("slots") as engine:
            return measure_on(work, engine, slots, count)
    finally:
        shutil.rmtree(work, ignore_errors=True)


def measure_on(work: Path, engine: Any, slots: int, count: int) -> dict[str, Any]:
    ids = [f"slot-{n:03d}" for n in range(count)]
    register_hourly(engine, work, ids, START - timedelta(minutes=1))
    end = START + timedelta(hours=1)
    with production(
        work,
        engine,
        ids,
        slots=slots,
        clock_at=START - timedelta(seconds=1),
        source_delay=DOWNLOAD_S,
    ) as made:
        began = time.perf_counter()
        with Daemons(made, START, end) as daemons:
            while not daemons.errors:
                if daemons.ticks and daemons.idle():
                    break
                time.sleep(0.1)
        if daemons.errors:
            raise daemons.errors[0]
        real_s = time.perf_counter() - began
    with engine.connect() as conn:
        rows = conn.execute(
            select(
                store_runs.c.plugin_id,
                store_runs.c.started_at,
                store_runs.c.ended_at,
                store_runs.c.outcome,
            ).where(store_runs.c.started_at >= START)
        ).all()
    assert len(rows) == count and {r.outcome for r in rows} == {"success"}, rows
    spans = [(r.started_at, r.ended_at, r.plugin_id) for r in rows]
    last_end = max(e for _, e, _ in spans)
    hour_s = (last_end - START).total_seconds()
    a_run_s = hour_s / count
    return {
        "slots": slots,
        "plugins": count,
        "hour_to_last_end_s": round(hour_s, 1),
        "run_median_s": round(statistics.median((e - s).total_seconds() for s, e, _ in spans), 2),
        "most_at_once": most_at_once(spans),
        "one_plugin_twice_at_once": overlapping_runs_of_one_plugin(spans),
        "seconds_a_run": round(a_run_s, 2),
        "runs_a_day": int(86400 / a_run_s),
        "real_s": round(real_s, 1),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("slots", type=int, nargs="*", default=[1, 2, 4])
    parser.add_argument("--plugins", type=int, default=24)
    parser.add_argument("--quick", action="store_true", help="8 plug-ins a size")
    args = parser.parse_args()
    count = 8 if args.quick else args.plugins
    os.environ.setdefault(
        "ALMANAC_TEST_DATABASE_URL", "postgresql+psycopg://postgres@127.0.0.1:5432/postgres"
    )
    rows = []
    for slots in args.slots:
        print(f"{slots} slot(s), {count} plug-ins due at once, downloads of {DOWNLOAD_S:g} s:")
        row = measure(slots, count)
        print(f"   {json.dumps(row)}", flush=True)
        rows.append(row)
    base = rows[0]
    print(f"\nruns a day with each run's download taking {DOWNLOAD_S:g} s (PostgreSQL)")
    print(f"{'slots':>6} {'hour to last end':>17} {'a run':>8} {'at once':>8} {'runs a day':>11}")
    for row in rows:
        print(
            f"{row['slots']:>6} {row['hour_to_last_end_s']:>15.1f} s {row['run_median_s']:>6.2f} s "
            f"{row['most_at_once']:>8} {row['runs_a_day']:>11,} "
            f"({row['runs_a_day'] / base['runs_a_day']:.2f}x {base['slots']} slot)"
        )
        assert row["most_at_once"] <= row["slots"] and row["one_plugin_twice_at_once"] == 0
    print(json.dumps({"download_s": DOWNLOAD_S, "sizes": rows}, sort_keys=True))


if __name__ == "__main__":
    main()
