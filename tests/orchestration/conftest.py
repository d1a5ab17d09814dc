"""Orchestration tests: the store on the embedded SQLite default (copied from a migrated
template) unless a test asks for PostgreSQL, a source server, and the harness."""

from __future__ import annotations

import os
import secrets
import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import psycopg
import pytest
from sqlalchemy import Engine

from almanac.platform.store.engine import make_engine, upgrade_database


@pytest.fixture(scope="session")
def sqlite_store_template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("store-template") / "almanac.db"
    upgrade_database(f"sqlite:///{path}")
    return path


@pytest.fixture
def sqlite_engine(sqlite_store_template: Path, tmp_path: Path) -> Iterator[Engine]:
    path = tmp_path / "almanac.db"
    shutil.copy(sqlite_store_template, path)
    engine = make_engine(f"sqlite:///{path}")
    yield engine
    engine.dispose()


@contextmanager
def fresh_postgres_engine(label: str) -> Iterator[Engine]:
    """A PostgreSQL database of its own, made by the migrations and dropped afterwards: the
    catalog an orchestrator loads holds only what the test registers, never plug-ins other
    tests left in the session's shared database."""
    server = os.environ.get("ALMANAC_TEST_DATABASE_URL")
    if not server:
        pytest.fail("ALMANAC_TEST_DATABASE_URL is not set (run the tests through scripts/test.sh)")
    plain = server.replace("+psycopg", "")
    name = f"almanac_{label}_{os.getpid()}_{secrets.token_hex(3)}"
    with psycopg.connect(plain, autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}"')
    url = f"{server.rpartition('/')[0]}/{name}"
    try:
        upgrade_database(url)
        engine = make_engine(url)
        try:
            yield engine
        finally:
            engine.dispose()
    finally:
        with psycopg.connect(plain, autocommit=True) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


@pytest.fixture
def postgres_engine() -> Iterator[Engine]:
    with fresh_postgres_engine("orchestration") as engine:
        yield engine
