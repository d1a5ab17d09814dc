"""Mail through a real SMTP server on loopback (aiosmtpd), and the outbox without one."""

from __future__ import annotations

import email
import re
import socket
import time
from collections.abc import Iterator
from email.message import Message

import httpx
import pytest
from aiosmtpd.controller import Controller
from sqlalchemy import select
from sqlalchemy.orm import Session

from almanac.platform.mail import (
    MailError,
    MailMessage,
    OutboxMailer,
    OutboxMessage,
    console_note,
)
from almanac.platform.store.engine import make_engine, upgrade_database
from almanac.sandbox.smtp import MailSettings, SmtpMailer, load_mail_settings, mailer_for
from tests.accounts.conftest import T0
from tests.accounts.helpers import PASSWORD
from tests.api.conftest import live_api

SENDER = "Almanac <noreply@almanac.test>"


class Inbox:
    """aiosmtpd handler keeping every message it receives."""

    def __init__(self) -> None:
        self.messages: list[tuple[list[str], Message]] = []

    async def handle_DATA(self, server, session, envelope) -> str:  # type: ignore[no-untyped-def]
        self.messages.append((list(envelope.rcpt_tos), email.message_from_bytes(envelope.content)))
        return "250 Message accepted for delivery"

    def wait(self, count: int = 1, timeout: float = 5) -> list[tuple[list[str], Message]]:
        deadline = time.monotonic() + timeout
        while len(self.messages) < count and time.monotonic() < deadline:
            time.sleep(0.01)
        assert len(self.messages) >= count, "the SMTP server received no mail"
        return self.messages


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


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


def test_the_verification_mail_arrives_by_smtp_and_its_link_verifies(
    smtp, live_server, pg_engine, passwords
):
    inbox, port = smtp
    mailer = SmtpMailer(MailSettings(smtp_host="127.0.0.1", smtp_port=port, sender=SENDER))
    with live_api(live_server, pg_engine, passwords, mailer=mailer) as api:
        client = api.client()
        made = client.post(
            "/api/v1/auth/signup", json={"email": "ada@example.org", "password": PASSWORD}
        )
        assert made.status_code == 201
        [(recipients, message)] = inbox.wait()
        assert recipients == ["ada@example.org"]
        assert message["From"] == SENDER and message["To"] == "ada@example.org"
        assert "Verify" in message["Subject"]
        body = message.get_payload(decode=True).decode()
        [link] = re.findall(r"http://\S+/api/v1/auth/verify\?token=\S+", body)
        assert link.startswith(api.base_url)

        assert httpx.get(link).json() == {"verified": True, "email": "ada@example.org"}
        signed = client.post(
            "/api/v1/auth/signin", json={"email": "ada@example.org", "password": PASSWORD}
        )
        assert signed.json()["verified"] is True
        with Session(pg_engine) as db:
            assert db.scalars(select(OutboxMessage)).all() == []


def test_sign_up_stands_when_the_smtp_server_is_down(live_server, pg_engine, passwords, caplog):
    mailer = SmtpMailer(MailSettings(smtp_host="127.0.0.1", smtp_port=free_port(), timeout=2))
    with live_api(live_server, pg_engine, passwords, mailer=mailer) as api:
        made = api.client().post(
            "/api/v1/auth/signup", json={"email": "ada@example.org", "password": PASSWORD}
        )
        assert made.status_code == 201
    assert any("verification mail" in r.getMessage() for r in caplog.records)


def test_smtp_mailer_raises_mail_error_naming_the_server():
    port = free_port()
    mailer = SmtpMailer(MailSettings(smtp_host="127.0.0.1", smtp_port=port, timeout=2))
    with pytest.raises(MailError, match=f"127.0.0.1:{port}"):
        mailer.send(MailMessage(to="a@example.org", subject="s", body="b"), T0)


def test_without_an_smtp_server_mail_goes_to_the_outbox(pg_engine):
    assert load_mail_settings({}) == MailSettings()
    configured = load_mail_settings(
        {"ALMANAC_SMTP_HOST": "127.0.0.1", "ALMANAC_SMTP_PORT": "2525", "ALMANAC_MAIL_FROM": SENDER}
    )
    assert (configured.smtp_host, configured.smtp_port, configured.sender) == (
        "127.0.0.1",
        2525,
        SENDER,
    )
    assert isinstance(mailer_for(configured, pg_engine), SmtpMailer)
    outbox = mailer_for(MailSettings(), pg_engine)
    assert isinstance(outbox, OutboxMailer)
    outbox.send(MailMessage(to="a@example.org", subject="Hello", body="secret link"), T0)
    with Session(pg_engine) as db:
        [kept] = db.scalars(select(OutboxMessage)).all()
    assert (kept.to_address, kept.subject, kept.body, kept.created_at) == (
        "a@example.org",
        "Hello",
        "secret link",
        T0,
    )
    assert "secret link" not in repr(kept) + repr(
        MailMessage("a@example.org", "Hello", "secret link")
    )


def test_without_an_smtp_server_the_console_shows_each_mail_and_its_link(
    live_server, sqlite_url, passwords, capfd
):
    # The embedded default: no SMTP server and no operator yet to read the outbox.
    upgrade_database(sqlite_url)
    engine = make_engine(sqlite_url)
    mailer = mailer_for(load_mail_settings({}), engine)
    with live_api(live_server, engine, passwords, mailer=mailer) as api:
        made = api.client().post(
            "/api/v1/auth/signup", json={"email": "ada@example.org", "password": PASSWORD}
        )
        assert made.status_code == 201
        console = capfd.readouterr().err
        assert (
            "mail to ada@example.org (kept in the outbox, no SMTP server set): "
            "Verify your e-mail address for Almanac"
        ) in console
        [link] = re.findall(r"^  (http://\S+/api/v1/auth/verify\?token=\S+)$", console, re.M)
        assert link.startswith(api.base_url)
        assert httpx.get(link).json() == {"verified": True, "email": "ada@example.org"}
    with Session(engine) as db:
        [kept] = db.scalars(select(OutboxMessage)).all()
    assert link in kept.body, "the outbox keeps the same mail"
    engine.dispose()


def test_the_console_prints_each_link_on_its_own_with_nothing_glued_after_it(
    live_server, sqlite_url, passwords, capfd
):
    # A terminal makes a printed address clickable up to the next space: the invitation's link
    # to the portal once came out as `.../portal):`, which opened no page.
    upgrade_database(sqlite_url)
    engine = make_engine(sqlite_url)
    mailer = mailer_for(load_mail_settings({}), engine)
    with live_api(live_server, engine, passwords, mailer=mailer) as api:
        asked = api.client().post(
            "/api/developers/invitations",
            json={
                "email": "dev@example.org",
                "organization": "Example",
                "domain": "example.org",
                "note": "rates",
            },
        )
        assert asked.status_code == 202, asked.text
        operator = api.signed_in("op@example.org", operator=True)
        [request] = operator.get("/api/v1/staff/invitations").json()
        capfd.readouterr()
        invited = operator.post(f"/api/v1/staff/invitations/{request['id']}/invite")
        assert invited.status_code == 200 and invited.json()["mailed"] is True
        console = capfd.readouterr().err
        links = re.findall(r"^  (\S+)$", console, re.M)
        assert links == [f"{api.base_url}/portal"], console
        assert httpx.get(links[0]).status_code == 303  # the portal, which asks to sign in first
        # The mail itself keeps the link apart from its sentence too.
        assert f"\n{api.base_url}/portal\n" in api.last_mail("dev@example.org").body
    # Punctuation closing a sentence is never part of a printed link.
    note = console_note(
        MailMessage(
            "a@example.org",
            "Links",
            "See (https://a.example/x), https://b.example/y. Or https://c.example/z?q=1;",
        )
    )
    assert note.splitlines()[1:] == [
        "  https://a.example/x",
        "  https://b.example/y",
        "  https://c.example/z?q=1",
    ]
    engine.dispose()


def test_on_postgresql_the_console_shows_each_mail_and_its_link_too(
    live_server, pg_engine, passwords, capfd
):
    # Issue 30: a first account on PostgreSQL with no SMTP server could not verify its address
    # (the console kept quiet there). tests/service/test_mail_outbox.py runs the API as
    # `almanac up` does, in worker processes.
    mailer = mailer_for(load_mail_settings({}), pg_engine)
    with live_api(live_server, pg_engine, passwords, mailer=mailer) as api:
        made = api.client().post(
            "/api/v1/auth/signup", json={"email": "ada@example.org", "password": PASSWORD}
        )
        assert made.status_code == 201
    console = capfd.readouterr().err
    assert "mail to ada@example.org (kept in the outbox, no SMTP server set): " in console
    [link] = re.findall(r"^  (http://\S+/api/v1/auth/verify\?token=\S+)$", console, re.M)
    with Session(pg_engine) as db:
        [kept] = db.scalars(select(OutboxMessage)).all()
    assert link in kept.body, "the outbox keeps the same mail"
