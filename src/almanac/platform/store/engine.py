"""Engines, transactions and migrations for PostgreSQL and the embedded SQLite default.

Writers never interleave: on PostgreSQL the write locks the plug-in row (SELECT ... FOR UPDATE);
on SQLite every write transaction starts with BEGIN IMMEDIATE, which takes the database's one
write lock at once, so a second writer waits (busy timeout) until the first commits or rolls back.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from alembic import command
from alembic.config import Config
from sqlalchemy import Connection, Engine, create_engine, event

MIGRATIONS = Path(__file__).resolve().parent / "migrations"
_IMMEDIATE = "almanac_sqlite_immediate"


def make_engine(url: str) -> Engine:
    """An engine for `url`; on SQLite with foreign keys on, WAL, a busy timeout, and explicit
    BEGIN (IMMEDIATE for write transactions)."""
    if not url.startswith("sqlite"):
        return create_engine(url, pool_pre_ping=True)
    engine = create_engine(url)

    @event.listens_for(engine, "connect")
    def _on_connect(dbapi_connection, _record) -> None:  # type: ignore[no-untyped-def]
        # The driver's own implicit BEGIN is switched off so that ours below is the only one.
        dbapi_connection.isolation_level = None
        cursor = dbapi_connection.cursor()
        cursor.execute("PRAGMA foreign_keys=ON")
        cursor.execute("PRAGMA busy_timeout=60000")
        cursor.execute("PRAGMA journal_mode=WAL")
        cursor.close()

    @event.listens_for(engine, "begin")
    def _on_begin(connection: Connection) -> None:
        immediate = connection.get_execution_options().get(_IMMEDIATE, False)
        connection.exec_driver_sql("BEGIN IMMEDIATE" if immediate else "BEGIN")

    return engine


@contextmanager
def write_transaction(engine: Engine) -> Iterator[Connection]:
    """One transaction for changing the store: committed when the block ends, rolled back
    entirely when it raises."""
    with engine.connect() as connection:
        if engine.dialect.name == "sqlite":
            connection = connection.execution_options(**{_IMMEDIATE: True})
        with connection.begin():
            yield connection


def alembic_config(url: str) -> Config:
    """Alembic configuration built in code; migrations live inside the package."""
    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS))
    config.set_main_option("sqlalchemy.url", url.replace("%", "%%"))
    return config


def upgrade_database(url: str) -> None:
    """Bring the database at `url` to the newest schema (every head of the migration chain)."""
    engine = make_engine(url)
    try:
        with engine.begin() as connection:
            config = alembic_config(url)
            config.attributes["connection"] = connection
            command.upgrade(config, "heads")
    finally:
        engine.dispose()
