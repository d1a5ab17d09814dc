"""The real `almanac up` under faults (issue 31), each in a network namespace of its own (see
`namespace.py`; the tests themselves are in `inside_up_faults.py`): every PostgreSQL backend
terminated while a run writes its batch, and the embedded default's disk full while a run
writes. The figures the inside tests print (time to the run's one outcome, time to the next
run) are printed here."""

from __future__ import annotations

import subprocess
from pathlib import Path

from tests.service.namespace import fresh_database_through_a_relay, run_module_in_namespace

INSIDE = Path(__file__).resolve().parent / "inside_up_faults.py"
FIGURES = (
    "terminated ",
    "home: ",
    "the run's outcome kept ",
    "the disk freed ",
    "the Dagster run ",
    "after the run-failure sensor's next tick ",
    "next run: ",
    "readers answered ",
)
"""How the lines the inside tests print with their figures begin."""


def _passed(done: subprocess.CompletedProcess[str]) -> None:
    for line in done.stdout.splitlines():
        if line.lstrip(".").startswith(FIGURES):
            print(line.lstrip("."))
    assert done.returncode == 0, done.stdout[-20000:] + done.stderr[-5000:]


def test_almanac_up_on_postgresql_keeps_one_outcome_when_every_backend_is_terminated(
    postgres_server_url: str,
) -> None:
    with fresh_database_through_a_relay(postgres_server_url, "almanac_faults") as url:
        done = run_module_in_namespace(
            INSIDE,
            {"UP_DATABASE_URL": url},
            timeout=1500,
            test="test_terminating_every_backend_while_a_run_writes_keeps_one_outcome",
        )
    _passed(done)


def test_almanac_up_on_its_embedded_default_keeps_one_outcome_when_its_disk_fills() -> None:
    _passed(
        run_module_in_namespace(
            INSIDE,
            {},
            timeout=1500,
            test="test_a_full_disk_while_a_run_writes_keeps_one_outcome_on_the_embedded_default",
        )
    )
