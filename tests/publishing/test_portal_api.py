"""The portal and staff publishing routes over HTTP, on the live app with real PostgreSQL, a
real DNS server and HTTPS site on loopback for the proofs and the real SMTP test server for
mail: from sign-up to "may submit", and every refusal with its catalog code."""

from __future__ import annotations

import re
import shutil
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path

import httpx
import pytest
from sqlalchemy import Engine
from sqlalchemy.orm import Session

from almanac.api.deps import SESSION_COOKIE
from almanac.platform import accounts
from almanac.platform.publishing.identity import ids
from almanac.platform.store.engine import make_engine
from almanac.sandbox.smtp import MailSettings, SmtpMailer
from tests.accounts.helpers import PASSWORD
from tests.api.conftest import Api, assert_problem, live_api
from tests.api.test_host import empty_plugin_tables
from tests.api.test_mail import Inbox
from tests.audience.helpers import example_plugin
from tests.publishing.servers import ProofWorld

V1 = "/api/v1"
OP = "operator@example.org"


@dataclass
class Portal:
    api: Api
    world: ProofWorld
    inbox: Inbox

    def org(self, client: httpx.Client, name: str) -> int:
        made = client.post(f"{V1}/organizations", json={"name": name})
        assert made.status_code == 201, made.text
        return int(made.json()["id"])

    def name(self, client: httpx.Client, org: int, domain: str) -> httpx.Response:
        return client.put(f"{V1}/portal/organizations/{org}/domain", json={"domain": domain})

    def verified(self, email: str, domain: str) -> tuple[httpx.Client, int]:
        """A signed-in owner of a new organization whose domain is proved by DNS."""
        client = self.api.signed_in(email)
        org = self.org(client, f"Org of {domain}")
        named = self.name(client, org, domain)
        assert named.status_code == 200, named.text
        self.world.dns.publish(domain, named.json()["txt_value"])
        checked = client.post(f"{V1}/portal/organizations/{org}/domain/check")
        assert checked.json()["state"] == "verified", checked.text
        return client, org

    def invite(self, domain: str, email: str = "asker@example.org") -> dict:
        asked = self.api.client().post(
            "/api/developers/invitations",
            json={"email": email, "organization": "Asker", "domain": domain, "note": "rates"},
        )
        assert asked.status_code == 202
        operator = self.operator()
        [request] = [
            r for r in operator.get(f"{V1}/staff/invitations").json() if r["domain"] == domain
        ]
        invited = operator.post(f"{V1}/staff/invitations/{request['id']}/invite")
        assert invited.status_code == 200, invited.text
        return invited.json()

    def operator(self) -> httpx.Client:
        if not hasattr(self, "_operator"):
            self._operator = self.api.signed_in(OP, operator=True)
        return self._operator

    def gate(self, client: httpx.Client, org: int) -> tuple[bool, list[str]]:
        answer = client.get(f"{V1}/portal/organizations/{org}/gate")
        assert answer.status_code == 200, answer.text
        body = answer.json()
        return body["may_submit"], [r["code"] for r in body["reasons"]]

    def resume(self, client: httpx.Client, email: str) -> None:
        """A new session for the account (after the clock moved past the old one's end)."""
        with Session(self.api.engine, expire_on_commit=False) as db:
            account = accounts.find_account(db, email)
            assert account is not None
            cookie = accounts.start_session(db, account, self.api.clock())
            db.commit()
        client.cookies.set(SESSION_COOKIE, cookie)

    def mail_to(self, address: str) -> list[tuple[str, str]]:
        found = []
        for recipients, message in self.inbox.messages:
            if address in recipients:
                found.append((str(message["Subject"]), message.get_payload(decode=True).decode()))
        return found


@pytest.fixture
def portal(
    live_server, pg_engine: Engine, passwords, world: ProofWorld, smtp: tuple[Inbox, int]
) -> Iterator[Portal]:
    inbox, port = smtp
    mailer = SmtpMailer(MailSettings(smtp_host="127.0.0.1", smtp_port=port))
    with live_api(
        live_server, pg_engine, passwords, mailer=mailer, domain_prover=world.prover()
    ) as api:
        yield Portal(api, world, inbox)


@pytest.fixture
def sqlite_portal(
    live_server,
    accounts_sqlite_template: Path,
    tmp_path: Path,
    passwords,
    world: ProofWorld,
    smtp: tuple[Inbox, int],
) -> Iterator[Portal]:
    """The same on the embedded SQLite default (each writing request holds the write lock)."""
    path = tmp_path / "almanac.db"
    shutil.copy(accounts_sqlite_template, path)
    engine = make_engine(f"sqlite:///{path}")
    inbox, port = smtp
    mailer = SmtpMailer(MailSettings(smtp_host="127.0.0.1", smtp_port=port))
    try:
        with live_api(
            live_server, engine, passwords, mailer=mailer, domain_prover=world.prover()
        ) as api:
            yield Portal(api, world, inbox)
    finally:
        engine.dispose()


def test_from_sign_up_to_may_submit_entirely_over_http(portal: Portal) -> None:
    sign_up_to_may_submit(portal)


def test_from_sign_up_to_may_submit_on_the_embedded_default(sqlite_portal: Portal) -> None:
    sign_up_to_may_submit(sqlite_portal)


def sign_up_to_may_submit(portal: Portal) -> None:
    client = portal.api.client()
    email = "ada@examplebank.org"
    made = client.post(f"{V1}/auth/signup", json={"email": email, "password": PASSWORD})
    assert made.status_code == 201
    portal.inbox.wait(1)
    [(_, body)] = portal.mail_to(email)
    [link] = re.findall(r"http://\S+/api/v1/auth/verify\?token=\S+", body)
    assert client.get(link).json()["verified"] is True
    signed = client.post(f"{V1}/auth/signin", json={"email": email, "password": PASSWORD})
    assert signed.status_code == 200

    org = portal.org(client, "Example Bank")
    assert portal.gate(client, org) == (
        False,
        ["DOMAIN-NOT-VERIFIED", "DOMAIN-NOT-INVITED", "AGREEMENT-NOT-ACCEPTED"],
    )

    named = portal.name(client, org, "ExampleBank.org")
    assert named.status_code == 200
    proof = named.json()
    assert proof["state"] == "unverified" and proof["domain"] == "examplebank.org"
    assert proof["txt_name"] == "_almanac-verify.examplebank.org"
    assert proof["file_url"] == "https://examplebank.org/.well-known/almanac-verify.txt"
    assert client.get(f"{V1}/portal/organizations/{org}/domain").json() == proof

    # Not proved yet is an answer, not an error.
    early = client.post(f"{V1}/portal/organizations/{org}/domain/check")
    assert early.status_code == 200 and early.json()["state"] == "unverified"
    assert "NXDOMAIN" in early.json()["last_check"]["dns_detail"]

    portal.world.site.serve(
        "examplebank.org", (proof["txt_value"] + "\n").encode()
    )  # the file this time
    checked = client.post(f"{V1}/portal/organizations/{org}/domain/check").json()
    assert checked["state"] == "verified" and checked["proved_by"] == "file"
    assert checked["last_check"]["file_proved"] and checked["last_check"]["kind"] == "manual"
    assert portal.gate(client, org) == (False, ["DOMAIN-NOT-INVITED", "AGREEMENT-NOT-ACCEPTED"])

    # Anyone asks to be invited, with no credentials; nothing is mailed until invited.
    asked = httpx.post(
        f"{portal.api.base_url}/api/developers/invitations",
        json={
            "email": email,
            "organization": "Example Bank",
            "domain": "examplebank.org",
            "note": "ECB reference rates",
        },
    )
    assert asked.status_code == 202
    assert len(portal.mail_to(email)) == 1  # the verification mail only
    operator = portal.operator()
    [request] = operator.get(f"{V1}/staff/invitations").json()
    invited = operator.post(f"{V1}/staff/invitations/{request['id']}/invite")
    assert invited.json()["decision"] == "invited" and invited.json()["mailed"] is True
    portal.inbox.wait(2)
    [_, (subject, body)] = portal.mail_to(email)
    assert "examplebank.org" in subject and "Developer Agreement" in body
    assert portal.gate(client, org) == (False, ["AGREEMENT-NOT-ACCEPTED"])

    current = client.get(f"{V1}/portal/agreement").json()["in_effect"]
    assert current["version"] == 1 and current["effective_on"] == "2026-10-01"
    assert "Developer Agreement" in current["text"]
    accepted = client.post(f"{V1}/portal/organizations/{org}/agreement", json={"version": 1})
    assert accepted.status_code == 201
    assert accepted.json()["accepted_by_email"] == email

    assert portal.gate(client, org) == (True, [])


@pytest.mark.parametrize(
    ("domain", "code"),
    [
        ("93.184.216.34", "DOMAIN-IP-ADDRESS"),
        ("examplebank", "DOMAIN-NO-DOT"),
        ("example_bank.org", "DOMAIN-INVALID"),
        ("co.uk", "DOMAIN-PUBLIC-SUFFIX"),
        ("github.io", "DOMAIN-PUBLIC-SUFFIX"),
        ("herokuapp.com", "DOMAIN-PUBLIC-SUFFIX"),
        ("someone.github.io", "DOMAIN-SHARED-HOSTING"),
    ],
)
def test_refused_domain_forms_over_http(portal: Portal, domain: str, code: str) -> None:
    client = portal.api.signed_in("owner@example.org")
    org = portal.org(client, "Refused")
    body = assert_problem(portal.name(client, org, domain), 422, code)
    assert "domain" in body["detail"]
    assert_problem(client.get(f"{V1}/portal/organizations/{org}/domain"), 404, "NOT-FOUND")


def test_a_domain_another_organization_verified_is_taken(portal: Portal) -> None:
    portal.verified("first@example.org", "examplebank.org")
    second = portal.api.signed_in("second@example.org")
    org = portal.org(second, "Second")
    body = assert_problem(portal.name(second, org, "examplebank.org"), 409, "DOMAIN-TAKEN")
    assert "another organization" in body["detail"]


def test_naming_and_checking_are_a_signed_in_owner_or_admins_moves(portal: Portal) -> None:
    owner = portal.api.signed_in("owner@example.org")
    org = portal.org(owner, "Moves")
    portal.api.signed_in("member@example.org")
    added = owner.post(
        f"{V1}/organizations/{org}/members", json={"email": "member@example.org", "role": "member"}
    )
    assert added.status_code == 201
    member = portal.api.signed_in("member2@example.org")  # not a member: NOT-FOUND
    assert_problem(portal.name(member, org, "examplebank.org"), 404, "NOT-FOUND")
    token = owner.post(f"{V1}/tokens", json={"name": "tool"}).json()["token"]
    bearer = portal.api.client()
    bearer.headers["Authorization"] = f"Bearer {token}"
    assert_problem(portal.name(bearer, org, "examplebank.org"), 403, "FORBIDDEN")
    assert_problem(bearer.post(f"{V1}/portal/organizations/{org}/domain/check"), 403, "FORBIDDEN")
    assert_problem(
        bearer.post(f"{V1}/portal/organizations/{org}/agreement", json={"version": 1}),
        403,
        "FORBIDDEN",
    )
    assert_problem(owner.post(f"{V1}/portal/organizations/{org}/domain/check"), 404, "NOT-FOUND")


def test_invitations_mail_only_once_invited_and_declines_mail_nobody(portal: Portal) -> None:
    client, org = portal.verified("owner@examplebank.org", "examplebank.org")
    asker = "asker@examplebank.org"
    anonymous = portal.api.client()
    for domain in ("examplebank.org", "declined.example"):
        asked = anonymous.post(
            "/api/developers/invitations",
            json={"email": asker, "organization": "Bank", "domain": domain, "note": "rates"},
        )
        assert asked.status_code == 202
    operator = portal.operator()
    requests = {r["domain"]: r["id"] for r in operator.get(f"{V1}/staff/invitations").json()}
    assert portal.mail_to(asker) == []

    assert_problem(
        client.post(f"{V1}/staff/invitations/{requests['declined.example']}/decline"),
        403,
        "FORBIDDEN",
    )
    declined = operator.post(f"{V1}/staff/invitations/{requests['declined.example']}/decline")
    assert declined.json()["decision"] == "declined" and declined.json()["mailed"] is False
    for move in ("invite", "decline"):
        assert_problem(
            operator.post(f"{V1}/staff/invitations/{requests['declined.example']}/{move}"),
            409,
            "INVITATION-NOT-OPEN",
        )
    assert_problem(operator.post(f"{V1}/staff/invitations/999999/invite"), 404, "NOT-FOUND")
    assert portal.mail_to(asker) == []
    assert portal.gate(client, org)[1] == ["DOMAIN-NOT-INVITED", "AGREEMENT-NOT-ACCEPTED"]

    invited = operator.post(f"{V1}/staff/invitations/{requests['examplebank.org']}/invite")
    assert invited.status_code == 200 and invited.json()["mailed"] is True
    portal.inbox.wait(1)
    [(subject, body)] = portal.mail_to(asker)
    assert subject == "You are invited to publish plug-ins on Almanac for examplebank.org"
    assert "/portal" in body
    assert [r["domain"] for r in operator.get(f"{V1}/staff/invitations").json()] == []
    # The invitation belongs to the domain: the organization that verified it is invited.
    assert portal.gate(client, org)[1] == ["AGREEMENT-NOT-ACCEPTED"]


def test_a_newer_agreement_version_makes_the_gate_fail_again(portal: Portal) -> None:
    client, org = portal.verified("owner@examplebank.org", "examplebank.org")
    portal.invite("examplebank.org")
    agreement_of = f"{V1}/portal/organizations/{org}/agreement"
    assert_problem(client.post(agreement_of, json={"version": 2}), 409, "AGREEMENT-NOT-IN-EFFECT")
    first = client.post(agreement_of, json={"version": 1})
    again = client.post(agreement_of, json={"version": 1})
    assert first.status_code == again.status_code == 201
    assert first.json() == again.json()  # who and when of the first acceptance stand
    assert portal.gate(client, org) == (True, [])

    operator = portal.operator()
    post = f"{V1}/staff/agreement/versions"
    version_2 = {"effective_on": "2027-01-01", "changes": "Reports within 30 days.", "text": "v2"}
    assert_problem(client.post(post, json=version_2), 403, "FORBIDDEN")
    for early in ("2026-09-01", "2026-11-01"):  # before version 1's date; before today
        assert_problem(
            operator.post(post, json=version_2 | {"effective_on": early}),
            422,
            "AGREEMENT-EFFECTIVE-DATE",
        )
    posted = operator.post(post, json=version_2)
    assert posted.status_code == 201 and posted.json()["version"] == 2
    shown = client.get(f"{V1}/portal/agreement").json()
    assert shown["in_effect"]["version"] == 1
    assert [v["version"] for v in shown["upcoming"]] == [2]
    assert [v["version"] for v in client.get(f"{V1}/portal/agreement/versions").json()] == [1, 2]
    assert client.get(f"{V1}/portal/agreement/versions/2").json()["text"] == "v2"
    assert portal.gate(client, org) == (True, [])  # version 1 is still the one in effect

    portal.api.clock.moment = datetime(2027, 1, 1, 0, 0, tzinfo=UTC)
    portal.resume(client, "owner@examplebank.org")
    assert portal.gate(client, org) == (False, ["AGREEMENT-NOT-ACCEPTED"])
    standing = client.get(agreement_of).json()
    assert standing["in_effect_version"] == 2 and standing["accepted_in_effect"] is False
    assert_problem(client.post(agreement_of, json={"version": 1}), 409, "AGREEMENT-NOT-IN-EFFECT")
    assert client.post(agreement_of, json={"version": 2}).status_code == 201
    assert portal.gate(client, org) == (True, [])
    standing = client.get(agreement_of).json()
    assert [a["version"] for a in standing["acceptances"]] == [1, 2]
    assert standing["accepted_in_effect"] is True


def test_nothing_is_accepted_before_version_1_takes_effect(portal: Portal) -> None:
    portal.api.clock.moment = datetime(2026, 9, 30, 23, 0, tzinfo=UTC)
    client, org = portal.verified("owner@examplebank.org", "examplebank.org")
    assert client.get(f"{V1}/portal/agreement").json()["in_effect"] is None
    body = assert_problem(
        client.post(f"{V1}/portal/organizations/{org}/agreement", json={"version": 1}),
        409,
        "AGREEMENT-NOT-IN-EFFECT",
    )
    assert "2026-10-01" in body["detail"]
    reasons = client.get(f"{V1}/portal/organizations/{org}/gate").json()["reasons"]
    assert reasons[-1]["code"] == "AGREEMENT-NOT-ACCEPTED"
    assert "no Developer Agreement version is in effect" in reasons[-1]["message"]
    assert reasons[-1]["docs"].endswith("/docs/problems/AGREEMENT-NOT-ACCEPTED")
    portal.api.clock.moment += timedelta(hours=1)
    accepted = client.post(f"{V1}/portal/organizations/{org}/agreement", json={"version": 1})
    assert accepted.status_code == 201


def test_plug_in_ids_bind_to_one_organization_for_good(portal: Portal) -> None:
    empty_plugin_tables(portal.api.engine)
    try:
        bank, bank_org = portal.verified("owner@examplebank.org", "examplebank.org")
        other, other_org = portal.verified("owner@example.net", "rates.example.net")
        reserve = f"{V1}/portal/organizations/{{}}/ids"

        mine = bank.post(reserve.format(bank_org), json={"id": "examplebank-rates"})
        assert mine.status_code == 201 and mine.json()["kind"] == "reservation"
        again = bank.post(reserve.format(bank_org), json={"id": "examplebank-rates"})
        assert again.status_code == 201 and again.json() == mine.json()
        assert_problem(
            other.post(reserve.format(other_org), json={"id": "examplebank-rates"}),
            409,
            "PLG-ID-TAKEN",
        )
        for word in ("store", "portal", "almanac-rates", "alm-x", "test-rates"):
            assert_problem(
                bank.post(reserve.format(bank_org), json={"id": word}), 422, "PLG-ID-RESERVED"
            )
        assert_problem(
            bank.post(reserve.format(bank_org), json={"id": "Bank_Rates"}), 422, "PLG-MANIFEST-ID"
        )

        # An id the service registered at the host is the service's.
        hosted = example_plugin(portal.api.engine, "uk-bank-holidays", portal.api.clock())
        assert_problem(
            bank.post(reserve.format(bank_org), json={"id": hosted.id}), 409, "PLG-ID-TAKEN"
        )

        # A retired id is never used again, by anyone.
        with Session(portal.api.engine) as db:
            ids.retire_id(db, "examplebank-rates", "owner@examplebank.org", portal.api.clock())
            db.commit()
        for client, org in ((bank, bank_org), (other, other_org)):
            assert_problem(
                client.post(reserve.format(org), json={"id": "examplebank-rates"}),
                409,
                "PLG-ID-RETIRED",
            )

        # Reserving needs a verified domain; an unverified organization's upload binds.
        newcomer = portal.api.signed_in("owner@newcomer.example")
        newcomer_org = portal.org(newcomer, "Newcomer")
        assert_problem(
            newcomer.post(reserve.format(newcomer_org), json={"id": "newcomer-rates"}),
            403,
            "DOMAIN-NOT-VERIFIED",
        )
        with Session(portal.api.engine) as db:
            bound = ids.bind_on_upload(
                db, newcomer_org, "newcomer-rates", "owner@newcomer.example", portal.api.clock()
            )
            db.commit()
        assert bound.organization_id == newcomer_org
        assert_problem(
            other.post(reserve.format(other_org), json={"id": "newcomer-rates"}),
            409,
            "PLG-ID-TAKEN",
        )
        listed = bank.get(reserve.format(bank_org)).json()
        assert [(b["id"], b["retired_at"] is not None) for b in listed] == [
            ("examplebank-rates", True)
        ]
        assert [b["id"] for b in newcomer.get(reserve.format(newcomer_org)).json()] == [
            "newcomer-rates"
        ]
    finally:
        empty_plugin_tables(portal.api.engine)
