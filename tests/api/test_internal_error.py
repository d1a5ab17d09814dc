"""INTERNAL-ERROR on real requests: the app keeps answering with a problem when what it stands
on fails (its database dropped under it, a route that breaks), and says nothing of the cause."""

from __future__ import annotations

import re
import secrets
import socket
from collections.abc import Iterator

import httpx
import psycopg
import pytest
from sqlalchemy import Engine

from almanac.platform.store.engine import make_engine
from tests.accounts.helpers import PASSWORD
from tests.api.conftest import Api, assert_problem, live_api


@pytest.fixture
def dropped_engine(postgres_url: str) -> Iterator[Engine]:
    """An engine on a database that existed (the app was made on it) and is dropped."""
    server, _, _ = postgres_url.rpartition("/")
    name = f"almanac_gone_{secrets.token_hex(4)}"
    plain = postgres_url.replace("+psycopg", "")
    with psycopg.connect(plain, autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}"')
    engine = make_engine(f"{server}/{name}")
    with engine.connect():
        pass  # the database answers before it is dropped
    engine.dispose()
    with psycopg.connect(plain, autocommit=True) as conn:
        conn.execute(f'DROP DATABASE "{name}" WITH (FORCE)')
    yield engine
    engine.dispose()


@pytest.fixture
def broken_api(live_server, dropped_engine: Engine, passwords) -> Iterator[Api]:
    with live_api(live_server, dropped_engine, passwords) as api:
        yield api


def _says_nothing_of(response, *words: str) -> None:
    for word in ("Traceback", "almanac_gone_", "does not exist", "127.0.0.1:5432", *words):
        assert word not in response.text, word


def test_a_route_whose_database_is_gone_answers_internal_error(broken_api: Api) -> None:
    response = broken_api.client().post(
        "/api/v1/auth/signup", json={"email": "ada@example.org", "password": PASSWORD}
    )
    body = assert_problem(response, 500, "INTERNAL-ERROR")
    assert body["detail"] == "the service failed to handle the request"
    _says_nothing_of(response, "OperationalError", "psycopg", PASSWORD, "ada@example.org")


def test_health_says_the_database_does_not_answer(broken_api: Api) -> None:
    response = broken_api.client().get("/health")
    body = assert_problem(response, 503, "INTERNAL-ERROR")
    # Only the kind of failure is named, never the driver's message.
    assert body["detail"] == "the database does not answer (OperationalError)"
    _says_nothing_of(response)


def test_a_route_that_fails_unexpectedly_answers_internal_error(api: Api) -> None:
    @api.app.get("/api/v1/test-only/fails")
    def fails() -> None:
        raise RuntimeError("a secret the answer must not show")

    response = api.client().get("/api/v1/test-only/fails")
    assert_problem(response, 500, "INTERNAL-ERROR")
    _says_nothing_of(response, "secret", "RuntimeError")
    # The app keeps serving after the failure.
    assert_problem(api.client().get("/api/v1/auth/me"), 401, "AUTH-REQUIRED")


def test_the_connection_stays_usable_after_an_internal_error(api: Api) -> None:
    """Two requests written at once on one keep-alive connection: the first fails inside the
    app, the second is still answered on the same connection (an error raised past the app made
    uvicorn close it, and a client's next request on it was reset)."""

    @api.app.get("/api/v1/test-only/fails")
    def fails() -> None:
        raise RuntimeError("boom")

    url = httpx.URL(api.base_url)
    request = f"GET {{}} HTTP/1.1\r\nHost: {url.host}:{url.port}\r\n\r\n"
    with socket.create_connection((url.host, url.port), timeout=10) as sock:
        sock.sendall(
            (request.format("/api/v1/test-only/fails") + request.format("/health")).encode()
        )
        received = b""
        while received.count(b"HTTP/1.1 ") < 2 or not received.rstrip().endswith(b"}"):
            chunk = sock.recv(65536)
            if not chunk:
                break
            received += chunk
    statuses = re.findall(rb"HTTP/1\.1 (\d{3}) ", received)
    assert statuses == [b"500", b"200"], received[:500]
    assert b"connection: close" not in received.lower()
