"""The limits on repeated attempts as the pages show them, in Chromium: the sign-in form and the
portal's Check now count with the API (one count, whichever is used) and, past the limit, say
how long to wait, with the same words as the API's problem, status 429 and `Retry-After`."""

from __future__ import annotations

from datetime import timedelta

from playwright.sync_api import Page, Response, expect

from tests.accounts.helpers import PASSWORD
from tests.api.conftest import Api
from tests.pages.conftest import Browsing, session_cookie

WRONG = PASSWORD + "-wrong"


def posted(page: Page, path: str):  # type: ignore[no-untyped-def]
    """Waits for the answer to the form's POST to `path`."""
    return page.expect_response(
        lambda r: r.request.method == "POST" and r.url.split("?")[0].endswith(path)
    )


def refusal_of(answer: Response, seconds: int) -> None:
    assert answer.status == 429
    assert answer.headers["retry-after"] == str(seconds)


def test_the_sign_in_form_says_how_long_the_account_is_locked(
    papi: Api, browsing: Browsing
) -> None:
    papi.signed_in("ada@example.org")
    api = papi.client()
    for _ in range(9):
        failed = api.post(
            "/api/v1/auth/signin", json={"email": "ada@example.org", "password": WRONG}
        )
        assert failed.status_code == 401
    page = browsing.page()
    page.goto("/signin")
    page.get_by_label("E-mail address").fill("ada@example.org")
    page.get_by_label("Password").fill(WRONG)
    page.get_by_role("button", name="Sign in").click()  # the 10th failure, by the form
    expect(page.get_by_role("alert")).to_have_text("the e-mail address or password is wrong")

    page.get_by_label("Password").fill(PASSWORD)
    with posted(page, "/signin") as answered:
        page.get_by_role("button", name="Sign in").click()
    refusal_of(answered.value, 900)
    words = (
        "too many failed sign-ins for this e-mail address (at most 10 in 15 minutes); "
        "try again in 15 minutes"
    )
    expect(page.get_by_role("alert")).to_have_text(words)
    problem = api.post("/api/v1/auth/signin", json={"email": "ada@example.org", "password": WRONG})
    assert problem.json()["detail"] == words
    expect(page.get_by_label("E-mail address")).to_have_value("ada@example.org")

    papi.clock.advance(timedelta(minutes=15))
    page.get_by_label("Password").fill(PASSWORD)
    page.get_by_role("button", name="Sign in").click()
    page.wait_for_url("**/calendar")


def test_check_now_in_the_portal_says_when_it_may_be_pressed_again(
    papi: Api, browsing: Browsing
) -> None:
    owner = papi.signed_in("owner@bank.example")
    made = owner.post("/api/v1/organizations", json={"name": "Bank"})
    assert made.status_code == 201, made.text
    org = made.json()["id"]
    named = owner.put(
        f"/api/v1/portal/organizations/{org}/domain", json={"domain": "bank-limits.org"}
    )
    assert named.status_code == 200, named.text
    for _ in range(9):
        assert owner.post(f"/api/v1/portal/organizations/{org}/domain/check").status_code == 200

    page = browsing.page(cookie=session_cookie(owner))
    page.goto(f"/portal/{org}")
    page.get_by_role("button", name="Check now").click()  # the 10th, by the page
    expect(page.get_by_text("Checked: see what each way found below.")).to_be_visible()
    with posted(page, f"/portal/{org}/domain/check") as answered:
        page.get_by_role("button", name="Check now").click()
    refusal_of(answered.value, 3600)
    words = (
        "Check now was pressed too often for this organization (at most 10 times an hour); "
        "try again in 1 hour"
    )
    expect(page.get_by_role("alert")).to_have_text(words)
    expect(page.get_by_role("link", name="what it means")).to_have_attribute(
        "href", "/docs/problems/DOMAIN-CHECK-LIMITED"
    )
    again = owner.post(f"/api/v1/portal/organizations/{org}/domain/check")
    assert again.status_code == 429 and again.json()["detail"] == words

    papi.clock.advance(timedelta(hours=1))
    page.goto(f"/portal/{org}")
    page.get_by_role("button", name="Check now").click()
    expect(page.get_by_text("Checked: see what each way found below.")).to_be_visible()
