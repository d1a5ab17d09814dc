"""The reader's calendar feed page in Chromium: make the address (shown once), subscribe by it
(the .ics answers), make a new one (the old stops answering) and stop the feed."""

from __future__ import annotations

from playwright.sync_api import expect

from tests.api.conftest import Api
from tests.pages.conftest import Browsing, session_cookie
from tests.pages.test_accessibility import scan


def test_a_reader_makes_renews_and_stops_the_feed_in_the_page(
    papi: Api, browsing: Browsing
) -> None:
    reader = papi.signed_in("reader@example.net")
    page = browsing.page(cookie=session_cookie(reader))
    page.goto("/calendar")
    page.get_by_role("link", name="Feed").click()
    expect(page.get_by_text("You have no feed address yet.")).to_be_visible()
    page.get_by_role("button", name="Make my feed address").click()
    expect(page.get_by_text("It is shown only now")).to_be_visible()
    first = page.get_by_label("Address").input_value()
    assert (
        page.get_by_role("link", name="Subscribe in your calendar app").get_attribute("href")
        == "webcal://" + first.split("://", 1)[1]
    )
    client = papi.client()
    answered = client.get(first)
    assert answered.status_code == 200, answered.text
    assert answered.headers["content-type"].startswith("text/calendar")
    assert answered.text.startswith("BEGIN:VCALENDAR")
    page.goto("/calendar/feed")
    expect(page.get_by_text("It is never shown again")).to_be_visible()
    assert first not in page.content()
    page.get_by_role("button", name="Make a new address").click()
    second = page.get_by_label("Address").input_value()
    assert second != first
    assert client.get(first).status_code == 404
    assert client.get(second).status_code == 200
    page.get_by_role("button", name="Stop the feed").click()
    expect(page.get_by_text("You have no feed address yet.")).to_be_visible()
    assert client.get(second).status_code == 404
    assert scan(browsing, session_cookie(reader), "/calendar/feed", "calendar-feed") == []
