"""Shared fixtures. PostgreSQL is real: ALMANAC_TEST_DATABASE_URL names a server (scripts/test.sh
finds or starts one); each test session gets its own fresh database, dropped at the end."""

from __future__ import annotations

import os
import secrets
from collections.abc import Iterator
from pathlib import Path

import psycopg
import pytest

REPO = Path(__file__).resolve().parent.parent
SHARED_DATA = REPO.parent / "shared" / "data"
CONFORMANCE = REPO / "tests" / "conformance"


def _server_url() -> str:
    url = os.environ.get("ALMANAC_TEST_DATABASE_URL")
    if not url:
        pytest.fail(
            "ALMANAC_TEST_DATABASE_URL is not set: run the tests through scripts/test.sh, "
            "which finds or starts a PostgreSQL server (PostgreSQL tests are never skipped)"
        )
    return url


@pytest.fixture(scope="session")
def postgres_server_url() -> str:
    """SQLAlchemy URL of the test PostgreSQL server's maintenance database, for tests that make
    databases of their own."""
    return _server_url()


@pytest.fixture(scope="session")
def postgres_url() -> Iterator[str]:
    """SQLAlchemy URL of a fresh PostgreSQL database for this test session."""
    server = _server_url()
    plain = server.replace("+psycopg", "")
    name = f"almanac_test_{os.getpid()}_{secrets.token_hex(3)}"
    with psycopg.connect(plain, autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}"')
    base, _, _ = server.rpartition("/")
    yield f"{base}/{name}"
    with psycopg.connect(plain, autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


@pytest.fixture
def sqlite_url(tmp_path: Path) -> str:
    """SQLAlchemy URL of a fresh embedded SQLite file."""
    return f"sqlite:///{tmp_path / 'almanac.db'}"


@pytest.fixture
def node() -> Path:
    from almanac.node import node_binary

    return node_binary()


@pytest.fixture(params=["postgresql", "sqlite"])
def empty_url(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    """URL of an empty database, PostgreSQL and then SQLite, for tests of the migrations."""
    if request.param == "sqlite":
        yield f"sqlite:///{tmp_path / 'empty.db'}"
        return
    session_url = request.getfixturevalue("postgres_url")
    base, _, name = session_url.rpartition("/")
    plain = f"{base}/postgres".replace("+psycopg", "")
    empty = f"{name}_empty"
    with psycopg.connect(plain, autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{empty}"')
        conn.execute(f'CREATE DATABASE "{empty}"')
    yield f"{base}/{empty}"
    with psycopg.connect(plain, autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{empty}" WITH (FORCE)')
