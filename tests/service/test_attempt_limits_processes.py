"""The limits on repeated attempts hold across API processes: two uvicorn processes of
`almanac.service:api_app` on one store, attempts sent at once over new connections to both
(`inside_attempt_limits.py`, in a network namespace of its own so Check now's look-ups stay on
loopback), on a fresh PostgreSQL database and on the embedded SQLite default."""

from __future__ import annotations

import secrets
from pathlib import Path

from tests.service.namespace import (
    PostgresRelay,
    fresh_database,
    run_module_in_namespace,
    server_address,
)

HERE = Path(__file__).resolve().parent
INSIDE = HERE / "inside_attempt_limits.py"


def _passed(done) -> None:  # type: ignore[no-untyped-def]
    assert done.returncode == 0, done.stdout[-20000:] + done.stderr[-5000:]


def test_limits_hold_across_two_api_processes_on_postgresql(postgres_server_url: str) -> None:
    name = f"almanac_limits_{secrets.token_hex(4)}"
    with (
        fresh_database(postgres_server_url, name),
        PostgresRelay(server_address(postgres_server_url)) as relay,
    ):
        url = f"postgresql+psycopg://postgres@/{name}?host={relay.folder}"
        done = run_module_in_namespace(INSIDE, {"LIMITS_DATABASE_URL": url}, timeout=600)
    _passed(done)


def test_limits_hold_across_two_api_processes_on_sqlite() -> None:
    _passed(run_module_in_namespace(INSIDE, {}, timeout=600))
