"""Agent access over HTTP on the live app with real PostgreSQL ("Authentication" 4-5; "Agent
login"; DECISIONS 6 and 10): the device grant's endpoints speak RFC 8628, an owner or admin
approves by the user code, the agent's token reaches only its organization's portal routes and
there only the moves the rule allows (AGENT_FORBIDDEN otherwise), every upload and attestation
names the agent, and the token is revoked by logout, Revoke in the portal, a new login on the
same machine, and its approver's demotion."""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

import httpx
import pytest
from sqlalchemy.orm import Session

from almanac.platform import accounts
from tests.agents.helpers import (
    V1,
    agent_token,
    approve,
    bearer,
    oauth_error,
    poll,
    start,
)
from tests.api.conftest import Api, assert_problem
from tests.publishing.test_submission import ALL, may_submit
from tests.publishing.test_uploads import (  # noqa: F401  (fixture)
    Publisher,
    new_org,
    publisher,
    room_checks_done,
    uk,
)


@dataclass
class Bank:
    pub: Publisher
    admin: httpx.Client  # the approver of the agents below
    admin_email: str

    @property
    def api(self) -> Api:
        return self.pub.api

    @property
    def org(self) -> int:
        return self.pub.org

    @property
    def portal(self) -> str:
        return f"{V1}/portal/organizations/{self.org}"


@pytest.fixture
def bank(publisher: Publisher) -> Iterator[Bank]:  # noqa: F811
    email = "admin@bank.example"
    admin = publisher.api.signed_in(email)
    added = publisher.owner.post(
        f"{V1}/organizations/{publisher.org}/members", json={"email": email, "role": "admin"}
    )
    assert added.status_code == 201, added.text
    yield Bank(publisher, admin, email)


def test_the_device_endpoints_speak_rfc_8628(api: Api) -> None:
    client = api.client()
    started = start(client)
    assert set(started) == {
        "device_code",
        "user_code",
        "verification_uri",
        "verification_uri_complete",
        "expires_in",
        "interval",
    }
    assert re.fullmatch(
        r"[BCDFGHJKLMNPQRSTVWXZ]{4}-[BCDFGHJKLMNPQRSTVWXZ]{4}", started["user_code"]
    )
    assert started["verification_uri"] == f"{api.base_url}/portal/device"
    assert started["verification_uri_complete"] == (
        f"{api.base_url}/portal/device?user_code={started['user_code']}"
    )
    assert (started["expires_in"], started["interval"]) == (600, 5)
    code = started["device_code"]
    assert oauth_error(poll(client, code)) == "authorization_pending"
    slow = poll(client, code)  # at once, sooner than 5 seconds
    assert oauth_error(slow) == "slow_down" and slow.json()["interval"] == 10
    api.clock.advance(timedelta(seconds=10))
    assert oauth_error(poll(client, code)) == "authorization_pending"
    assert oauth_error(poll(client, "unknown")) == "invalid_grant"
    form = {"grant_type": "urn:ietf:params:oauth:grant-type:device_code", "device_code": code}
    wrong_client = client.post(f"{V1}/device/token", data={**form, "client_id": "other"})
    assert oauth_error(wrong_client) == "invalid_client"
    wrong_grant = client.post(
        f"{V1}/device/token",
        data={**form, "client_id": "almanac-plugin", "grant_type": "password"},
    )
    assert oauth_error(wrong_grant) == "unsupported_grant_type"
    as_json = client.post(f"{V1}/device/token", json={**form, "client_id": "almanac-plugin"})
    assert oauth_error(as_json) == "invalid_request"
    twice = client.post(
        f"{V1}/device/token",
        content=f"client_id=almanac-plugin&client_id=almanac-plugin&device_code={code}",
        headers={"content-type": "application/x-www-form-urlencoded"},
    )
    assert oauth_error(twice) == "invalid_request"
    no_name = client.post(
        f"{V1}/device/code", data={"client_id": "almanac-plugin", "machine_id": "machine-0001"}
    )
    assert oauth_error(no_name) == "invalid_request"


def test_an_owner_or_admin_approves_by_the_code_and_the_token_is_handed_once(bank: Bank) -> None:
    api = bank.api
    client = api.client()
    started = start(client, "Claude on the build machine")
    typed = started["user_code"].replace("-", "").lower()
    seen = bank.admin.get(f"{V1}/portal/device/{typed}")
    assert seen.status_code == 200, seen.text
    body = seen.json()
    assert (body["agent_name"], body["state"]) == ("Claude on the build machine", "pending")
    assert body["organizations"] == [{"id": bank.org, "name": "Bank"}]
    member = api.signed_in("member@bank.example")
    bank.pub.owner.post(
        f"{V1}/organizations/{bank.org}/members",
        json={"email": "member@bank.example", "role": "member"},
    )
    assert_problem(approve(member, started["user_code"], bank.org), 403, "FORBIDDEN")
    token = bank.admin.post(f"{V1}/tokens", json={"name": "script"}).json()["token"]
    person_token = bearer(api, token)
    assert_problem(approve(person_token, started["user_code"], bank.org), 403, "FORBIDDEN")
    assert_problem(bank.admin.get(f"{V1}/portal/device/BCDF-GHJK"), 404, "NOT-FOUND")
    approved = approve(bank.admin, started["user_code"], bank.org, may_publish=True)
    assert approved.status_code == 200, approved.text
    assert approved.json()["state"] == "approved" and approved.json()["may_publish"] is True
    api.clock.advance(timedelta(seconds=5))
    issued = poll(client, started["device_code"])
    assert issued.status_code == 200, issued.text
    assert issued.headers["cache-control"] == "no-store"
    got = issued.json()
    assert got["access_token"].startswith("almagent_") and got["token_type"] == "Bearer"
    assert (got["organization_id"], got["may_publish"], got["agent_name"]) == (
        bank.org,
        True,
        "Claude on the build machine",
    )
    api.clock.advance(timedelta(seconds=5))
    assert oauth_error(poll(client, started["device_code"])) == "invalid_grant"
    again = approve(bank.admin, started["user_code"], bank.org)
    assert_problem(again, 409, "STATE-CONFLICT")
    listed = bank.admin.get(f"{bank.portal}/agents").json()
    assert [(a["agent_name"], a["approved_by"], a["active"]) for a in listed] == [
        ("Claude on the build machine", bank.admin_email, True)
    ]


def test_denied_and_expired_logins_end(bank: Bank) -> None:
    api = bank.api
    client = api.client()
    denied = start(client)
    refused = bank.admin.post(f"{V1}/portal/device/{denied['user_code']}/deny")
    assert refused.status_code == 200 and refused.json()["state"] == "denied"
    assert oauth_error(poll(client, denied["device_code"])) == "access_denied"
    late = start(client, machine="machine-0002")
    api.clock.advance(timedelta(minutes=10))
    assert oauth_error(poll(client, late["device_code"])) == "expired_token"
    assert bank.admin.get(f"{V1}/portal/device/{late['user_code']}").json()["state"] == "expired"
    assert_problem(approve(bank.admin, late["user_code"], bank.org), 409, "STATE-CONFLICT")


# Operations that take no credentials at all, or are the grant's own.
OPEN = {
    ("post", "/api/v1/auth/signup"),
    ("get", "/api/v1/auth/verify"),
    ("post", "/api/v1/auth/verify/resend"),
    ("post", "/api/v1/auth/signin"),
    ("post", "/api/v1/auth/signout"),
    ("get", "/api/v1/portal/agreement"),
    ("get", "/api/v1/portal/agreement/versions"),
    ("get", "/api/v1/portal/agreement/versions/{version}"),
    ("post", "/api/v1/device/code"),
    ("post", "/api/v1/device/token"),
    ("post", "/api/v1/device/logout"),
    # Takes no credentials; its body is read first: asked with a whole body below.
    ("post", "/api/v1/developers/invitations"),
    ("post", "/api/developers/invitations"),
    # Public pages and files, read by anyone.
    ("get", "/docs/problems/{code}"),
    ("get", "/tool/almanac-plugin.mjs"),
    ("get", "/health"),
    ("get", "/api/v1/store/categories"),
    # Calendar feeds: a public plug-in's, and a reader's at its secret address (no token).
    ("get", "/api/v1/feeds/plugins/{plugin_id}.ics"),
    ("get", "/api/v1/feeds/{secret}.ics"),
}
# The organization's portal moves an agent not allowed to publish makes (tested below).
AGENT_MOVES = {
    ("get", "/uploads"),
    ("post", "/uploads"),
    ("get", "/uploads/{upload_id}"),
    ("post", "/uploads/{upload_id}/withdraw"),
    ("post", "/uploads/{upload_id}/checks"),
    ("get", "/uploads/{upload_id}/review"),
    ("put", "/uploads/{upload_id}/review"),
    ("get", "/uploads/{upload_id}/attestations"),
    ("post", "/uploads/{upload_id}/attestations"),
    ("post", "/uploads/{upload_id}/submit"),
    ("get", "/uploads/{upload_id}/manifest"),
    ("get", "/domain"),
    ("get", "/agreement"),
    ("get", "/ids"),
    ("get", "/gate"),
    ("get", "/plugins"),
    ("get", "/plugins/{plugin_id}"),
    ("get", "/plugins/{plugin_id}/history"),
    ("get", "/plugins/{plugin_id}/reports"),
    ("get", "/plugins/{plugin_id}/rollouts"),
    ("get", "/plugins/{plugin_id}/figures"),
    ("get", "/plugins/{plugin_id}/shadow-runs/{shadow_id}/diff"),
    ("get", "/notices"),
}
# The publishing moves (the lead's routes): refused to an agent approved without publishing.
PUBLISHING_MOVES = {
    ("post", "/uploads/{upload_id}/publish"),
    ("post", "/plugins/{plugin_id}/unpublish"),
    ("post", "/plugins/{plugin_id}/relist"),
    ("post", "/plugins/{plugin_id}/rollout/promote"),
    ("post", "/plugins/{plugin_id}/rollout/stop"),
    ("post", "/plugins/{plugin_id}/rollout/roll-back"),
}
ORG_PREFIX = "/api/v1/portal/organizations/{organization_id}"
PATH_VALUES: dict[str, Any] = {
    "upload_id": 1,
    "agent_id": 1,
    "account_id": 1,
    "token_id": 1,
    "request_id": 1,
    "version_id": 1,
    "shadow_id": 1,
    "endpoint_id": 1,
    "delivery_id": 1,
    "series": "england-and-wales",
    "version": 1,
    "plugin_id": "uk-bank-holidays",
    "user_code": "BCDF-GHJK",
    "role": "reviewer",
    "code": "AUTH-REQUIRED",
}


def _operations(api: Api) -> list[tuple[str, str]]:
    document = api.client().get(f"{V1}/openapi.json").json()
    return [(method, path) for path, ops in document["paths"].items() for method in ops]


def _url(path: str, organization_id: int) -> str:
    return path.format(organization_id=organization_id, **PATH_VALUES)


def test_the_agent_token_reaches_nothing_but_its_organizations_portal_moves(bank: Bank) -> None:
    api = bank.api
    agent = bearer(api, agent_token(api, bank.admin, bank.org))
    _, other_org = new_org(api, "owner@other.example", "Other")
    checked = 0
    for method, path in _operations(api):
        if (method, path) in OPEN:
            continue
        inside = path.startswith(ORG_PREFIX) and (method, path.removeprefix(ORG_PREFIX)) in (
            AGENT_MOVES
        )
        archive = path.endswith(("/uploads", "/pack"))
        headers = {"content-type": "application/zip"} if archive else {}
        # Its own organization's moves are tested below; another organization's are refused.
        url = _url(path, other_org if inside else bank.org)
        refused = agent.request(method.upper(), url, content=b"{}", headers=headers)
        assert refused.status_code == 403, (method, path, refused.text)
        if (method, path.removeprefix(ORG_PREFIX)) in PUBLISHING_MOVES:
            assert_problem(refused, 403, "AGENT_MAY_NOT_PUBLISH")
            continue
        body = assert_problem(refused, 403, "AGENT_FORBIDDEN")
        assert "agent" in body["detail"], (method, path, body)
        checked += 1
    assert checked > 50
    # Asking to be invited (no credentials are taken there) is refused for an agent by name.
    ask = {"email": "a@bank.example", "organization": "Bank", "domain": "bank.example"}
    for url in ("/api/developers/invitations", f"{V1}/developers/invitations"):
        asked = agent.post(url, json={**ask, "note": "holidays"})
        assert "invited" in assert_problem(asked, 403, "AGENT_FORBIDDEN")["detail"]


def test_person_only_moves_are_agent_forbidden_by_name(bank: Bank) -> None:
    api = bank.api
    agent = bearer(api, agent_token(api, bank.admin, bank.org, may_publish=True))
    pending = start(api.client(), machine="machine-0009")
    moves = [
        ("PUT", f"{bank.portal}/domain", {"domain": "bank.example"}, "naming"),
        ("POST", f"{bank.portal}/domain/check", None, "verifying"),
        ("POST", f"{bank.portal}/agreement", {"version": 1}, "Agreement"),
        ("POST", f"{bank.portal}/ids", {"id": "bank-rates"}, "reserving"),
        ("GET", f"{V1}/portal/device/{pending['user_code']}", None, "approving"),
        (
            "POST",
            f"{V1}/portal/device/{pending['user_code']}/approve",
            {"organization_id": bank.org, "may_publish": True},
            "approving",
        ),
        ("GET", f"{bank.portal}/agents", None, "agents"),
        ("POST", f"{bank.portal}/agents/1/revoke", None, "revoking"),
    ]
    for method, url, body, words in moves:
        refused = agent.request(method, url, json=body)
        detail = assert_problem(refused, 403, "AGENT_FORBIDDEN")["detail"]
        assert words in detail, (url, detail)
    assert bank.admin.get(f"{V1}/portal/device/{pending['user_code']}").json()["state"] == (
        "pending"
    )


def test_an_agent_uploads_reviews_attests_and_submits_under_its_name(bank: Bank) -> None:
    api = bank.api
    agent = bearer(api, agent_token(api, bank.admin, bank.org, name="Claude"))
    made = bank.pub.send(uk(), client=agent)
    assert made.status_code == 201, made.text
    upload = made.json()
    assert (upload["agent_name"], upload["uploaded_by"]) == ("Claude", bank.admin_email)
    room_checks_done(bank.pub)
    uploads = f"{bank.portal}/uploads/{upload['id']}"
    assert agent.get(uploads).json()["checks_passed"] is True
    assert agent.get(f"{uploads}/manifest").json()["id"] == "uk-bank-holidays"
    attested = agent.post(f"{uploads}/attestations", json={"attestations": ALL})
    assert attested.status_code == 200, attested.text
    assert {(a["made_by"], a["agent_name"]) for a in attested.json()} == {
        (bank.admin_email, "Claude")
    }
    refused = agent.post(f"{uploads}/submit")
    assert_problem(refused, 409, "SUBMIT-REFUSED")
    may_submit(bank.pub)
    submitted = agent.post(f"{uploads}/submit")
    assert submitted.status_code == 200, submitted.text
    assert submitted.json()["upload"]["state"] == "in_review"
    withdrawn = agent.post(f"{uploads}/withdraw")
    assert withdrawn.status_code == 200 and withdrawn.json()["state"] == "withdrawn"
    # The person's view of the same upload names the agent too.
    assert bank.pub.owner.get(uploads).json()["agent_name"] == "Claude"


def test_the_host_history_names_the_reviewer_as_approver_and_the_agent_as_publisher(
    bank: Bank,
) -> None:
    """A version an agent publishes after a reviewer's approval: the host's history keeps the
    approval as the reviewer's (the person who approved the code) and the publication as the
    publisher's, the agent named."""
    api = bank.api
    agent = bearer(api, agent_token(api, bank.admin, bank.org, may_publish=True, name="Robin"))
    made = bank.pub.send(uk(), client=agent)
    assert made.status_code == 201, made.text
    upload = f"{bank.portal}/uploads/{made.json()['id']}"
    room_checks_done(bank.pub)
    assert agent.post(f"{upload}/attestations", json={"attestations": ALL}).status_code == 200
    may_submit(bank.pub)
    assert agent.post(f"{upload}/submit").status_code == 200
    reviewer = api.signed_in("reviewer@service.example")
    with Session(api.engine) as db:
        accounts.grant_staff_role(db, "reviewer@service.example", "reviewer", api.clock())
        db.commit()
    desk = reviewer.get(f"{V1}/review/uploads/{made.json()['id']}").json()
    decided = reviewer.post(
        f"{V1}/review/uploads/{made.json()['id']}/decision",
        json={"decision": "approve", "reason": "meets the rules", "reviewed": desk["reviewed"]},
    )
    assert decided.status_code == 200, decided.text
    api.clock.advance(timedelta(minutes=5))
    published = agent.post(f"{upload}/publish")
    assert published.status_code == 200, published.text
    publishing = f"{bank.admin_email} (agent Robin)"
    assert published.json()["published_by"] == publishing
    operator = api.signed_in("op@service.example", operator=True)
    moves = operator.get(f"{V1}/host/plugins/uk-bank-holidays").json()["moves"]
    by = {m["action"]: m["by"] for m in moves}
    assert by["approve"] == "reviewer@service.example"
    assert by["publish"] == publishing
    assert by["code-changed"] == publishing
    approval = next(m for m in moves if m["action"] == "approve")
    assert (approval["from_state"], approval["to_state"]) == ("pending", "approved")


def test_the_token_dies_when_its_approver_is_demoted(bank: Bank) -> None:
    api = bank.api
    agent = bearer(api, agent_token(api, bank.admin, bank.org))
    assert agent.get(f"{bank.portal}/uploads").status_code == 200
    admin_id = next(
        m["account_id"]
        for m in bank.pub.owner.get(f"{V1}/organizations/{bank.org}/members").json()
        if m["email"] == bank.admin_email
    )
    demoted = bank.pub.owner.patch(
        f"{V1}/organizations/{bank.org}/members/{admin_id}", json={"role": "member"}
    )
    assert demoted.status_code == 200, demoted.text
    assert_problem(agent.get(f"{bank.portal}/uploads"), 401, "AUTH-REQUIRED")
    listed = bank.pub.owner.get(f"{bank.portal}/agents").json()
    assert [(a["active"], a["revoked_reason"]) for a in listed] == [(False, "approver-left")]
    bank.pub.owner.patch(
        f"{V1}/organizations/{bank.org}/members/{admin_id}", json={"role": "admin"}
    )
    assert_problem(agent.get(f"{bank.portal}/uploads"), 401, "AUTH-REQUIRED")


def test_logout_revoke_and_a_new_login_on_the_machine_end_tokens(bank: Bank) -> None:
    api = bank.api
    first = bearer(api, agent_token(api, bank.admin, bank.org))
    second = bearer(api, agent_token(api, bank.admin, bank.org))  # the same machine
    assert_problem(first.get(f"{bank.portal}/uploads"), 401, "AUTH-REQUIRED")
    assert second.get(f"{bank.portal}/uploads").status_code == 200
    assert second.post(f"{V1}/device/logout").status_code == 204
    assert_problem(second.get(f"{bank.portal}/uploads"), 401, "AUTH-REQUIRED")
    third = bearer(api, agent_token(api, bank.admin, bank.org, machine="machine-0003"))
    listed = bank.admin.get(f"{bank.portal}/agents").json()
    third_id = next(a["id"] for a in listed if a["active"])
    revoked = bank.pub.owner.post(f"{bank.portal}/agents/{third_id}/revoke")
    assert revoked.status_code == 200, revoked.text
    assert (revoked.json()["revoked_reason"], revoked.json()["revoked_by"]) == (
        "portal",
        "owner@bank.example",
    )
    assert_problem(third.get(f"{bank.portal}/uploads"), 401, "AUTH-REQUIRED")
    reasons = [a["revoked_reason"] for a in bank.admin.get(f"{bank.portal}/agents").json()]
    assert reasons == ["portal", "logout", "new-login"]
    # A person's credentials do not log out here.
    assert_problem(bank.admin.post(f"{V1}/device/logout"), 403, "FORBIDDEN")
