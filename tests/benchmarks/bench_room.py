"""What the locked room costs: median wall time of Node bare and in the room, measured in the
same run on this machine.

    .venv/bin/python tests/benchmarks/bench_room.py [runs]

Goals: the room adds at most 30 ms to an empty Node program, and at most 1.25x to a realistic
fetcher (a 5 MB source read, 100,000 records printed).
"""

from __future__ import annotations

import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from almanac.node import node_binary
from almanac.sandbox.limits import RoomLimits
from almanac.sandbox.room import LockedRoom

REALISTIC = b"""import fs from 'node:fs';
const context = JSON.parse(fs.readFileSync(0, 'utf8'));
const text = fs.readFileSync(context.sources.rates, 'utf8');
const out = [];
let count = 0;
for (const line of text.split('\\n')) {
  if (!line || count >= 100000) continue;
  const [date, rate, note] = line.split(',');
  out.push(JSON.stringify({ series: 'rate', date, value: { rate: Number(rate) }, note }));
  if (out.length === 5000) { fs.writeSync(1, out.join('\\n') + '\\n'); out.length = 0; }
  count++;
}
if (out.length) fs.writeSync(1, out.join('\\n') + '\\n');
"""


def _interleaved(runs: int, actions: dict[str, Callable[[], object]]) -> dict[str, tuple]:
    """Median wall and child CPU milliseconds of each action, run in turn within each round so
    that load from other work on the machine falls on all of them alike."""
    for action in actions.values():
        action()  # warm the caches (page cache, ldd, Node's version, the seccomp program)
    wall: dict[str, list[float]] = {name: [] for name in actions}
    cpu: dict[str, list[float]] = {name: [] for name in actions}
    for _ in range(runs):
        for name, action in actions.items():
            before = resource.getrusage(resource.RUSAGE_CHILDREN)
            began = time.perf_counter()
            action()
            wall[name].append((time.perf_counter() - began) * 1000)
            after = resource.getrusage(resource.RUSAGE_CHILDREN)
            used = after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime
            cpu[name].append(used * 1000)
    return {
        name: (statistics.median(wall[name]), statistics.median(cpu[name]), min(wall[name]))
        for name in actions
    }


def main(runs: int = 15) -> None:
    node = str(node_binary())
    room = LockedRoom()
    limits = RoomLimits()
    folder = Path(tempfile.mkdtemp(prefix="bench-room-"))
    folder.chmod(0o755)
    try:
        source = folder / "rates"
        row = "2026-11-21,58.9712,reference rate of the day {:06d}\n"
        with source.open("w") as handle:
            written = 0
            i = 0
            while written < 5 * 1024 * 1024:
                line = row.format(i)
                handle.write(line)
                written += len(line)
                i += 1
        fetcher = folder / "fetch.mjs"
        fetcher.write_bytes(REALISTIC)
        context = {"contract": 1, "plugin": "bench", "today": "2026-11-21"}
        bare_context = json.dumps({**context, "sources": {"rates": str(source)}}).encode()

        def bare_empty() -> None:
            subprocess.run([node, "-e", "0"], check=True, env={})

        def room_empty() -> None:
            result = room.run({"fetch.mjs": b""}, {}, context, limits)
            assert result.ok, result.reason

        def bare_realistic() -> None:
            done = subprocess.run(
                [node, str(fetcher)], input=bare_context, capture_output=True, check=True, env={}
            )
            assert done.stdout.count(b"\n") == 100_000

        def room_realistic() -> None:
            result = room.run({"fetch.mjs": REALISTIC}, {"rates": source}, context, limits)
            assert result.ok, result.reason
            assert len(result.lines()) == 100_000

        empty = _interleaved(
            runs, {"node -e 0, bare": bare_empty, "empty fetcher, room": room_empty}
        )
        realistic = _interleaved(
            runs,
            {
                "5 MB / 100,000 records, bare": bare_realistic,
                "5 MB / 100,000 records, room": room_realistic,
            },
        )
        phases: list[tuple[float, float, float]] = []
        for _ in range(runs):
            began = time.perf_counter()
            result = room.run({"fetch.mjs": b""}, {}, context, limits)
            total = (time.perf_counter() - began) * 1000
            setup, inside = result.setup_seconds * 1000, result.wall_seconds * 1000
            phases.append((setup, inside, total - setup - inside))
    finally:
        shutil.rmtree(folder)

    figures = {**empty, **realistic}
    print(f"median of {runs} interleaved runs each (ms): wall, CPU of the child processes, best")
    for name, (wall, cpu, best) in figures.items():
        print(f"  {name:34} {wall:8.1f} {cpu:8.1f} {best:8.1f}")
    print("empty fetcher in the room, by phase (median ms):")
    for index, phase in enumerate(
        ("set-up: copy, group, bubblewrap, namespaces, join the group", "Node runs", "tear-down")
    ):
        print(f"  {phase:60} {statistics.median(p[index] for p in phases):6.1f}")
    added = figures["empty fetcher, room"][0] - figures["node -e 0, bare"][0]
    ratio = figures["5 MB / 100,000 records, room"][0] / figures["5 MB / 100,000 records, bare"][0]
    print(f"room adds to an empty program: {added:.1f} ms (goal at most 30 ms)")
    print(f"realistic fetcher, room / bare: {ratio:.2f}x (goal at most 1.25x)")
    print(f"load average while measuring: {os.getloadavg()[0]:.2f} on {os.cpu_count()} cores")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 15)
