"""API tests: the real app (create_app) served by uvicorn on loopback and spoken to over HTTP,
on the real PostgreSQL made by the migrations, with fast argon2 parameters and a clock the
test moves."""

from __future__ import annotations

import dataclasses
import re
import socket
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import httpx
import pytest
import uvicorn
from fastapi import FastAPI
from sqlalchemy import Engine, select
from sqlalchemy.orm import Session

from almanac.api.app import create_app
from almanac.platform import accounts
from almanac.platform.mail import Mailer, OutboxMailer, OutboxMessage
from almanac.platform.publishing.identity.proof import DomainProver
from almanac.platform.store.engine import make_engine
from almanac.sandbox.dns_txt import DnsPythonTxt
from almanac.sandbox.webhooks import EndpointAddressCheck
from almanac.sandbox.wellknown import WellKnownDownload
from almanac.settings import Settings
from tests.accounts.conftest import (  # noqa: F401  (fixtures)
    SteppedClock,
    empty_account_tables,
    migrated_postgres_url,
    passwords,
)
from tests.accounts.helpers import PASSWORD
from tests.sandbox.tls_server import TableResolver


def settings_for(database_url: str, base_url: str) -> Settings:
    return Settings(
        home=Path("/nonexistent-almanac-home"),
        api_port=8000,
        dagster_port=3000,
        database_url=database_url,
        base_url=base_url,
    )


class Dispatcher:
    """The ASGI app uvicorn serves for the whole session: it hands each request to the app of
    the running test, so one loopback server serves every test."""

    def __init__(self) -> None:
        self.app: FastAPI | None = None

    async def __call__(self, scope, receive, send) -> None:  # type: ignore[no-untyped-def]
        assert self.app is not None, "no app is being served"
        await self.app(scope, receive, send)


@pytest.fixture(scope="session")
def live_server() -> Iterator[tuple[Dispatcher, str]]:
    """uvicorn on a free loopback port for the session: (dispatcher, base URL)."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    dispatcher = Dispatcher()
    server = uvicorn.Server(
        uvicorn.Config(dispatcher, log_level="warning", lifespan="off", timeout_graceful_shutdown=1)
    )
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    try:
        for _ in range(500):
            if server.started:
                break
            thread.join(0.01)
        assert server.started, "uvicorn did not start"
        yield dispatcher, f"http://127.0.0.1:{sock.getsockname()[1]}"
    finally:
        server.should_exit = True
        thread.join(10)
        sock.close()


@dataclass
class Api:
    app: FastAPI
    engine: Engine
    clock: SteppedClock
    base_url: str
    clients: list[httpx.Client] = field(default_factory=list)

    def client(self) -> httpx.Client:
        client = httpx.Client(base_url=self.base_url, timeout=10, follow_redirects=False)
        self.clients.append(client)
        return client

    def last_mail(self, to: str) -> OutboxMessage:
        with Session(self.engine) as db:
            row = db.scalar(
                select(OutboxMessage)
                .where(OutboxMessage.to_address == to)
                .order_by(OutboxMessage.id.desc())
            )
        assert row is not None, f"no mail to {to} in the outbox"
        return row

    def verification_link(self, to: str) -> str:
        found = re.search(r"https?://\S+/api/v1/auth/verify\?token=\S+", self.last_mail(to).body)
        assert found, "the verification mail holds no link"
        return found.group(0)

    def sign_up(self, client: httpx.Client, email: str, *, verify: bool = True) -> dict:
        made = client.post("/api/v1/auth/signup", json={"email": email, "password": PASSWORD})
        assert made.status_code == 201, made.text
        if verify:
            link = self.verification_link(made.json()["email"])
            assert client.get(link).status_code == 200
        return made.json()

    def signed_in(self, email: str, *, verify: bool = True, operator: bool = False) -> httpx.Client:
        """A client with a session cookie for a new account, made by the account functions
        (the HTTP sign-up and sign-in are tested on their own, in test_auth)."""
        from almanac.api.deps import SESSION_COOKIE

        passwords_ = self.app.state.almanac.passwords
        with Session(self.engine, expire_on_commit=False) as db:
            made = accounts.sign_up(db, email, PASSWORD, passwords_, self.clock())
            if verify:
                accounts.verify_email(db, made.verification_token, self.clock())
            if operator:
                accounts.grant_staff_role(db, email, "operator", self.clock())
            cookie = accounts.start_session(db, made.account, self.clock())
            db.commit()
        client = self.client()
        client.cookies.set(SESSION_COOKIE, cookie)
        return client


def offline_prover() -> DomainProver:
    """The domain prover of API tests that do not give one: TXT look-ups go to a closed
    loopback port and no name resolves for the well-known file, so no test sends a packet to
    a real DNS server or web site."""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sock:
        sock.bind(("127.0.0.1", 0))
        closed = sock.getsockname()[1]
    return DomainProver(
        txt=DnsPythonTxt([("127.0.0.1", closed)], timeout=1.0),
        files=WellKnownDownload(base_url="https://almanac.test", resolver=TableResolver({})),
    )


@pytest.fixture
def pg_engine(migrated_postgres_url: str) -> Iterator[Engine]:  # noqa: F811
    engine = make_engine(migrated_postgres_url)
    empty_account_tables(engine)
    yield engine
    engine.dispose()


@contextmanager
def live_api(
    server: tuple[Dispatcher, str],
    engine: Engine,
    passwords_,
    mailer: Mailer | None = None,
    *,
    clock: SteppedClock | None = None,
    settings: dict | None = None,
    **kwargs,
) -> Iterator[Api]:
    """A fresh app on the live loopback server; mail goes to the outbox unless `mailer` is
    given; domain proofs reach nothing unless `domain_prover` is given. `clock` replaces the
    stepped clock, `settings` changes fields of the settings."""
    dispatcher, base_url = server
    clock = clock or SteppedClock()
    kwargs.setdefault("domain_prover", offline_prover())
    # Webhook endpoints resolve through an empty table: no DNS and no probe leave the machine.
    kwargs.setdefault("endpoint_addresses", EndpointAddressCheck(TableResolver({})))
    made = settings_for(engine.url.render_as_string(hide_password=False), base_url)
    app = create_app(
        dataclasses.replace(made, **(settings or {})),
        clock=clock,
        mailer=mailer or OutboxMailer(engine),
        engine=engine,
        passwords=passwords_,
        **kwargs,
    )
    dispatcher.app = app
    api = Api(app=app, engine=engine, clock=clock, base_url=base_url)
    try:
        yield api
    finally:
        for client in api.clients:
            client.close()
        dispatcher.app = None


@pytest.fixture
def api(live_server, pg_engine: Engine, passwords) -> Iterator[Api]:  # noqa: F811
    with live_api(live_server, pg_engine, passwords) as api:
        yield api


def assert_problem(response, status: int, code: str) -> dict:
    """The response is an RFC 9457 problem with the catalog code and its docs link."""
    assert response.status_code == status, response.text
    assert response.headers["content-type"].startswith("application/problem+json")
    body = response.json()
    assert body["status"] == status and body["code"] == code
    base_url = str(response.request.url.copy_with(path="/", query=None)).rstrip("/")
    assert body["type"] == f"{base_url}/docs/problems/{code}"
    assert body["title"] and body["detail"]
    return body
