from datetime import timedelta

from tests.accounts.helpers import PASSWORD
from tests.api.conftest import assert_problem


def test_sign_up_mails_a_link_that_verifies_the_address(api):
    client = api.client()
    made = client.post(
        "/api/v1/auth/signup", json={"email": "Ada@Example.org", "password": PASSWORD}
    )
    assert made.status_code == 201
    body = made.json()
    assert body["email"] == "Ada@example.org" and body["verified"] is False
    assert set(body) == {"id", "email", "verified", "created_at", "staff_roles", "organizations"}

    link = api.verification_link("Ada@example.org")
    assert link.startswith(f"{api.base_url}/api/v1/auth/verify?token=")
    done = client.get(link)
    assert done.status_code == 200 and done.json() == {"verified": True, "email": "Ada@example.org"}
    assert_problem(client.get(link), 400, "VERIFICATION-INVALID")


def test_the_link_expires_after_24_hours(api):
    client = api.client()
    api.sign_up(client, "ada@example.org", verify=False)
    api.clock.advance(timedelta(hours=24, seconds=1))
    link = api.verification_link("ada@example.org")
    assert_problem(client.get(link), 400, "VERIFICATION-INVALID")
    assert_problem(client.get("/api/v1/auth/verify?token=made-up"), 400, "VERIFICATION-INVALID")


def test_a_duplicate_sign_up_is_refused_whatever_the_case(api):
    client = api.client()
    api.sign_up(client, "ada@example.org", verify=False)
    again = client.post(
        "/api/v1/auth/signup", json={"email": "ADA@example.org", "password": PASSWORD}
    )
    assert_problem(again, 409, "ACCOUNT-EXISTS")


def test_sign_up_refuses_a_bad_address_or_password_naming_the_field(api):
    client = api.client()
    bad = assert_problem(
        client.post("/api/v1/auth/signup", json={"email": "nope", "password": PASSWORD}),
        422,
        "REQUEST-INVALID",
    )
    assert bad["detail"].startswith("email")
    short = assert_problem(
        client.post("/api/v1/auth/signup", json={"email": "a@example.org", "password": "x"}),
        422,
        "REQUEST-INVALID",
    )
    assert "password" in short["detail"]


def test_sign_in_sets_an_httponly_lax_cookie_and_sign_out_ends_it(api):
    client = api.client()
    api.sign_up(client, "ada@example.org")
    signed = client.post(
        "/api/v1/auth/signin", json={"email": "ADA@example.org", "password": PASSWORD}
    )
    assert signed.status_code == 200 and signed.json()["verified"] is True
    cookie = signed.headers["set-cookie"]
    assert cookie.startswith("almanac_session=")
    assert "HttpOnly" in cookie and "SameSite=lax" in cookie and "Path=/" in cookie
    assert "Secure" not in cookie  # http base URL; https sets it
    value = client.cookies["almanac_session"]

    me = client.get("/api/v1/auth/me")
    assert me.status_code == 200 and me.json()["email"] == "ada@example.org"

    assert client.post("/api/v1/auth/signout").status_code == 204
    assert_problem(client.get("/api/v1/auth/me"), 401, "AUTH-REQUIRED")
    stale = api.client()
    stale.cookies.set("almanac_session", value)
    assert_problem(stale.get("/api/v1/auth/me"), 401, "AUTH-REQUIRED")


def test_the_session_expires_after_14_days(api):
    client = api.signed_in("ada@example.org")
    api.clock.advance(timedelta(days=14))
    assert_problem(client.get("/api/v1/auth/me"), 401, "AUTH-REQUIRED")


def test_sign_in_refuses_a_wrong_password_and_an_unknown_address_alike(api):
    client = api.client()
    api.sign_up(client, "ada@example.org")
    wrong = client.post(
        "/api/v1/auth/signin", json={"email": "ada@example.org", "password": "wrong" * 3}
    )
    unknown = client.post(
        "/api/v1/auth/signin", json={"email": "bob@example.org", "password": PASSWORD}
    )
    a = assert_problem(wrong, 401, "AUTH-FAILED")
    b = assert_problem(unknown, 401, "AUTH-FAILED")
    assert a["detail"] == b["detail"]
    assert "set-cookie" not in wrong.headers


def test_me_needs_a_sign_in(api):
    response = api.client().get("/api/v1/auth/me")
    assert_problem(response, 401, "AUTH-REQUIRED")
    assert response.headers["www-authenticate"].startswith("Bearer")


def test_resend_mails_a_new_link_to_an_unverified_account(api):
    client = api.signed_in("ada@example.org", verify=False)
    assert client.post("/api/v1/auth/verify/resend").status_code == 202
    first = api.last_mail("ada@example.org").id
    assert client.post("/api/v1/auth/verify/resend").status_code == 202
    assert api.last_mail("ada@example.org").id > first
    link = api.verification_link("ada@example.org")
    assert client.get(link).status_code == 200
    assert client.get("/api/v1/auth/me").json()["verified"] is True
    last = api.last_mail("ada@example.org").id
    assert client.post("/api/v1/auth/verify/resend").status_code == 202
    assert api.last_mail("ada@example.org").id == last  # verified: nothing more is mailed
    assert_problem(api.client().post("/api/v1/auth/verify/resend"), 401, "AUTH-REQUIRED")
