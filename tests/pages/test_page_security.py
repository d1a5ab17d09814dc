"""The pages' security: a form posted without this browser's CSRF token is refused (403) and
changes nothing; every page carries a strict Content Security Policy and holds no inline
script, style attribute or event handler; the sign-in goes back only to a path on this site."""

from __future__ import annotations

import re

from playwright.sync_api import expect

from tests.accounts.helpers import PASSWORD
from tests.audience.helpers import T0, StoredPlugin, fresh_id
from tests.pages.conftest import session_cookie
from tests.pages.test_host_pages import MANIFEST
from tests.pages.test_reader_pages import CASE, stored_case

TOKEN = re.compile(r'name="csrf_token" value="([0-9a-f]{64})"')


def token_of(client, path: str) -> str:  # type: ignore[no-untyped-def]
    page = client.get(path)
    assert page.status_code == 200, page.text
    found = TOKEN.search(page.text)
    assert found, "the page has no form with a CSRF token"
    return found.group(1)


def test_a_form_posted_without_its_csrf_token_is_refused(papi) -> None:
    _, plugin = stored_case(papi, CASE)
    reader = papi.signed_in("reader@example.org")
    form = {"plugin": plugin.id, f"was.{plugin.id}": "0", "shown": plugin.id, "back": "/calendar"}
    refused = reader.post("/calendar/sections", data=form)
    assert refused.status_code == 403 and "security token" in refused.text
    other = papi.signed_in("other@example.org")
    stolen = token_of(other, "/calendar")  # another person's token is no use either
    assert reader.post("/calendar/sections", data={**form, "csrf_token": stolen}).status_code == 403
    shown = reader.get("/api/v1/reader/preferences").json()["preferences"]
    assert shown[f"plugins.{plugin.id}.shown"] is None
    accepted = reader.post(
        "/calendar/sections", data={**form, "csrf_token": token_of(reader, "/calendar")}
    )
    assert accepted.status_code == 303
    shown = reader.get("/api/v1/reader/preferences").json()["preferences"]
    assert shown[f"plugins.{plugin.id}.shown"] is True

    pending = StoredPlugin(papi.engine, {**MANIFEST, "id": fresh_id("c")}, T0).register()
    operator = papi.signed_in("op@example.org", operator=True)
    digest = operator.get(f"/api/v1/host/plugins/{pending.id}").json()["current_digest"]
    approve = operator.post(f"/host/plugins/{pending.id}/approve", data={"digest": digest})
    assert approve.status_code == 403
    assert operator.get(f"/api/v1/host/plugins/{pending.id}").json()["state"] == "pending"

    anonymous = papi.client()
    sign_in = {"email": "reader@example.org", "password": PASSWORD}
    assert anonymous.post("/signin", data=sign_in).status_code == 403
    token = token_of(anonymous, "/signin")  # the pre-session cookie the page set
    signed = anonymous.post(
        "/signin", data={**sign_in, "csrf_token": token, "next": "//evil.test/x"}
    )
    assert signed.status_code == 303 and signed.headers["location"] == "/calendar"


def test_pages_carry_a_strict_policy_and_nothing_inline(papi) -> None:
    _, plugin = stored_case(papi, CASE)
    reader = papi.signed_in("reader@example.org")
    reader.put(
        "/api/v1/reader/preferences", json={"preferences": {f"plugins.{plugin.id}.shown": True}}
    )
    operator = papi.signed_in("op@example.org", operator=True)
    anonymous = papi.client()
    for client, path in [
        (anonymous, "/"),
        (anonymous, "/signin"),
        (anonymous, "/signup"),
        (reader, "/calendar?month=2026-06&today=2026-06-10&day=2026-06-05"),
        (reader, "/calendar?view=agenda&today=2026-06-10&start=2026-06-01"),
        (reader, f"/calendar/report/{plugin.id}"),
        (operator, "/host"),
        (operator, f"/host/plugins/{plugin.id}"),
    ]:
        page = client.get(path)
        assert page.status_code == 200, (path, page.text)
        policy = page.headers["content-security-policy"]
        assert "default-src 'none'" in policy and "script-src 'self'" in policy
        assert "unsafe-inline" not in policy and "frame-ancestors 'none'" in policy
        assert page.headers["x-content-type-options"] == "nosniff"
        html = page.text
        assert " style=" not in html and "<style" not in html, path
        assert not re.search(r"<script(?![^>]*\bsrc=)", html), path
        assert not re.search(r"\son[a-z]+=", html), path
    assert reader.get("/static/calendar.js").status_code == 200
    # A private plug-in the reader may not read is the same 404 page as an unknown id.
    assert reader.get(f"/calendar/report/{fresh_id()}").status_code == 404


def test_a_calendar_address_it_cannot_draw_is_a_page_that_says_why(papi) -> None:
    reader = papi.signed_in("reader@example.org")
    for query, words in [
        ("month=June", "is not YYYY-MM"),
        ("month=9999-12", "beyond the calendar"),
        ("view=agenda&start=9999-12-20", "beyond the calendar"),
        ("day=2026-02-30", "is not a date"),
        ("lang=no%20such", "is not a language code"),
    ]:
        page = reader.get(f"/calendar?{query}")
        assert page.status_code == 422, (query, page.text)
        assert page.headers["content-type"].startswith("text/html") and words in page.text


def test_an_error_page_keeps_the_signed_in_header(papi, browsing) -> None:
    reader = papi.signed_in("reader@example.org")
    page = browsing.page(cookie=session_cookie(reader))
    for path, status in [("/host", 403), ("/portal/987654", 404), ("/store/no-such-plugin", 404)]:
        answer = page.goto(path)
        assert answer is not None and answer.status == status, path
        expect(page.get_by_role("alert")).to_be_visible()
        nav = page.get_by_role("navigation", name="Main")
        expect(nav).to_contain_text("reader@example.org")
        expect(nav.get_by_role("button", name="Sign out")).to_be_visible()
        assert nav.get_by_role("link", name="Sign in").count() == 0, path
    # Nobody signed in (or a session that ended): the error page offers to sign in.
    anonymous = browsing.page(cookie="an-ended-session")
    answer = anonymous.goto("/portal/agreement/9")
    assert answer is not None and answer.status == 404
    expect(
        anonymous.get_by_role("navigation", name="Main").get_by_role("link", name="Sign in")
    ).to_be_visible()
