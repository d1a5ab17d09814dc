"""A reader's pictures in Debian's Chromium: from a day's row to its series chart (uPlot, drawn
from the chart's JSON route), switching its range, and the calendar as it was known on a past
date showing a revised value as it was, with the revision listed. Both pages pass axe at 390
and 1280 px with no CSP complaint; screenshots go to tests/pages/artifacts/."""

from __future__ import annotations

import json
from datetime import UTC, date, datetime, timedelta

from playwright.sync_api import expect

from tests.api.test_host import UK, empty_plugin_tables, fixture_records, folder_files, write
from tests.api.test_reader import MANIFEST, show, value
from tests.audience.helpers import T0, StoredPlugin, fresh_id
from tests.pages.conftest import session_cookie
from tests.pages.test_accessibility import scan
from tests.pages.test_reader_pages import shot
from tests.pages.test_store_pages import published_uk
from tests.publishing.test_review_and_store import approved, listing_url, publish, reviewer
from tests.publishing.test_submission import may_submit
from tests.publishing.test_uploads import Publisher, new_org


def rates_plugin(api) -> StoredPlugin:  # type: ignore[no-untyped-def]
    plugin = StoredPlugin(api.engine, {**MANIFEST, "id": fresh_id()}, T0).register().approve()
    start = date(2026, 4, 2)
    batch = [value((start + timedelta(days=n)).isoformat(), 58 + n / 50) for n in range(0, 66, 2)]
    batch += [
        {"kind": "event", "series": "tpm", "id": "m", "date": "2026-05-20", "state": "happened",
         "value": 6.25},
        {"kind": "event", "series": "tpm", "id": "j", "date": "2026-06-24", "state": "scheduled",
         "title": "June decision"},
    ]  # fmt: skip
    plugin.write(batch, date(2026, 6, 5))
    # The next day a correction of 5 June is written.
    plugin.moment = datetime(2026, 6, 6, 9, 0, tzinfo=UTC)
    plugin.write([*batch[:-3], value("2026-06-05", 59.5), *batch[-2:]], date(2026, 6, 6))
    return plugin


def test_a_reader_charts_a_series_from_a_day_and_sees_the_calendar_as_it_was(
    papi, browsing
) -> None:
    plugin = rates_plugin(papi)
    reader = papi.signed_in(f"{fresh_id('chart')}@example.org")
    show(reader, plugin.id)
    cookie = session_cookie(reader)
    page = browsing.page(cookie=cookie)
    page.goto("/calendar?month=2026-06&today=2026-06-10&day=2026-06-05")
    panel = page.locator("#day-panel")
    assert panel.locator("li.row .num").first.inner_text() == "59.50"
    panel.get_by_role("link", name="Chart of Dollar").click()
    page.get_by_role("heading", level=1, name="Dollar: buy").wait_for()
    canvas = page.locator("#chart-canvas")
    page.wait_for_selector("#chart-canvas[data-drawn]")
    assert canvas.get_attribute("data-drawn") == "365"  # a year of days by default
    assert canvas.locator("canvas").count() == 1
    assert page.get_by_role("img", name="Dollar, buy, 11 June 2025 to 10 June 2026").count() == 1
    # The table says the same records: one row a record, newest first.
    table = page.locator("table.figures tbody tr")
    assert table.count() == 33
    assert table.first.locator("td span").first.inner_text() == "59.50"
    shot(page, "chart-year-desk")
    page.get_by_role("navigation", name="Range").get_by_role("link", name="Month").click()
    page.wait_for_selector("#chart-canvas[data-drawn='31']")
    assert page.get_by_role("link", name="Month").get_attribute("aria-current") == "page"
    shot(page, "chart-month-desk")

    # The calendar as it was known on 5 June: 5 June shows the figure before the correction,
    # marked revised since, and its panel lists the revision.
    page.goto("/calendar?month=2026-06&today=2026-06-10&day=2026-06-05")
    page.get_by_label("As known on").fill("2026-06-05")
    page.get_by_role("button", name="Show").click()
    page.get_by_role("status").filter(has_text="as it was known").wait_for()
    row = panel.locator("li.row.value").first
    assert row.locator(".num").first.inner_text() == "59.28"
    assert row.locator(".revised-mark").inner_text() == "Revised since"
    revision = row.locator("ul.revisions li").first.inner_text()
    assert revision.startswith("2026-06-06 09:0") and "buy 59.28 to buy 59.50" in revision
    assert page.locator('td[data-date="2026-06-05"] .revised-mark').count() == 1
    assert page.locator('td[data-date="2026-06-03"] .revised-mark').count() == 0
    shot(page, "calendar-as-of-desk")
    page.get_by_role("link", name="Back to what is known now").click()
    assert panel.locator("li.row .num").first.inner_text() == "59.50"

    found = scan(
        browsing, cookie, f"/calendar/chart/{plugin.id}/usd?today=2026-06-10", "chart-value"
    )
    found += scan(
        browsing, cookie, f"/calendar/chart/{plugin.id}/tpm?today=2026-06-10", "chart-event"
    )
    found += scan(
        browsing,
        cookie,
        "/calendar?month=2026-06&today=2026-06-10&day=2026-06-05&as_of=2026-06-05",
        "calendar-as-of",
    )
    assert found == []


ECB = "ecb-reference-rates"


def test_a_store_page_charts_a_series_of_its_example_records(papi, browsing) -> None:
    """The ECB example published: its store page draws the US dollar from the fixture records,
    every day from the first record to the fixtures' today, with the records as a table."""
    empty_plugin_tables(papi.engine)
    owner, org = new_org(papi, "owner@bank.example", "Rates")
    pub = Publisher(papi, owner, org)
    may_submit(pub)
    files = folder_files(ECB)
    upload_id = approved(pub, reviewer(papi, "rev@service.example"), files)
    assert publish(pub, upload_id).status_code == 200
    fixtures = [json.loads(line) for line in files["fixtures/records.jsonl"].splitlines()]
    usd = sorted(r["date"] for r in fixtures if r["series"] == "usd")
    reader = papi.signed_in(f"{fresh_id('store')}@example.net")
    chart = reader.get(f"/api/v1/store/plugins/{ECB}").json()["chart"]
    assert (chart["series"], chart["field"], chart["range"]) == ("usd", "rate", "all")
    assert (chart["first"], chart["last"], chart["today"]) == (usd[0], "2025-02-25", "2025-02-25")
    drawn = [p["date"] for p in chart["points"] if p["style"] == "normal"]
    assert drawn == [d for d in usd if d <= "2025-02-25"]
    saturday = next(p for p in chart["points"] if p["date"] == "2025-02-22")
    assert (saturday["style"], saturday["note"]) == ("in-force", "Rate of 2025-02-21")

    cookie = session_cookie(reader)
    page = browsing.page(cookie=cookie)
    page.goto(f"/store/{ECB}")
    page.wait_for_selector("#example-canvas[data-drawn]")
    days = len(chart["points"])
    assert page.locator("#example-canvas").get_attribute("data-drawn") == str(days)
    assert page.get_by_role("img", name=chart["title"], exact=False).count() == 1
    assert page.locator("table.figures tbody tr").count() == len(drawn)
    shot(page, "store-chart-drawn-desk")
    page.locator("summary", has_text="The figures as a table").click()
    expect(page.locator("table.figures tbody tr").first).to_contain_text("25 February 2025")
    assert scan(browsing, cookie, f"/store/{ECB}", "store-chart") == []
    empty_plugin_tables(papi.engine)


def test_a_publisher_reads_the_figures_of_a_published_plugin(papi, browsing) -> None:
    """The UK example published through the portal, installed by two readers on two days,
    one turning it off, and run twice: the portal's plug-in page draws its figures (each with
    its table), says which review wait is whose, and says an empty figure in words."""
    pub = published_uk(papi)
    readers = [papi.signed_in(f"{fresh_id('fig')}@example.net") for _ in range(2)]
    for who in readers:
        assert who.post(f"/api/v1/store/plugins/{UK}/install").status_code == 200
        papi.clock.advance(timedelta(days=1))
    assert readers[0].post(f"/api/v1/store/plugins/{UK}/uninstall").status_code == 204
    records = fixture_records(UK)
    write(papi, UK, records, date(2022, 11, 4))
    papi.clock.advance(timedelta(hours=2))
    write(papi, UK, records, date(2022, 11, 4))
    answer = pub.owner.get(f"{listing_url(pub)}/figures?days=30").json()
    assert (answer["readers_now"], answer["installs"], answer["uninstalls"]) == (1, 2, 1)
    assert answer["history_since"] is None and answer["runs"] == 2
    assert answer["plugin_review_median_wait_hours"] is not None
    by_key = {f["key"]: f for f in answer["figures"]}
    assert by_key["readers"]["lines"][0]["values"][-3:] == [1.0, 2.0, 1.0]

    page = browsing.page(cookie=session_cookie(pub.owner))
    page.goto(f"/portal/{pub.org}/plugins/{UK}")
    figures = page.get_by_role("region", name="Figures of the last 30 days")
    expect(figures).to_contain_text("the whole queue (every plug-in's uploads)")
    expect(figures).to_contain_text("This plug-in's uploads: median wait")
    drawn = [f for f in answer["figures"] if f["drawn"]]
    expect(page.locator(".chart-canvas[data-drawn]")).to_have_count(len(drawn))
    assert page.locator(".chart-canvas[data-drawn='failed']").count() == 0
    assert figures.get_by_role("img", name="Readers who show it, per day").count() == 1
    readers_row = figures.locator("table", has_text="readers").first.locator("tbody tr").first
    expect(readers_row).to_have_text("readers1")
    assert page.locator(".chart-empty").count() == 0
    shot(page, "portal-figures-drawn-desk")
    assert (
        scan(
            browsing, session_cookie(pub.owner), f"/portal/{pub.org}/plugins/{UK}", "portal-figures"
        )
        == []
    )
    empty_plugin_tables(papi.engine)
