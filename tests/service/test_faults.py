"""The real `almanac up` under faults (issue 31), each in a network namespace of its own (see
`namespace.py`; the tests themselves are in `inside_up_faults.py`): every PostgreSQL backend
terminated while a run writes its batch, and the embedded default's disk full while a run
writes. The figures the inside tests print (time to the run's one outcome, time to the next
run) are printed here."""

from __future__ import annotations

import subprocess
from collections.abc import Iterator
from contextlib import ExitStack
from pathlib import Path

import pytest

from tests.service.namespace import Ahead, NamespaceRun, fresh_database_through_a_relay

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


TERMINATED = "test_almanac_up_on_postgresql_keeps_one_outcome_when_every_backend_is_terminated"
DISK_FULL = "test_almanac_up_on_its_embedded_default_keeps_one_outcome_when_its_disk_fills"


@pytest.fixture(scope="module")
def ahead(request: pytest.FixtureRequest, postgres_server_url: str) -> Iterator[Ahead]:
    """Both faults' services started at once (`namespace.Ahead`): each mostly waits on its
    runs and its sensors' ticks."""

    def terminated(stack: ExitStack) -> NamespaceRun:
        url = stack.enter_context(
            fresh_database_through_a_relay(postgres_server_url, "almanac_faults")
        )
        return NamespaceRun(
            INSIDE,
            {"UP_DATABASE_URL": url},
            timeout=1500,
            test="test_terminating_every_backend_while_a_run_writes_keeps_one_outcome",
        )

    def disk_full(_: ExitStack) -> NamespaceRun:
        return NamespaceRun(
            INSIDE,
            {},
            timeout=1500,
            test="test_a_full_disk_while_a_run_writes_keeps_one_outcome_on_the_embedded_default",
        )

    with Ahead.of_module(request, {TERMINATED: terminated, DISK_FULL: disk_full}) as started:
        yield started


def test_almanac_up_on_postgresql_keeps_one_outcome_when_every_backend_is_terminated(
    ahead: Ahead,
) -> None:
    _passed(ahead.result(TERMINATED))


def test_almanac_up_on_its_embedded_default_keeps_one_outcome_when_its_disk_fills(
    ahead: Ahead,
) -> None:
    _passed(ahead.result(DISK_FULL))
