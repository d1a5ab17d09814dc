"""Almanac on five machines of this one (issue 34; `machines.py` draws them), each failing in
turn while readers ask through HAProxy: the tests are in `inside_topology.py`, run in a network
and mount namespace of their own, and share one topology. The figures they print (requests
sent and failed, the longest gap, the store before and after) are printed here."""

from __future__ import annotations

from pathlib import Path

from tests.service.namespace import run_module_in_namespace

INSIDE = Path(__file__).resolve().parent / "inside_topology.py"
FIGURES = ("built: ", "Dagster machine ", "api1 ", "PostgreSQL ", "  readers: ", "  store ")


def test_the_topology_keeps_answering_readers_while_each_machine_fails() -> None:
    done = run_module_in_namespace(INSIDE, {}, timeout=1500)
    for line in done.stdout.splitlines():
        if line.lstrip(".").startswith(FIGURES):
            print(line.lstrip("."))
    assert done.returncode == 0, done.stdout[-20000:] + done.stderr[-5000:]
