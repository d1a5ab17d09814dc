"""Benchmark of the topology (issue 34, `tests/topology/machines.py`): readers' throughput
through HAProxy with one API machine and with two, in the same run, and their ratio.

The topology is built as `scripts/topology.sh` builds it; the Dagster machine is then stopped
(readers never reach it, and its daemon's loops would take a core from the machines measured).
A reader showing 10 plug-ins with their fixture records reads 62 days (`bench_reader_days.py`'s
read) through HAProxy with wrk, `BENCH_CONNECTIONS` (8) at once for `BENCH_DURATION` (10) s a
phase: both API machines, api2 put in maintenance on HAProxy's socket, both again, one again
(the median of each pair is the figure), and api1 straight, without HAProxy, as the baseline.
Every machine shares this box's 2 cores: the ratio says what a second machine adds here, not
what it adds on a machine of its own.

`--failures` runs the failure tests (`tests/topology/inside_topology.py`) as the longer
variant: `TOPOLOGY_CUT_SECONDS` (120 here) for the network cut, and prints their figures.

Run as root: .venv/bin/python tests/benchmarks/bench_topology.py [--failures]
Not collected by pytest (bench_*.py). The last line is one JSON object of the figures.
"""

from __future__ import annotations

import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from urllib.parse import urlencode

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from almanac.platform.store.engine import make_engine  # noqa: E402
from tests.benchmarks.bench_reader_days import (  # noqa: E402
    DURATION,
    PARAMS,
    WRK_SCRIPT,
    check_answer,
    fill,
    wrk,
)
from tests.topology.machines import MARKER, Topology  # noqa: E402
from tests.topology.test_topology import FIGURES  # noqa: E402

CONNECTIONS = int(os.environ.get("BENCH_CONNECTIONS", "8"))
FAILURES = ROOT / "tests" / "topology" / "inside_topology.py"


def _in_namespace() -> int:
    """This benchmark again, in a network and mount namespace of its own."""
    command = ["unshare", "--net", "--mount", "--propagation", "private", sys.executable,
               str(Path(__file__).resolve()), *sys.argv[1:]]  # fmt: skip
    return subprocess.run(command, env={**os.environ, MARKER: "1"}, cwd=ROOT).returncode


def _phase(top: Topology, url: str, script: Path, both: bool) -> tuple[float, float, float]:
    """HAProxy with both API machines or api1 alone, then wrk: reads a second, p50, p95."""
    top.haproxy(f"{'enable' if both else 'disable'} server api/api2")
    expected = {"api1": "UP", "api2": "UP" if both else "MAINT"}
    top.wait_until("HAProxy's servers", lambda: top.server_states() == expected)
    p50, p95, _, rate = wrk(url, script, CONNECTIONS)
    return rate, p50, p95


def throughput(work: Path) -> dict[str, float]:
    top = Topology(work)
    try:
        for step, seconds in top.build().items():
            print(f"{step}: {seconds:.1f} s", flush=True)
        top["dagster"].kill()
        engine = make_engine(top.database_url)
        cookie, total = fill(engine)
        engine.dispose()
        script = work / "days.lua"
        script.write_text(WRK_SCRIPT % {"cookie": cookie})
        query = urlencode(PARAMS)
        print(f"{total} records of 10 plug-ins; 62-day read, {CONNECTIONS} connections, "
              f"{DURATION} s a phase", flush=True)  # fmt: skip
        for base in (top.lb, top.api("api1"), top.api("api2")):
            check_answer(base, cookie)
        # Untimed: every worker's pool and caches warm before the first timed phase.
        wrk(f"{top.lb}/api/v1/reader/days?{query}", script, CONNECTIONS)
        phases: dict[str, list[tuple[float, float, float]]] = {"two": [], "one": []}
        for both in (True, False, True, False):
            measured = _phase(top, f"{top.lb}/api/v1/reader/days?{query}", script, both)
            phases["two" if both else "one"].append(measured)
            rate, p50, p95 = measured
            print(f"  {'two API machines' if both else 'one API machine '}: {rate:7.1f} reads/s, "
                  f"p50 {p50 * 1000:.1f} ms, p95 {p95 * 1000:.1f} ms", flush=True)  # fmt: skip
        top.haproxy("enable server api/api2")
        p50, p95, _, straight = wrk(f"{top.api('api1')}/api/v1/reader/days?{query}", script, 8)
        print(f"  api1 straight (no HAProxy): {straight:7.1f} reads/s, p50 {p50 * 1000:.1f} ms, "
              f"p95 {p95 * 1000:.1f} ms")  # fmt: skip
        one = statistics.median(r for r, _, _ in phases["one"])
        two = statistics.median(r for r, _, _ in phases["two"])
        print(f"two machines / one: {two / one:.2f}x ({two:.1f} vs {one:.1f} reads/s); "
              f"HAProxy with one machine / api1 straight: {one / straight:.2f}x")  # fmt: skip
        return {"one": one, "two": two, "ratio": two / one, "straight": straight}
    finally:
        top.teardown()


def failures() -> int:
    """The failure tests with a longer network cut; their figures printed."""
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q", "-s", str(FAILURES)],
        cwd=ROOT,
        env={**os.environ, "ALMANAC_TEST_INSIDE_NAMESPACE": "1",
             "TOPOLOGY_CUT_SECONDS": os.environ.get("TOPOLOGY_CUT_SECONDS", "120")},
        capture_output=True,
        text=True,
    )  # fmt: skip
    for line in done.stdout.splitlines():
        if line.lstrip(".").startswith(FIGURES):
            print(line.lstrip("."))
    print(done.stdout.splitlines()[-1] if done.stdout else done.stderr[-3000:])
    return done.returncode


def main() -> int:
    if os.environ.get(MARKER) != "1":
        return _in_namespace()
    if "--failures" in sys.argv[1:]:
        return failures()
    work = Path(tempfile.mkdtemp(prefix="almanac-bench-topology-"))
    try:
        began = time.monotonic()
        figures = throughput(work)
        figures["seconds"] = time.monotonic() - began
        print(json.dumps(figures))
        return 0
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
