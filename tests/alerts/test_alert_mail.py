"""The alert mail through a real SMTP server on loopback (aiosmtpd), on the real app and
PostgreSQL: operators hear about every plug-in that fails, the publishing organization's owners
and admins about their own plug-ins only (with the reason and the source that failed), at most
once a day per plug-in and cause; an operator chooses the recipients through the host API, and
every alert is listed there."""

from __future__ import annotations

import html
from collections.abc import Iterator
from datetime import timedelta
from email.message import Message
from pathlib import Path

import pytest
from sqlalchemy import Engine, text
from sqlalchemy.orm import Session, sessionmaker

from almanac.orchestration.folders import register_folder
from almanac.platform import accounts
from almanac.platform.alerts.send import send_alerts
from almanac.platform.lifecycle import RunTrigger
from almanac.platform.store import moves
from almanac.platform.store.engine import write_transaction, writing
from almanac.platform.store.plugins import plugin_status
from almanac.platform.store.write import RunFacts, record_failed_run
from almanac.sandbox.smtp import MailSettings, SmtpMailer
from tests.accounts.conftest import T0
from tests.alerts.conftest import Inbox
from tests.api.conftest import Api, assert_problem
from tests.api.test_host import empty_plugin_tables
from tests.api.test_mail import free_port
from tests.orchestration.harness import approve, source_host, source_path, write_plugin

ALERTS = "/api/v1/host/alerts"
OPS = "ops@example.org"
OWNER, ADMIN, MEMBER = "owner@pub.example.org", "admin@pub.example.org", "member@pub.example.org"
OTHER_OWNER = "owner@other.example.org"
ONCALL = "oncall@example.org"
REASON = "could not download data: the server answered HTTP 503, not 200"


def _clean(engine: Engine) -> None:
    empty_plugin_tables(engine)
    with engine.begin() as conn:
        conn.execute(text("DELETE FROM alert_recipients"))


@pytest.fixture
def world(api: Api, tmp_path: Path) -> Iterator[Api]:
    """Three approved plug-ins: `alpha` published by one organization (owner, admin, member),
    `beta` by another, `gamma` by none; an operator."""
    _clean(api.engine)
    try:
        api.signed_in(OPS, operator=True)
        for address in (OWNER, ADMIN, MEMBER, OTHER_OWNER):
            api.signed_in(address)
        now = api.clock()
        with Session(api.engine, expire_on_commit=False) as db:
            owner = accounts.find_account(db, OWNER)
            other = accounts.find_account(db, OTHER_OWNER)
            assert owner is not None and other is not None
            publisher = accounts.create_organization(db, owner, "Publisher", now)
            accounts.add_member(db, publisher.id, owner, ADMIN, "admin", now)
            accounts.add_member(db, publisher.id, owner, MEMBER, "member", now)
            elsewhere = accounts.create_organization(db, other, "Elsewhere", now)
            db.commit()
        for plugin_id, org in (("alpha", publisher.id), ("beta", elsewhere.id), ("gamma", None)):
            folder = write_plugin(
                tmp_path, plugin_id, schedule="0 6 * * *", timezone="Europe/London"
            )
            register_folder(api.engine, folder, now=now)
            with write_transaction(api.engine) as conn:
                moves.set_publisher(conn, plugin_id, org, by=OPS, now=now)
            approve(api.engine, plugin_id, now)
        yield api
    finally:
        _clean(api.engine)


def fail(engine: Engine, plugin_id: str, at: timedelta) -> None:
    """A scheduled run of the plug-in fails downloading its source, `at` after T0."""
    with engine.connect() as conn:
        status = plugin_status(conn, plugin_id)
    assert status.approved_version_id is not None and status.approved_digest is not None
    record_failed_run(
        engine,
        plugin_id=plugin_id,
        version_id=status.approved_version_id,
        digest=status.approved_digest,
        run=RunFacts(
            today=(T0 + at).date(),
            trigger=RunTrigger.SCHEDULE,
            started_at=T0 + at,
            now=T0 + at + timedelta(seconds=3),
        ),
        reason=REASON,
    )


def delivered(inbox: Inbox, since: int) -> dict[str, Message]:
    """Each mail received since the `since`-th, by recipient and subject."""
    return {f"{to[0]} {m['Subject']}": m for to, m in inbox.messages[since:]}


def body(message: Message) -> str:
    payload = message.get_payload(decode=True)
    assert isinstance(payload, bytes)
    return payload.decode()


def test_operators_and_each_publisher_hear_once_a_day_and_operators_choose_recipients(
    world: Api, smtp: tuple[Inbox, int]
) -> None:
    api = world
    inbox, port = smtp
    mailer = SmtpMailer(MailSettings(smtp_host="127.0.0.1", smtp_port=port))
    sessions = sessionmaker(writing(api.engine), expire_on_commit=False)
    operator = api.signed_in("second-op@example.org", operator=True)
    fail(api.engine, "alpha", timedelta(hours=1))
    fail(api.engine, "gamma", timedelta(hours=1))

    # Until an operator chooses, every operator receives the operators' alerts.
    shown = operator.get(f"{ALERTS}/recipients")
    assert shown.status_code == 200, shown.text
    assert shown.json() == {
        "chosen": False,
        "recipients": [OPS, "second-op@example.org"],
        "chosen_by": None,
        "chosen_at": None,
    }

    now = T0 + timedelta(hours=1, minutes=1)
    sent = send_alerts(sessions, mailer, now, base_url=api.base_url)
    assert sorted((a.plugin_id, str(a.cause)) for a in sent) == [
        ("alpha", "failing"),
        ("gamma", "failing"),
    ]
    got = delivered(inbox, 0)
    alpha, gamma = "Almanac: plug-in alpha is Failing", "Almanac: plug-in gamma is Failing"
    # The publisher's owner and admin hear about their own plug-in; its member and the other
    # organization's owner do not; operators hear about both.
    assert sorted(got) == sorted(
        [
            f"{OPS} {alpha}",
            f"second-op@example.org {alpha}",
            f"{OWNER} {alpha}",
            f"{ADMIN} {alpha}",
            f"{OPS} {gamma}",
            f"second-op@example.org {gamma}",
        ]
    )
    source = f"https://{source_host('alpha')}{source_path('alpha')}"
    to_owner = body(got[f"{OWNER} {alpha}"])
    assert f"Reason of the last run (2026-11-02 13:00 UTC): {REASON}" in to_owner
    assert f"Source that failed: data ({source})" in to_owner
    assert "/host/plugins/" not in to_owner, "the host's link goes to operators only"
    assert f"{api.base_url}/host/plugins/alpha" in body(got[f"{OPS} {alpha}"])

    # A second evaluation the same day sends nothing, nor does the retry failing.
    fail(api.engine, "alpha", timedelta(hours=1, minutes=30))
    assert send_alerts(sessions, mailer, now + timedelta(hours=2), base_url=api.base_url) == []
    assert len(inbox.messages) == 6

    # An operator chooses the recipients (an address given twice in another case is one).
    chosen = operator.put(
        f"{ALERTS}/recipients", json={"recipients": [ONCALL, "OnCall@example.org"]}
    )
    assert chosen.status_code == 200, chosen.text
    assert chosen.json()["recipients"] == [ONCALL]
    assert (chosen.json()["chosen"], chosen.json()["chosen_by"]) == (True, "second-op@example.org")
    refused = operator.put(f"{ALERTS}/recipients", json={"recipients": ["not an address"]})
    assert_problem(refused, 422, "REQUEST-INVALID")
    outsider = api.signed_in("reader@example.org")
    assert outsider.get(f"{ALERTS}/recipients").status_code == 403
    assert outsider.put(f"{ALERTS}/recipients", json={"recipients": []}).status_code == 403

    # The next day, past a day of Failing: once more, to the chosen recipients and the
    # publisher's owner and admin.
    next_day = T0 + timedelta(days=1, hours=1, minutes=5)
    sent = send_alerts(sessions, mailer, next_day, base_url=api.base_url)
    assert sorted((a.plugin_id, str(a.cause)) for a in sent) == [
        ("alpha", "still-failing"),
        ("gamma", "still-failing"),
    ]
    still = "Almanac: plug-in {} is still Failing"
    assert sorted(delivered(inbox, 6)) == sorted(
        [
            f"{ONCALL} {still.format('alpha')}",
            f"{OWNER} {still.format('alpha')}",
            f"{ADMIN} {still.format('alpha')}",
            f"{ONCALL} {still.format('gamma')}",
        ]
    )
    assert send_alerts(sessions, mailer, next_day + timedelta(hours=3)) == []

    # Every alert is listed at the host, newest first; one plug-in's on its own.
    listed = operator.get(ALERTS)
    assert listed.status_code == 200, listed.text
    rows = [(a["plugin_id"], a["cause"], a["day"], a["recipients"]) for a in listed.json()]
    assert sorted(rows) == sorted(
        [
            ("alpha", "failing", "2026-11-02", [OPS, "second-op@example.org", OWNER, ADMIN]),
            ("gamma", "failing", "2026-11-02", [OPS, "second-op@example.org"]),
            ("alpha", "still-failing", "2026-11-03", [ONCALL, OWNER, ADMIN]),
            ("gamma", "still-failing", "2026-11-03", [ONCALL]),
        ]
    )
    assert [a["day"] for a in listed.json()][:2] == ["2026-11-03"] * 2
    only = operator.get(ALERTS, params={"plugin_id": "gamma"}).json()
    assert [(a["cause"], a["undelivered"]) for a in only] == [
        ("still-failing", []),
        ("failing", []),
    ]
    assert REASON in only[0]["detail"]
    assert outsider.get(ALERTS).status_code == 403
    # The host's page lists them too, each with its subject and recipients.
    page = operator.get("/host")
    assert page.status_code == 200, page.text
    for alert in listed.json():
        assert html.escape(alert["subject"]) in page.text
    assert ONCALL in page.text

    # Back to every operator.
    reset = operator.put(f"{ALERTS}/recipients", json={"recipients": None})
    assert reset.json()["chosen"] is False
    assert reset.json()["recipients"] == [OPS, "second-op@example.org"]


def test_an_address_the_mail_cannot_reach_is_kept_as_undelivered(world: Api) -> None:
    api = world
    fail(api.engine, "gamma", timedelta(hours=1))
    closed = free_port()  # nothing listens there
    mailer = SmtpMailer(MailSettings(smtp_host="127.0.0.1", smtp_port=closed, timeout=2))
    sessions = sessionmaker(writing(api.engine), expire_on_commit=False)
    [sent] = send_alerts(sessions, mailer, T0 + timedelta(hours=2))
    assert (sent.plugin_id, sent.recipients, sent.undelivered) == ("gamma", [OPS], [OPS])
    operator = api.signed_in("second-op@example.org", operator=True)
    [listed] = operator.get(ALERTS).json()
    assert (listed["cause"], listed["undelivered"]) == ("failing", [OPS])
