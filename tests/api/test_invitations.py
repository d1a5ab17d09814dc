import pytest
from sqlalchemy import select
from sqlalchemy.orm import Session

from almanac.platform.accounts import InvitationRequest
from almanac.platform.mail import OutboxMessage
from tests.api.conftest import assert_problem

PATHS = ["/api/developers/invitations", "/api/v1/developers/invitations"]


def ask(client, path=PATHS[0], **fields):
    body = {
        "email": "dev@example.org",
        "organization": "Example",
        "domain": "example.org",
        "note": "rates",
    }
    return client.post(path, json=body | fields)


def stored(api):
    with Session(api.engine) as db:
        return [
            (r.domain, r.status)
            for r in db.scalars(select(InvitationRequest).order_by(InvitationRequest.id))
        ]


@pytest.mark.parametrize("path", PATHS)
def test_a_request_needs_no_credentials_and_mails_nothing(api, path):
    response = ask(api.client(), path)
    assert response.status_code == 202
    assert response.json()["status"] == "received"
    assert stored(api) == [("example.org", "open")]
    with Session(api.engine) as db:
        assert db.scalars(select(OutboxMessage)).all() == []


def test_the_answer_is_the_same_for_a_repeat_and_a_new_domain(api):
    client = api.client()
    first = ask(client, domain="Example.ORG")
    repeat = ask(client, email="other@example.org")
    fresh = ask(client, domain="unknown-domain.example")
    assert first.status_code == repeat.status_code == fresh.status_code == 202
    assert first.json() == repeat.json() == fresh.json()
    assert stored(api) == [
        ("example.org", "open"),
        ("example.org", "repeat"),
        ("unknown-domain.example", "open"),
    ]


def test_at_most_5_requests_a_day_per_address(api):
    from datetime import timedelta

    client = api.client()
    for n in range(5):
        assert ask(client, domain=f"d{n}.example").status_code == 202
    assert_problem(ask(client, email="DEV@example.org", domain="d5.example"), 429, "RATE-LIMITED")
    assert ask(client, email="else@example.org", domain="d5.example").status_code == 202
    api.clock.advance(timedelta(days=1))
    assert ask(client, domain="d6.example").status_code == 202


def test_a_token_may_not_ask_to_be_invited(api):
    response = api.client().post(
        PATHS[0],
        json={
            "email": "dev@example.org",
            "organization": "Example",
            "domain": "example.org",
            "note": "",
        },
        headers={"Authorization": "Bearer alm_anything"},
    )
    assert_problem(response, 403, "FORBIDDEN")
    assert stored(api) == []


def test_bad_requests_name_the_field(api):
    client = api.client()
    missing = client.post(PATHS[0], json={"email": "dev@example.org"})
    body = assert_problem(missing, 422, "REQUEST-INVALID")
    assert {f["path"] for f in body["findings"]} == {
        "body.organization",
        "body.domain",
        "body.note",
    }
    assert all(f["code"] == "REQUEST-INVALID" and f["docs"] for f in body["findings"])
    assert (
        "domain" in assert_problem(ask(client, domain="10.0.0.1"), 422, "REQUEST-INVALID")["detail"]
    )
    assert "email" in assert_problem(ask(client, email="nope"), 422, "REQUEST-INVALID")["detail"]
    assert stored(api) == []
