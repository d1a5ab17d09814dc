"""Limits on repeated attempts (issue 31): failed sign-ins per account and per client address,
device login codes per address, "Check now" per organization and the invitation requests per
address. Through the real app over HTTP, on PostgreSQL and on SQLite, with the clock the test
moves: the last allowed attempt passes, the first refused one is 429 with `Retry-After` and the
limit's code, and once the window has passed attempts are allowed again.

The client address is the one uvicorn gives the app: the connection's, or, from a proxy it
trusts (its `--forwarded-allow-ips`, by default 127.0.0.1, the test client's own address), the
`X-Forwarded-For` the proxy set. The tests speak as a proxy on 127.0.0.1 to come from several
addresses, and as a peer uvicorn does not trust (127.0.0.2) to show that such a peer cannot
pick its address with the header."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import timedelta

import httpx
import pytest
from sqlalchemy import Engine

from tests.accounts.conftest import (  # noqa: F401  (fixtures)
    accounts_engine,
    accounts_sqlite_template,
)
from tests.accounts.helpers import PASSWORD
from tests.api.conftest import Api, assert_problem, live_api

V1 = "/api/v1"
WRONG = PASSWORD + "-wrong"


@pytest.fixture
def lapi(live_server, accounts_engine: Engine, passwords) -> Iterator[Api]:  # noqa: F811
    """The live app on PostgreSQL, then on the embedded SQLite default."""
    with live_api(live_server, accounts_engine, passwords) as api:
        yield api


def coming_from(api: Api, address: str) -> httpx.Client:
    """A client whose requests reach the app from `address`, as a trusted proxy says."""
    client = api.client()
    client.headers["X-Forwarded-For"] = address
    return client


def refused(response: httpx.Response, code: str, retry_after: int) -> str:
    """The 429 problem with the limit's code and `Retry-After` in seconds; its detail."""
    body = assert_problem(response, 429, code)
    assert response.headers["retry-after"] == str(retry_after), response.headers
    return str(body["detail"])


def sign_in(client: httpx.Client, email: str, password: str = PASSWORD) -> httpx.Response:
    return client.post(f"{V1}/auth/signin", json={"email": email, "password": password})


def failed(response: httpx.Response) -> None:
    assert_problem(response, 401, "AUTH-FAILED")


# -- sign-in per account ------------------------------------------------------------------


def test_an_account_is_locked_after_10_failed_sign_ins_in_15_minutes(lapi: Api) -> None:
    lapi.signed_in("ada@example.org")
    lapi.signed_in("bob@example.org")
    # Each try from another address: the account's own count, not the address's, locks it.
    for n in range(9):
        failed(sign_in(coming_from(lapi, f"192.0.2.{n + 1}"), "ada@example.org", WRONG))
    # A right password within the limit signs in; it is no failure and resets nothing.
    assert sign_in(coming_from(lapi, "192.0.2.20"), "ADA@example.org").status_code == 200
    failed(sign_in(coming_from(lapi, "192.0.2.21"), "ada@example.org", WRONG))  # the 10th

    elsewhere = coming_from(lapi, "198.51.100.7")
    right = refused(sign_in(elsewhere, "ada@example.org"), "SIGN-IN-LOCKED", 900)
    wrong = refused(sign_in(elsewhere, "ada@example.org", WRONG), "SIGN-IN-LOCKED", 900)
    # The account is told how long; never whether the password was the wrong part.
    assert right == wrong
    assert "try again in 15 minutes" in right and "password" not in right
    assert sign_in(elsewhere, "bob@example.org").status_code == 200

    # An address with no account is locked the same way: the limit tells nobody which
    # addresses have an account.
    for n in range(10):
        failed(sign_in(coming_from(lapi, f"192.0.2.{n + 30}"), "nobody@example.org", WRONG))
    nobody = refused(sign_in(elsewhere, "nobody@example.org"), "SIGN-IN-LOCKED", 900)
    assert nobody == right

    lapi.clock.advance(timedelta(minutes=15) - timedelta(seconds=1))
    assert "try again in 1 second" in refused(
        sign_in(elsewhere, "ada@example.org"), "SIGN-IN-LOCKED", 1
    )
    lapi.clock.advance(timedelta(seconds=1))
    assert sign_in(elsewhere, "ada@example.org").status_code == 200


def test_the_window_slides_the_oldest_failure_out_first(lapi: Api) -> None:
    lapi.signed_in("ada@example.org")
    client = coming_from(lapi, "192.0.2.1")
    failed(sign_in(client, "ada@example.org", WRONG))
    lapi.clock.advance(timedelta(minutes=5))
    for _ in range(9):
        failed(sign_in(client, "ada@example.org", WRONG))
    refused(sign_in(client, "ada@example.org"), "SIGN-IN-LOCKED", 600)
    # The first failure leaves the window: one more try, then the other nine keep it locked.
    lapi.clock.advance(timedelta(minutes=10))
    failed(sign_in(client, "ada@example.org", WRONG))
    refused(sign_in(client, "ada@example.org"), "SIGN-IN-LOCKED", 300)
    lapi.clock.advance(timedelta(minutes=5))
    assert sign_in(client, "ada@example.org").status_code == 200


# -- sign-in per address ------------------------------------------------------------------


def test_an_address_is_held_to_30_failed_sign_ins_in_15_minutes(lapi: Api) -> None:
    lapi.signed_in("mallory@example.org")
    lapi.signed_in("victim@example.org")
    attacker = coming_from(lapi, "203.0.113.9")
    # One guess each at many accounts (password spraying), her own sign-in in between: a
    # success counts no failure and takes none away, so alternating gains nothing.
    for n in range(15):
        failed(sign_in(attacker, f"user{n}@example.org", WRONG))
    assert sign_in(attacker, "mallory@example.org").status_code == 200
    for n in range(15, 29):
        failed(sign_in(attacker, f"user{n}@example.org", WRONG))
    assert sign_in(attacker, "mallory@example.org").status_code == 200
    failed(sign_in(attacker, "victim@example.org", WRONG))  # the 30th failure

    detail = refused(sign_in(attacker, "mallory@example.org"), "SIGN-IN-ADDRESS-LIMITED", 900)
    assert "try again in 15 minutes" in detail and "password" not in detail
    refused(sign_in(attacker, "victim@example.org"), "SIGN-IN-ADDRESS-LIMITED", 900)
    # The victim, from their own address, is not held by it.
    assert sign_in(coming_from(lapi, "203.0.113.10"), "victim@example.org").status_code == 200

    lapi.clock.advance(timedelta(minutes=15))
    assert sign_in(attacker, "mallory@example.org").status_code == 200


def test_an_untrusted_peer_cannot_pick_its_address_with_x_forwarded_for(lapi: Api) -> None:
    # 127.0.0.2 is not among uvicorn's trusted proxies: its X-Forwarded-For is ignored and
    # every request counts for the connection's own address.
    peer = httpx.Client(
        base_url=lapi.base_url,
        timeout=10,
        transport=httpx.HTTPTransport(local_address="127.0.0.2"),
    )
    lapi.clients.append(peer)
    for n in range(30):
        headers = {"X-Forwarded-For": f"192.0.2.{n + 1}"}
        body = {"email": f"user{n}@example.org", "password": WRONG}
        failed(peer.post(f"{V1}/auth/signin", json=body, headers=headers))
    body = {"email": "someone@example.org", "password": WRONG}
    answer = peer.post(f"{V1}/auth/signin", json=body, headers={"X-Forwarded-For": "192.0.2.99"})
    refused(answer, "SIGN-IN-ADDRESS-LIMITED", 900)


# -- device login codes per address -------------------------------------------------------


def device_code(client: httpx.Client, client_id: str = "almanac-plugin") -> httpx.Response:
    form = {"client_id": client_id, "agent_name": "Claude", "machine_id": "machine-0001"}
    return client.post(f"{V1}/device/code", data=form)


def test_an_address_gets_10_device_codes_an_hour(lapi: Api) -> None:
    tool = coming_from(lapi, "192.0.2.77")
    for _ in range(10):
        made = device_code(tool)
        assert made.status_code == 200, made.text
    last = made.json()["device_code"]
    detail = refused(device_code(tool), "DEVICE-CODE-LIMITED", 3600)
    assert "try again in 1 hour" in detail

    # Everything else of the grant answers as before, OAuth errors included.
    other = device_code(tool, client_id="someone-else")
    assert other.status_code == 400 and other.json()["error"] == "invalid_client"
    grant = "urn:ietf:params:oauth:grant-type:device_code"
    polled = tool.post(
        f"{V1}/device/token",
        data={"grant_type": grant, "device_code": last, "client_id": "almanac-plugin"},
    )
    assert polled.status_code == 400 and polled.json()["error"] == "authorization_pending"
    assert device_code(coming_from(lapi, "192.0.2.78")).status_code == 200

    lapi.clock.advance(timedelta(hours=1) - timedelta(seconds=1))
    refused(device_code(tool), "DEVICE-CODE-LIMITED", 1)
    lapi.clock.advance(timedelta(seconds=1))
    assert device_code(tool).status_code == 200


# -- "Check now" per organization ---------------------------------------------------------


def organization_with_domain(api: Api, owner: httpx.Client, name: str, domain: str) -> int:
    made = owner.post(f"{V1}/organizations", json={"name": name})
    assert made.status_code == 201, made.text
    org = int(made.json()["id"])
    named = owner.put(f"{V1}/portal/organizations/{org}/domain", json={"domain": domain})
    assert named.status_code == 200, named.text
    return org


def check_now(client: httpx.Client, org: int) -> httpx.Response:
    return client.post(f"{V1}/portal/organizations/{org}/domain/check")


def test_check_now_10_times_an_hour_per_organization(lapi: Api) -> None:
    owner = lapi.signed_in("owner@bank.example")
    admin = lapi.signed_in("admin@bank.example")
    org = organization_with_domain(lapi, owner, "Bank", "bank-limits.org")
    added = owner.post(
        f"{V1}/organizations/{org}/members", json={"email": "admin@bank.example", "role": "admin"}
    )
    assert added.status_code == 201, added.text
    other = organization_with_domain(lapi, owner, "Other", "other-limits.org")
    for n in range(10):
        # Owners and admins share their organization's count.
        checked = check_now(owner if n % 2 else admin, org)
        assert checked.status_code == 200, checked.text
    detail = refused(check_now(admin, org), "DOMAIN-CHECK-LIMITED", 3600)
    assert "try again in 1 hour" in detail
    refused(check_now(owner, org), "DOMAIN-CHECK-LIMITED", 3600)
    assert check_now(owner, other).status_code == 200

    lapi.clock.advance(timedelta(minutes=30))
    refused(check_now(owner, org), "DOMAIN-CHECK-LIMITED", 1800)
    lapi.clock.advance(timedelta(minutes=30))
    assert check_now(owner, org).status_code == 200


# -- invitation requests per address ------------------------------------------------------


def ask(client: httpx.Client, email: str, domain: str) -> httpx.Response:
    body = {"email": email, "organization": "Example", "domain": domain, "note": "rates"}
    return client.post("/api/developers/invitations", json=body)


def test_5_invitation_requests_a_day_per_address_with_retry_after(lapi: Api) -> None:
    client = coming_from(lapi, "192.0.2.5")
    for n in range(5):
        assert ask(client, "dev@example.org", f"d{n}.example").status_code == 202
    lapi.clock.advance(timedelta(hours=1))
    detail = refused(ask(client, "DEV@example.org", "d5.example"), "RATE-LIMITED", 23 * 3600)
    assert "try again in 23 hours" in detail
    assert ask(client, "else@example.org", "d5.example").status_code == 202
    lapi.clock.advance(timedelta(hours=23) - timedelta(seconds=1))
    refused(ask(client, "dev@example.org", "d6.example"), "RATE-LIMITED", 1)
    lapi.clock.advance(timedelta(seconds=1))
    assert ask(client, "dev@example.org", "d6.example").status_code == 202
