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
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from dagster_postgres import DagsterPostgresStorage
from dagster_postgres.utils import get_token_provider_from_config, pg_url_from_config

from almanac.assets.dagster_private import ConfigurableClassData

POOL_RECYCLE_SECONDS = 3600
"""A connection older than this is replaced at its next use (the webserver's default)."""
POOL_MAX_OVERFLOW = 10
"""Connections a storage may open past its kept one for threads calling at once."""


class PooledPostgresStorage(DagsterPostgresStorage):
    """dagster-postgres whose run, event log and schedule storages each keep a connection."""

    def __init__(self, postgres_url: str, should_autocreate_tables: bool = True, **kwargs: Any):
        super().__init__(postgres_url, should_autocreate_tables, **kwargs)
        for storage in (self._run_storage, self._event_log_storage, self._schedule_storage):
            storage.optimize_for_webserver(
                statement_timeout=0,
                pool_recycle=POOL_RECYCLE_SECONDS,
                max_overflow=POOL_MAX_OVERFLOW,
            )

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
