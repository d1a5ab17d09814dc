"""The limits on repeated attempts hold across API processes: two uvicorn processes of
`almanac.service:api_app` on one store, attempts sent at once over new connections to both
(`inside_attempt_limits.py`, in a network namespace of its own so Check now's look-ups stay on
loopback), on a fresh PostgreSQL database and on the embedded SQLite default."""

from __future__ import annotations

from pathlib import Path

from tests.service.namespace import fresh_database_through_a_relay, run_module_in_namespace

HERE = Path(__file__).resolve().parent
INSIDE = HERE / "inside_attempt_limits.py"


def _passed(done) -> None:  # type: ignore[no-untyped-def]
    assert done.returncode == 0, done.stdout[-20000:] + done.stderr[-5000:]


def test_limits_hold_across_two_api_processes_on_postgresql(postgres_server_url: str) -> None:
    with fresh_database_through_a_relay(postgres_server_url, "almanac_limits") as url:
        done = run_module_in_namespace(INSIDE, {"LIMITS_DATABASE_URL": url}, timeout=600)
    _passed(done)


def test_limits_hold_across_two_api_processes_on_sqlite() -> None:
    _passed(run_module_in_namespace(INSIDE, {}, timeout=600))
