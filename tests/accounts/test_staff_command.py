"""`almanac staff grant` on a store it cannot use names the store it tried and the cause, in the
database's own words, and says what to do."""

from __future__ import annotations

import secrets
import sqlite3
from collections.abc import Iterator
from pathlib import Path

import psycopg
import pytest
from sqlalchemy import make_url

from almanac.cli import main


@pytest.fixture
def embedded_default(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """No settings but a data folder of the test's own: the store is the embedded default."""
    monkeypatch.delenv("ALMANAC_DATABASE_URL", raising=False)
    monkeypatch.setenv("ALMANAC_HOME", str(tmp_path / "home"))
    return tmp_path / "home" / "almanac.db"


@pytest.fixture
def empty_postgres_database(postgres_server_url: str) -> Iterator[str]:
    """A database with no tables on the test server (a store never migrated)."""
    plain = make_url(postgres_server_url).set(drivername="postgresql").render_as_string(False)
    name = f"almanac_empty_{secrets.token_hex(4)}"
    with psycopg.connect(plain, autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}"')
    yield make_url(postgres_server_url).set(database=name).render_as_string(False)
    with psycopg.connect(plain, autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def test_without_settings_or_a_store_it_names_the_default_file_and_creates_nothing(
    embedded_default: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["staff", "grant", "ada@example.org", "operator"]) == 1
    err = capsys.readouterr().err
    assert f"there is no store yet at {embedded_default}" in err
    assert "the embedded default; ALMANAC_DATABASE_URL names another store" in err
    assert "run `almanac up` once" in err
    assert "OperationalError" not in err
    assert not embedded_default.exists(), "no empty store is left behind"


def test_a_store_without_tables_is_named_with_the_databases_words(
    embedded_default: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    embedded_default.parent.mkdir(parents=True)
    sqlite3.connect(embedded_default).close()
    assert main(["staff", "grant", "ada@example.org", "operator"]) == 1
    err = capsys.readouterr().err
    assert f"could not use the store at sqlite:///{embedded_default} (the embedded default" in err
    assert "no such table: accounts; the store has no tables yet: run `almanac up` once" in err


def test_a_postgresql_store_is_named_without_its_password(
    postgres_server_url: str,
    empty_postgres_database: str,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    missing = make_url(postgres_server_url).set(password="s3cret-pw", database="almanac_nowhere")
    monkeypatch.setenv("ALMANAC_DATABASE_URL", missing.render_as_string(hide_password=False))
    assert main(["staff", "grant", "ada@example.org", "operator"]) == 1
    err = capsys.readouterr().err
    assert f"could not use the store at {missing.render_as_string()} (ALMANAC_DATABASE_URL)" in err
    assert 'database "almanac_nowhere" does not exist' in err
    assert "s3cret-pw" not in err

    monkeypatch.setenv("ALMANAC_DATABASE_URL", empty_postgres_database)
    assert main(["staff", "grant", "ada@example.org", "operator"]) == 1
    err = capsys.readouterr().err
    assert 'relation "accounts" does not exist; the store has no tables yet' in err
