"""Agent access tests: the grant and tokens on PostgreSQL and SQLite (made by the migrations),
and the real tool against the live loopback uvicorn on PostgreSQL (`service`, an organization
`bank` with an owner and the admin who approves agents, the tool with a home of its own, and a
copy of the UK example)."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.accounts.conftest import (  # noqa: F401  (fixtures)
    accounts_engine,
    accounts_sqlite_template,
    clock,
    db,
    migrated_postgres_url,
    passwords,
)
from tests.agents.helpers import V1
from tests.agents.test_agent_api import Bank
from tests.agents.tool_runner import UK, MovingClock, Tool
from tests.api.conftest import Api, api, live_api, live_server, pg_engine  # noqa: F401
from tests.api.test_host import EXAMPLES, empty_plugin_tables
from tests.publishing.test_uploads import Publisher, new_org


@pytest.fixture
def service(live_server, pg_engine, passwords) -> Iterator[Api]:  # noqa: F811
    with live_api(
        live_server,
        pg_engine,
        passwords,
        clock=MovingClock(),  # type: ignore[arg-type]
        settings={"device_poll_interval": 1},
    ) as api:  # noqa: F811
        yield api


@pytest.fixture
def bank(service: Api) -> Iterator[Bank]:
    """An organization whose owner uploads through the API and whose admin approves agents; a
    module may give its own `bank`."""
    empty_plugin_tables(service.engine)
    owner, org = new_org(service, "owner@bank.example", "Bank")
    email = "admin@bank.example"
    admin = service.signed_in(email)
    added = owner.post(f"{V1}/organizations/{org}/members", json={"email": email, "role": "admin"})
    assert added.status_code == 201, added.text
    try:
        yield Bank(Publisher(service, owner, org), admin, email)
    finally:
        empty_plugin_tables(service.engine)


@pytest.fixture
def tool(node: Path, tmp_path: Path) -> Tool:
    home = tmp_path / "home"
    home.mkdir()
    return Tool(node=node, home=home)


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    made = tmp_path / "work" / UK
    shutil.copytree(EXAMPLES / UK, made)
    return made
