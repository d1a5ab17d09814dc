"""Feed tests: the real app on the session's live uvicorn (tests/api/conftest.py) and the real
PostgreSQL made by the migrations; plug-ins and records put in the store by its own functions
(tests/audience/helpers.py)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from sqlalchemy import Engine

from tests.accounts.conftest import (  # noqa: F401  (fixtures)
    migrated_postgres_url,
    passwords,
)
from tests.api.conftest import Api, live_api, live_server, pg_engine  # noqa: F401
from tests.audience.helpers import empty_audience_tables


@pytest.fixture
def fapi(live_server, pg_engine: Engine, passwords) -> Iterator[Api]:  # noqa: F811
    with live_api(live_server, pg_engine, passwords) as api:
        yield api
    empty_audience_tables(pg_engine)
