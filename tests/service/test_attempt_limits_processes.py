"""The limits on repeated attempts hold across API processes: two uvicorn processes of
`almanac.service:api_app` on one store, attempts sent at once over new connections to both
(`inside_attempt_limits.py`, in a network namespace of its own so Check now's look-ups stay on
loopback), on a fresh PostgreSQL database and on the embedded SQLite default."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import ExitStack
from pathlib import Path

import pytest

from tests.service.namespace import Ahead, NamespaceRun, fresh_database_through_a_relay

HERE = Path(__file__).resolve().parent
INSIDE = HERE / "inside_attempt_limits.py"
ON_POSTGRESQL = "test_limits_hold_across_two_api_processes_on_postgresql"
ON_SQLITE = "test_limits_hold_across_two_api_processes_on_sqlite"


@pytest.fixture(scope="module")
def ahead(request: pytest.FixtureRequest, postgres_server_url: str) -> Iterator[Ahead]:
    """Both stores' API processes started at once (`namespace.Ahead`)."""

    def on_postgresql(stack: ExitStack) -> NamespaceRun:
        url = stack.enter_context(
            fresh_database_through_a_relay(postgres_server_url, "almanac_limits")
        )
        return NamespaceRun(INSIDE, {"LIMITS_DATABASE_URL": url}, timeout=600)

    def on_sqlite(_: ExitStack) -> NamespaceRun:
        return NamespaceRun(INSIDE, {}, timeout=600)

    with Ahead.of_module(request, {ON_POSTGRESQL: on_postgresql, ON_SQLITE: on_sqlite}) as runs:
        yield runs


def _passed(ahead: Ahead, test: str) -> None:
    done = ahead.result(test)
    assert done.returncode == 0, done.stdout[-20000:] + done.stderr[-5000:]


def test_limits_hold_across_two_api_processes_on_postgresql(ahead: Ahead) -> None:
    _passed(ahead, ON_POSTGRESQL)


def test_limits_hold_across_two_api_processes_on_sqlite(ahead: Ahead) -> None:
    _passed(ahead, ON_SQLITE)
