"""Agent access tests: the grant and tokens on PostgreSQL and SQLite (made by the migrations),
and the real tool against the live loopback uvicorn on PostgreSQL."""

from __future__ import annotations

from tests.accounts.conftest import (  # noqa: F401  (fixtures)
    accounts_engine,
    accounts_sqlite_template,
    clock,
    db,
    migrated_postgres_url,
    passwords,
)
from tests.api.conftest import api, live_server, pg_engine  # noqa: F401  (fixtures)
