"""A reader's pictures in Debian's Chromium: from a day's row to its series chart (uPlot, drawn
from the chart's JSON route), switching its range, and the calendar as it was known on a past
date showing a revised value as it was, with the revision listed. Both pages pass axe at 390
and 1280 px with no CSP complaint; screenshots go to tests/pages/artifacts/."""

from __future__ import annotations

import json
from datetime import UTC, date, datetime, timedelta

from tests.api.test_host import empty_plugin_tables, folder_files
from tests.api.test_reader import MANIFEST, show, value
from tests.audience.helpers import T0, StoredPlugin, fresh_id
from tests.pages.conftest import session_cookie
from tests.pages.test_accessibility import scan
from tests.pages.test_reader_pages import shot
from tests.publishing.test_review_and_store import approved, publish, reviewer
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
    shot(page, "store-chart-desk")
    assert scan(browsing, cookie, f"/store/{ECB}", "store-chart") == []
    empty_plugin_tables(papi.engine)
