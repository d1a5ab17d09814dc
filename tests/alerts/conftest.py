"""Alerts tests: the orchestration tests' SQLite store (copied from a migrated template), the
API tests' live app on PostgreSQL, and a real SMTP server on loopback (aiosmtpd)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from aiosmtpd.controller import Controller

from tests.accounts.conftest import migrated_postgres_url, passwords  # noqa: F401  (fixtures)
from tests.api.conftest import api, live_server, pg_engine  # noqa: F401  (fixtures)
from tests.api.test_mail import Inbox, free_port
from tests.orchestration.conftest import sqlite_engine, sqlite_store_template  # noqa: F401

__all__ = ["Inbox"]


@pytest.fixture
def smtp() -> Iterator[tuple[Inbox, int]]:
    inbox = Inbox()
    port = free_port()
    controller = Controller(inbox, hostname="127.0.0.1", port=port)
    controller.start()
    try:
        yield inbox, port
    finally:
        controller.stop()
