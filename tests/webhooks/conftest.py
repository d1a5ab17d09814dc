"""Webhook tests: the real app over HTTP on PostgreSQL and on SQLite, endpoint addresses
checked through a table resolver (no DNS leaves the machine)."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
from sqlalchemy import Engine, text

from almanac.platform.store.engine import make_engine
from almanac.sandbox.webhooks import EndpointAddressCheck
from tests.accounts.conftest import (  # noqa: F401  (fixtures)
    accounts_sqlite_template,
    empty_account_tables,
    migrated_postgres_url,
    passwords,
)
from tests.api.conftest import Api, live_api, live_server  # noqa: F401  (fixtures)
from tests.audience.helpers import empty_audience_tables
from tests.sandbox.tls_server import TableResolver

PUBLIC = "93.184.216.34"
HOSTS: dict[str, list[str]] = {
    "hooks.example.org": [PUBLIC],
    "private.example.org": ["10.1.2.3"],
    "loop.example.org": ["127.0.0.1"],
    "link.example.org": ["169.254.169.254"],
    "mixed.example.org": [PUBLIC, "192.168.0.7"],
}


def empty_webhook_tables(engine: Engine) -> None:
    with engine.begin() as conn:
        for table in ("webhook_attempts", "webhook_deliveries", "webhook_events"):
            conn.execute(text(f"DELETE FROM {table}"))


@pytest.fixture(params=["postgresql", "sqlite"])
def store_engine(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Engine]:
    if request.param == "postgresql":
        engine = make_engine(request.getfixturevalue("migrated_postgres_url"))
        empty_webhook_tables(engine)
        empty_account_tables(engine)
    else:
        path = tmp_path / "almanac.db"
        shutil.copy(request.getfixturevalue("accounts_sqlite_template"), path)
        engine = make_engine(f"sqlite:///{path}")
    yield engine
    empty_audience_tables(engine)
    empty_webhook_tables(engine)
    engine.dispose()


@pytest.fixture
def wapi(live_server, store_engine: Engine, passwords) -> Iterator[Api]:  # noqa: F811
    addresses = EndpointAddressCheck(TableResolver(HOSTS))
    with live_api(live_server, store_engine, passwords, endpoint_addresses=addresses) as api:
        yield api
