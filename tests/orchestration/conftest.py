"""Orchestration tests: the store on the embedded SQLite default (copied from a migrated
template) unless a test asks for PostgreSQL, a source server, and the harness."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path

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


@pytest.fixture(scope="session")
def migrated_postgres(postgres_url: str) -> str:
    upgrade_database(postgres_url)
    return postgres_url


@pytest.fixture
def postgres_engine(migrated_postgres: str) -> Iterator[Engine]:
    engine = make_engine(migrated_postgres)
    yield engine
    engine.dispose()
