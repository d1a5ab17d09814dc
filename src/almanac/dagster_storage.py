"""Dagster's storage on PostgreSQL for `almanac up` (issue 19): dagster-postgres, with each of
its three storages keeping its connection between calls.

dagster-postgres opens a new connection for every storage call outside the webserver (a
`NullPool`): some 400 connections for one sensor tick that creates a run, and about 2 ms each
on loopback, more than the run itself. The webserver keeps one connection per storage
(`optimize_for_webserver`); this class does the same in every process (the daemon, each run
worker), with no statement timeout, as Dagster's own storage has outside the webserver. Each
process holds at most one idle connection per storage. Nothing else changes: the same tables,
the same configuration (`pg_config`), and run workers get this class through their instance's
reference.

A kept connection outlives the server's side of it when PostgreSQL restarts or a backend is
terminated (issue 31): each checkout first pings it (`pool_pre_ping`, one round trip, as the
store's own engine does) and replaces it when it is gone, so the webserver, the daemon and the
run workers go on without a restart. dagster-postgres' `optimize_for_webserver` takes no such
option, so the engines are made here with its arguments and that one more: in the webserver
too, whose own `optimize_for_webserver` would otherwise swap in engines without the ping and
answer 500 to the first request after a PostgreSQL restart (found by the topology's test,
issue 34).
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import partial
from typing import Any

from dagster_postgres import DagsterPostgresStorage
from dagster_postgres.utils import (
    create_pg_engine,
    get_token_provider_from_config,
    pg_url_from_config,
    set_pg_statement_timeout,
)
from sqlalchemy import Engine, event

from almanac.assets.dagster_private import ConfigurableClassData

POOL_RECYCLE_SECONDS = 3600
"""A connection older than this is replaced at its next use (the webserver's default)."""
POOL_MAX_OVERFLOW = 10
"""Connections a storage may open past its kept one for threads calling at once."""


def pooled_engine(
    url: str,
    engine: Engine,
    token_provider: Any,
    pool_recycle: int = POOL_RECYCLE_SECONDS,
    max_overflow: int = POOL_MAX_OVERFLOW,
) -> Engine:
    """An engine in place of `engine`: one kept connection, pinged before each use; otherwise
    dagster-postgres' `optimize_for_webserver` arguments, with no statement timeout."""
    arguments: dict[str, Any] = {
        "isolation_level": "AUTOCOMMIT",
        "pool_size": 1,
        "pool_recycle": pool_recycle,
        "max_overflow": max_overflow,
        "pool_pre_ping": True,
    }
    options = engine.url.query.get("options")
    if options:
        arguments["connect_args"] = {"options": options}
    made = create_pg_engine(url, token_provider, **arguments)
    engine.dispose()
    return made


def _for_webserver(
    storage: Any, statement_timeout: int, pool_recycle: int, max_overflow: int
) -> None:
    """dagster-postgres' `optimize_for_webserver` of one storage (its pool, its statement
    timeout on each new connection), with the ping."""
    kept = pooled_engine(
        storage.postgres_url, storage._engine, storage._token_provider, pool_recycle, max_overflow
    )
    event.listen(
        kept,
        "connect",
        lambda connection, _: set_pg_statement_timeout(connection, statement_timeout),
    )
    storage._engine = kept


class PooledPostgresStorage(DagsterPostgresStorage):
    """dagster-postgres whose run, event log and schedule storages each keep a connection."""

    def __init__(self, postgres_url: str, should_autocreate_tables: bool = True, **kwargs: Any):
        super().__init__(postgres_url, should_autocreate_tables, **kwargs)
        for storage in (self._run_storage, self._event_log_storage, self._schedule_storage):
            kept = pooled_engine(storage.postgres_url, storage._engine, storage._token_provider)
            storage._engine = kept
            # The instance calls each storage's own method, not this class's.
            setattr(storage, "optimize_for_webserver", partial(_for_webserver, storage))  # noqa: B010

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
