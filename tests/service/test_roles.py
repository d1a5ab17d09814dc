"""The roles of `almanac up` through the real command (issue 34): `--only` refused on the embedded
default with its reason, a role refused on a store `almanac migrate` has not migrated, and the
API role alone once it has. The roles on machines of their own, Dagster's too, are tested in
`tests/topology/test_topology.py`."""

from __future__ import annotations

import secrets
import socket
import time
from pathlib import Path

import httpx
import psycopg
import pytest

from tests.service.namespace import fresh_database
from tests.service.up import START_SECONDS, almanac, almanac_up, wait_for


@pytest.mark.parametrize("role", ["api", "dagster"])
def test_only_is_refused_on_the_embedded_default_with_its_reason(role: str, tmp_path: Path) -> None:
    home = tmp_path / "home"
    done = almanac("up", "--only", role, home=home)
    assert done.returncode == 2, done.stdout + done.stderr
    assert f"--only {role}: the embedded default (SQLite" in done.stderr
    assert "set ALMANAC_DATABASE_URL to a PostgreSQL database" in done.stderr
    assert not home.exists(), "nothing is made before the refusal"


def _tables(url: str) -> set[str]:
    with psycopg.connect(url.replace("+psycopg", "")) as conn:
        rows = conn.execute(
            "SELECT table_schema || '.' || table_name FROM information_schema.tables"
            " WHERE table_schema IN ('public', 'dagster')"
        ).fetchall()
    return {row[0] for row in rows}


def _listening(port: int) -> bool:
    with socket.socket() as sock:
        return sock.connect_ex(("127.0.0.1", port)) == 0


def test_a_role_waits_for_almanac_migrate_which_runs_once_then_the_api_starts_alone(
    postgres_server_url: str, tmp_path: Path
) -> None:
    name = f"almanac_roles_{secrets.token_hex(4)}"
    with fresh_database(postgres_server_url, name):
        base, _, _ = postgres_server_url.rpartition("/")
        url = f"{base}/{name}"
        refused = almanac("up", "--only", "api", home=tmp_path / "api", database_url=url)
        assert refused.returncode == 1, refused.stdout + refused.stderr
        assert "run `almanac migrate` once first" in refused.stderr
        assert _tables(url) == set(), "a refused role changes nothing in the store"

        first = almanac("migrate", home=tmp_path / "migrate", database_url=url)
        assert first.returncode == 0, first.stdout + first.stderr
        assert first.stdout.count("approved at first start") == 5, first.stdout
        tables = _tables(url)
        assert {"public.alembic_version", "public.plugins", "dagster.runs"} <= tables
        again = almanac("migrate", home=tmp_path / "migrate", database_url=url)
        assert again.returncode == 0, again.stdout + again.stderr
        assert "approved at first start" not in again.stdout, "the examples are approved once"

        with almanac_up(tmp_path / "api", url, ("--only", "api")) as up:
            health = wait_for(f"{up.api}/health", time.monotonic() + START_SECONDS, up).json()
            assert health["parts"] == {"api": "running"}, health
            assert health["status"] == "ok", health
            feed = httpx.get(f"{up.api}/api/v1/feeds/plugins/uk-bank-holidays.ics", timeout=30)
            assert feed.status_code == 200, feed.text
            assert feed.text.startswith("BEGIN:VCALENDAR"), feed.text[:200]
            assert not _listening(int(up.ui.rsplit(":", 1)[1])), "no Dagster webserver here"
            assert not (tmp_path / "api" / "dagster" / "dagster.yaml").exists()
            output = up.stop()
        assert "Almanac's api role is starting" in output
        assert "Dagster UI" not in output
