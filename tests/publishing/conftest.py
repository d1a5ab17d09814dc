"""Publishing tests: the account tables on PostgreSQL and SQLite (made by the migrations), a
real DNS server and HTTPS site on loopback for the proofs, and the real SMTP test server."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.accounts.conftest import (  # noqa: F401  (fixtures)
    accounts_engine,
    accounts_sqlite_template,
    clock,
    db,
    migrated_postgres_url,
    passwords,
)
from tests.api.conftest import api, live_server, pg_engine  # noqa: F401  (fixtures)
from tests.api.test_mail import smtp  # noqa: F401  (fixture)
from tests.publishing.servers import ProofWorld, proof_world


@pytest.fixture
def world() -> Iterator[ProofWorld]:
    """A DNS server answering TXT queries and an HTTPS site serving well-known files, both on
    loopback, started for the test."""
    with proof_world() as running:
        yield running
