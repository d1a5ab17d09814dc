"""Dagster's storage on PostgreSQL for `almanac up` (issue 19): dagster-postgres, with each of
its three storages keeping its connections between calls and reading its schema once.

dagster-postgres opens a new connection for every storage call outside the webserver (a
`NullPool`): some 400 connections for one sensor tick that creates a run, and about 2 ms each
on loopback, more than the run itself. The webserver keeps one connection per storage
(`optimize_for_webserver`); this class does the same in every process (the daemon, each run
worker), with no statement timeout, as Dagster's own storage has outside the webserver. Each
process keeps at most `POOL_SIZE` idle connections per storage, as many as its threads used at
once (one in a run worker; the sensor daemon submits runs in threads). Nothing else changes:
the same tables, the same configuration (`pg_config`), and run workers get this class through
their instance's reference.

A kept connection outlives the server's side of it when PostgreSQL restarts or a backend is
terminated (issue 31): each checkout first looks whether the server hung up on it (its socket
readable while idle: PostgreSQL writes to an idle connection only to say it ends it) and
replaces it then, so the webserver, the daemon and the run workers go on without a restart.
The look is a `select()`, not a round trip: a ping at each checkout (`pool_pre_ping`) was 17 of
the 37 round trips of one run's submission (issue 33). dagster-postgres' `optimize_for_webserver`
takes no such option, so the engines are made here with its arguments and that one more: in the
webserver too, whose own `optimize_for_webserver` would otherwise swap in engines without it and
answer 500 to the first request after a PostgreSQL restart (found by the topology's test, issue
34).

dagster-postgres asked PostgreSQL's catalog whether its tables have Dagster's newer columns on
every read of a run, every run event and every asset event (three catalog statements each
time; it caches its other schema questions): 7 of the 27 statements of one run's submission.
The storages here answer those once (the tables are made by this Dagster's own schema, and a
migration in the process forgets the answers).
"""

from __future__ import annotations

import select
from collections.abc import Callable, Mapping
from typing import Any

from dagster_postgres import DagsterPostgresStorage
from dagster_postgres.event_log import PostgresEventLogStorage
from dagster_postgres.run_storage import PostgresRunStorage
from dagster_postgres.schedule_storage import PostgresScheduleStorage
from dagster_postgres.utils import (
    create_pg_engine,
    get_token_provider_from_config,
    pg_url_from_config,
    set_pg_statement_timeout,
)
from sqlalchemy import Connection, Engine, event, exc

from almanac.assets.dagster_private import ConfigurableClassData

POOL_RECYCLE_SECONDS = 3600
"""A connection older than this is replaced at its next use (the webserver's default)."""
POOL_SIZE = 5
"""Connections a storage keeps: the sensor daemon's submission threads (4) and its own; a
connection past these is closed when given back, and opening one costs more than a statement."""
POOL_MAX_OVERFLOW = 10
"""Connections a storage may open past its kept ones for threads calling at once."""


def hung_up(dbapi_connection: Any) -> bool:
    """Whether the server ended this idle connection: closed on our side, or its socket readable
    (the server's goodbye and end of stream; an idle connection is sent nothing else)."""
    if dbapi_connection.closed:
        return True
    readable, _, _ = select.select([dbapi_connection.fileno()], [], [], 0)
    return bool(readable)


def _replace_hung_up(dbapi_connection: Any, record: Any, proxy: Any) -> None:
    if hung_up(dbapi_connection):
        # SQLAlchemy's pool then drops this connection and checks out a new one.
        raise exc.DisconnectionError("the server ended the connection")


def pooled_engine(
    url: str,
    engine: Engine,
    token_provider: Any,
    pool_recycle: int = POOL_RECYCLE_SECONDS,
    max_overflow: int = POOL_MAX_OVERFLOW,
) -> Engine:
    """An engine in place of `engine`: kept connections, each replaced at checkout when the server
    hung up on it; otherwise dagster-postgres' `optimize_for_webserver` arguments, with no
    statement timeout."""
    arguments: dict[str, Any] = {
        "isolation_level": "AUTOCOMMIT",
        "pool_size": POOL_SIZE,
        "pool_recycle": pool_recycle,
        "max_overflow": max_overflow,
    }
    options = engine.url.query.get("options")
    if options:
        arguments["connect_args"] = {"options": options}
    made = create_pg_engine(url, token_provider, **arguments)
    event.listen(made, "checkout", _replace_hung_up)
    engine.dispose()
    return made


class _Kept:
    """A storage whose engine keeps its connections (`pooled_engine`), in the webserver too,
    and that keeps its answers to "has the table this column" (`_answer`) until a migration."""

    postgres_url: str
    _engine: Engine
    _token_provider: Any

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        self._known: dict[str, bool] = {}
        super().__init__(*args, **kwargs)

    def _answer(self, question: str, ask: Callable[[], bool]) -> bool:
        if question not in self._known:
            self._known[question] = ask()
        return self._known[question]

    def upgrade(self) -> None:
        # The dagster-postgres storage after this class in each subclass's bases.
        super().upgrade()  # type: ignore[misc]
        self._known.clear()

    def keep_connections(self) -> None:
        self._engine = pooled_engine(self.postgres_url, self._engine, self._token_provider)

    def optimize_for_webserver(
        self, statement_timeout: int, pool_recycle: int, max_overflow: int
    ) -> None:
        """dagster-postgres' own (its pool, its statement timeout on each new connection), with
        the look at checkout."""
        kept = pooled_engine(
            self.postgres_url, self._engine, self._token_provider, pool_recycle, max_overflow
        )
        event.listen(
            kept,
            "connect",
            lambda connection, _: set_pg_statement_timeout(connection, statement_timeout),
        )
        self._engine = kept


class KeptRunStorage(_Kept, PostgresRunStorage):
    """dagster-postgres' run storage, its schema read once (every read of a run asked)."""

    def has_run_stats_index_cols(self) -> bool:
        return self._answer("run stats", super().has_run_stats_index_cols)

    def has_backfill_id_column(self) -> bool:
        return self._answer("backfill id", super().has_backfill_id_column)

    def has_bulk_actions_selector_cols(self) -> bool:
        return self._answer("bulk selector", super().has_bulk_actions_selector_cols)


class KeptEventLogStorage(_Kept, PostgresEventLogStorage):
    """dagster-postgres' event log storage, its tables and its asset key table's columns read
    once (every asset event asked)."""

    def _has_asset_key_col_on_connection(self, conn: Connection, column_name: str) -> bool:
        ask = super()._has_asset_key_col_on_connection
        return self._answer(f"asset_keys.{column_name}", lambda: ask(conn, column_name))

    def has_table(self, table_name: str) -> bool:
        ask = super().has_table
        return self._answer(table_name, lambda: ask(table_name))


class KeptScheduleStorage(_Kept, PostgresScheduleStorage):
    """dagster-postgres' schedule storage, its tables read once (every update of a sensor's
    state asked)."""

    def _has_instigators_table(self, conn: Connection) -> bool:
        ask = super()._has_instigators_table
        return self._answer("instigators", lambda: ask(conn))

    def _has_asset_daemon_asset_evaluations_table(self, conn: Connection) -> bool:
        ask = super()._has_asset_daemon_asset_evaluations_table
        return self._answer("evaluations", lambda: ask(conn))


class PooledPostgresStorage(DagsterPostgresStorage):
    """dagster-postgres whose run, event log and schedule storages each keep a connection and
    read their schema once."""

    def __init__(
        self,
        postgres_url: str,
        should_autocreate_tables: bool = True,
        inst_data: ConfigurableClassData | None = None,
        token_provider: Any = None,
    ):
        # DagsterPostgresStorage's own body, with the storages above in place of its own.
        self.postgres_url = postgres_url
        self.should_autocreate_tables = should_autocreate_tables
        self._inst_data = inst_data
        made = (postgres_url, should_autocreate_tables)
        self._run_storage = KeptRunStorage(*made, token_provider=token_provider)
        self._event_log_storage = KeptEventLogStorage(*made, token_provider=token_provider)
        self._schedule_storage = KeptScheduleStorage(*made, token_provider=token_provider)
        # Past DagsterPostgresStorage's own __init__, which would make its storages too.
        super(DagsterPostgresStorage, self).__init__()  # type: ignore[no-untyped-call]
        for storage in (self._run_storage, self._event_log_storage, self._schedule_storage):
            storage.keep_connections()

    @classmethod
    def from_config_value(
        cls, inst_data: ConfigurableClassData | None, config_value: Mapping[str, Any]
    ) -> PooledPostgresStorage:
        return cls(
            inst_data=inst_data,
            postgres_url=pg_url_from_config(config_value),
            should_autocreate_tables=config_value.get("should_autocreate_tables", True),
            token_provider=get_token_provider_from_config(config_value),
        )
