"""The store's pages for a reader (issue 30): the schedule said in words, and a store or search
with nothing to show offering a way on. A plug-in is published through the portal's own
functions (the pages of that walk are tested in test_publishing_pages.py)."""

from __future__ import annotations

from playwright.sync_api import expect

from tests.api.conftest import Api
from tests.api.test_host import UK, empty_plugin_tables
from tests.pages.conftest import session_cookie
from tests.pages.test_accessibility import scan
from tests.pages.test_reader_pages import shot
from tests.publishing.test_review_and_store import approved, publish, reviewer
from tests.publishing.test_submission import files_with, may_submit
from tests.publishing.test_uploads import Publisher, new_org


def published_uk(api: Api) -> Publisher:
    """The UK bank holidays example published and listed in the store, on empty plug-in tables
    (the caller empties them again at its end)."""
    empty_plugin_tables(api.engine)
    owner, org = new_org(api, "owner@bank.example", "Bank")
    pub = Publisher(api, owner, org)
    may_submit(pub)
    upload_id = approved(pub, reviewer(api, "rev@service.example"), files_with())
    done = publish(pub, upload_id)
    assert done.status_code == 200, done.text
    return pub


def test_the_store_says_the_schedule_in_words(papi, browsing) -> None:
    published_uk(papi)
    reader = papi.signed_in("reader@example.net")
    page = browsing.page(cookie=session_cookie(reader))
    page.goto(f"/store/{UK}")
    updates = page.get_by_role("region", name="Updates")
    expect(updates).to_contain_text("Updates every day at 06:00 Europe/London.")
    assert "0 6 * * *" not in updates.inner_text()
    answer = reader.get(f"/api/v1/store/plugins/{UK}").json()
    assert answer["schedule_words"] == "every day at 06:00 Europe/London"
    assert answer["schedule"] == "0 6 * * *"
    empty_plugin_tables(papi.engine)


def test_an_empty_store_and_a_search_with_no_result_offer_a_way_on(papi, browsing) -> None:
    published_uk(papi)
    reader = papi.signed_in("reader@example.net")
    page = browsing.page(cookie=session_cookie(reader))
    page.goto("/store")
    page.get_by_label("Find plug-ins").fill("bank holidays on the moon")
    page.get_by_role("button", name="Search").click()
    hints = page.get_by_role("region", name="Nothing found")
    expect(hints).to_contain_text("No plug-in in the store matches “bank holidays on the moon”")
    expect(hints).to_contain_text("Try fewer words")
    shot(page, "store-no-result")
    hints.get_by_role("link", name="Clear the search").click()
    expect(page.locator("ul.cards").get_by_role("link")).to_have_count(1)
    expect(page.get_by_label("Find plug-ins")).to_have_value("")

    # A category with nothing in it: no words to take away, the categories to browse.
    page.goto("/store?category=weather")
    hints = page.get_by_role("region", name="Nothing found")
    expect(hints).not_to_contain_text("Try fewer words")
    hints.get_by_role("link", name="Holidays").click()
    expect(page.locator("ul.cards")).to_contain_text("UK bank holidays")
    assert problems_of(browsing, reader, "/store?q=nothing+at+all", "store-no-result") == []

    # Nothing in the store at all: it says so and still offers the categories.
    empty_plugin_tables(papi.engine)
    page.goto("/store")
    hints = page.get_by_role("region", name="Nothing found")
    expect(hints).to_contain_text("The store has no plug-in yet")
    expect(hints.get_by_role("link", name="Holidays")).to_be_visible()
    shot(page, "store-empty")


def problems_of(browsing, client, path: str, name: str) -> list[str]:  # type: ignore[no-untyped-def]
    return scan(browsing, session_cookie(client), path, name)
