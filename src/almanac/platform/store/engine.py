"""Engines, transactions and migrations for PostgreSQL and the embedded SQLite default.

Writers never interleave: on PostgreSQL the write locks the plug-in row (SELECT ... FOR UPDATE);
on SQLite every transaction that may write starts with BEGIN IMMEDIATE, which takes the
database's one write lock at once, so a second writer waits (busy timeout, `BUSY_SECONDS`) until
the first commits or rolls back. A deferred transaction that reads first and writes later would
fail at once instead of waiting whenever another connection committed in between (SQLite's
SQLITE_BUSY_SNAPSHOT in WAL mode, which no busy timeout covers): so nothing that may write
begins deferred. Read-only transactions begin deferred and never wait for a writer; on
PostgreSQL a session that only reads runs each statement on its own (`reading`).
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
BUSY_SECONDS = 60
"""How long a transaction that may write waits for the embedded default's write lock."""


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
        cursor.execute(f"PRAGMA busy_timeout={BUSY_SECONDS * 1000}")
        cursor.execute("PRAGMA journal_mode=WAL")
        cursor.close()

    @event.listens_for(engine, "begin")
    def _on_begin(connection: Connection) -> None:
        immediate = connection.get_execution_options().get(_IMMEDIATE, False)
        connection.exec_driver_sql("BEGIN IMMEDIATE" if immediate else "BEGIN")

    return engine


def writing(engine: Engine) -> Engine:
    """The engine for transactions that may write: on SQLite each begins with BEGIN IMMEDIATE
    (the same engine and pool; on PostgreSQL the engine itself)."""
    if engine.dialect.name != "sqlite":
        return engine
    return engine.execution_options(**{_IMMEDIATE: True})


def reading(engine: Engine) -> Engine:
    """The engine for sessions that only read: on PostgreSQL each statement on its own
    (autocommit), since under READ COMMITTED each statement of a transaction sees its own
    snapshot anyway and a BEGIN and a ROLLBACK would only add two round trips; on SQLite the
    engine itself (a deferred transaction, one snapshot)."""
    if engine.dialect.name != "postgresql":
        return engine
    return engine.execution_options(isolation_level="AUTOCOMMIT")


@contextmanager
def write_transaction(engine: Engine) -> Iterator[Connection]:
    """One transaction for changing the store: committed when the block ends, rolled back
    entirely when it raises."""
    with writing(engine).connect() as connection, connection.begin():
        yield connection


def alembic_config(url: str) -> Config:
    """Alembic configuration built in code; migrations live inside the package."""
    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS))
    config.set_main_option("sqlalchemy.url", url.replace("%", "%%"))
    return config


def unapplied_migrations(url: str) -> tuple[str, ...]:
    """The heads of the migration chain the database at `url` has not reached (empty when it
    is at the newest schema; every head on an empty database)."""
    from alembic.runtime.migration import MigrationContext
    from alembic.script import ScriptDirectory

    heads = ScriptDirectory.from_config(alembic_config(url)).get_heads()
    engine = make_engine(url)
    try:
        with engine.connect() as connection:
            current = set(MigrationContext.configure(connection).get_current_heads())
    finally:
        engine.dispose()
    return tuple(sorted(head for head in heads if head not in current))


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
