"""The mailed verification link opened in Chromium: a page saying the address is verified, and
the same link opened again a page saying why not (programs still get JSON)."""

from __future__ import annotations

import re

from playwright.sync_api import expect

from tests.accounts.helpers import PASSWORD
from tests.api.conftest import Api
from tests.pages.conftest import Browsing


def test_the_mailed_link_opens_a_page_in_a_browser(papi: Api, browsing: Browsing) -> None:
    client = papi.client()
    made = client.post(
        "/api/v1/auth/signup", json={"email": "new@example.net", "password": PASSWORD}
    )
    assert made.status_code == 201, made.text
    link = papi.verification_link("new@example.net")
    page = browsing.page()
    page.goto(link)
    expect(page.get_by_role("heading", name="Address verified")).to_be_visible()
    expect(page.get_by_text("new@example.net is verified.")).to_be_visible()
    page.goto(link)
    expect(page.get_by_role("alert")).to_have_text(re.compile(r"\S"))
    expect(page.get_by_text("VERIFICATION-INVALID")).to_be_visible()
    # A program asking for JSON is answered the problem, as before.
    again = client.get(link, headers={"accept": "application/json"})
    assert again.status_code == 400 and again.json()["code"] == "VERIFICATION-INVALID"
