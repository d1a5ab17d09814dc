"""The operators' pages in Chromium: approve a pending version by the digest the page shows (a
changed digest refused with the API's sentence), answer Held, record the retention answer and
purge with the dry-run counts and the typed id, take down and lift, the private reader list."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from playwright.sync_api import Page, expect

from almanac.platform.lifecycle import RunTrigger
from almanac.platform.store.engine import write_transaction
from almanac.platform.store.run_requests import open_run_requests, request_run, take_run_request
from almanac.platform.store.write import RunFacts
from tests.api.test_host import UK, empty_plugin_tables
from tests.audience.helpers import T0, StoredPlugin, example_plugin, example_records, fresh_id
from tests.pages.conftest import PHONE, session_cookie
from tests.pages.test_reader_pages import shot

MANIFEST = {
    "contract": 1,
    "name": {"en": "Sample rates"},
    "version": "1.0.0",
    "timezone": "America/Santo_Domingo",
    "audience": "private",
    "schedule": "0 9 * * *",
    "backfill": "all",
    "sources": [{"name": "rates", "url": "https://example.org/rates.csv"}],
    "series": [
        {
            "key": "usd",
            "kind": "value",
            "cadence": "daily",
            "dates": "observation",
            "name": {"en": "Dollar"},
            "unit": "DOP",
            "fields": ["buy"],
        }
    ],
    "licence": {"holder": "Example Bank", "terms": "Keep for 30 days.", "retain": "unknown"},
}


def test_an_operator_approves_by_the_digest_shown_and_runs_the_plugin_page(papi, browsing) -> None:
    plugin = StoredPlugin(papi.engine, {**MANIFEST, "id": fresh_id("h")}, T0).register()
    operator = papi.signed_in("op@example.org", operator=True)
    page = browsing.page(cookie=session_cookie(operator))
    page.goto("/host")
    row = page.get_by_role("row").filter(has_text=plugin.id)
    assert "Pending" in row.inner_text()
    row.get_by_role("link", name=plugin.id, exact=True).click()
    shown = page.locator("#shown-digest").inner_text()
    assert shown.startswith("sha256:")
    assert page.get_by_role("row").filter(has_text="fetch.mjs").count() == 1
    dagster = page.get_by_role("link", name="Asset in the Dagster UI").get_attribute("href")
    assert dagster.endswith(f":3000/assets/plugins/{plugin.id}")
    shot(page, "host-plugin-pending-desk")

    # The files change while the page is open: approving what the page showed is refused.
    page2 = browsing.page(cookie=session_cookie(operator))
    page2.goto(f"/host/plugins/{plugin.id}")
    plugin.doc["version"] = "1.0.1"
    plugin.register({"fetch.mjs": b"// another fetcher\n"})
    page2.get_by_role("button", name="Approve this digest").click()
    alert = page2.get_by_role("alert")
    assert "DIGEST-CHANGED" in alert.inner_text()

    page.reload()
    page.get_by_role("button", name="Approve this digest").click()
    page.get_by_role("status").filter(has_text="Approved").wait_for()
    assert page.locator(".plugin-head .badge").first.inner_text() == "Approved"
    answer = operator.get(f"/api/v1/host/plugins/{plugin.id}").json()
    assert answer["state"] == "approved" and answer["approved_digest"] == answer["current_digest"]
    assert answer["moves"][-1]["by"] == "op@example.org"

    page.get_by_role("button", name="Pause").click()
    page.get_by_role("status").filter(has_text="Paused").wait_for()
    page.get_by_role("button", name="Resume").click()
    page.get_by_role("status").filter(has_text="Resumed").wait_for()

    # The private reader list.
    page.get_by_label("People, one e-mail a line").fill("reader@example.org\nother@example.org")
    page.get_by_role("button", name="Save the list").click()
    page.get_by_role("status").filter(has_text="Reader list saved").wait_for()
    listed = operator.get(f"/api/v1/host/plugins/{plugin.id}/readers").json()
    assert sorted(listed["emails"]) == ["other@example.org", "reader@example.org"]

    # Retention: the answer needs the terms read; then a purge counts first, then wants the id.
    page.get_by_label("no", exact=True).check()
    page.get_by_role("button", name="Record the answer").click()
    assert "terms_read" in page.get_by_role("alert").inner_text()
    page.get_by_label("no", exact=True).check()
    page.get_by_label("I read the terms above").check()
    page.get_by_role("button", name="Record the answer").click()
    page.get_by_role("status").filter(has_text="Retention answer recorded").wait_for()
    assert page.locator(".retain-answer").inner_text().startswith("no, recorded by op@example.org")
    plugin.version_id = answer["approved_version_id"]
    plugin.digest = answer["approved_digest"]
    plugin.write([{"kind": "value", "series": "usd", "date": "2026-06-01", "fields": {"buy": 1}}],
                 T0.date())  # fmt: skip
    page.get_by_role("link", name="Purge records…").click()
    assert page.locator(".purge-records").inner_text() == "1"
    shot(page, "host-purge-desk")
    page.get_by_label("Type the plug-in id").fill("not-the-id")
    page.get_by_role("button", name="Purge for good").click()
    assert "PLG-PURGE-CONFIRM" in page.get_by_role("alert").inner_text()
    page.goto(f"/host/plugins/{plugin.id}/purge")
    page.get_by_label("Type the plug-in id").fill(plugin.id)
    page.get_by_role("button", name="Purge for good").click()
    page.get_by_role("status").filter(has_text="Purged").wait_for()

    # Takedown with its public message, then lifted for the same digest.
    page.get_by_text("Take down…").click()
    page.get_by_label("Reason").fill("terms broken")
    page.get_by_label("Public message readers see").fill("Withdrawn while we check its terms.")
    page.get_by_role("button", name="Take down").click()
    page.get_by_role("status").filter(has_text="Taken down").wait_for()
    page.get_by_role("button", name="Lift the takedown").click()
    page.get_by_role("status").filter(has_text="Takedown lifted").wait_for()
    # Registered at the host, never published through the portal: no shelf to speak of.
    shelf = page.get_by_role("region", name="Takedown and shelf")
    assert "Not in the store" in shelf.inner_text()
    page.get_by_role("button", name="Remove").click()
    page.get_by_role("status").filter(has_text="Removed").wait_for()
    page.get_by_role("button", name="Restore: approve this digest again").click()
    page.get_by_role("status").filter(has_text="Restored").wait_for()


# The host's figures are read at NOW (15:20 UTC): the last day is the 24 hours ending at 16:00.
NOW = datetime(2029, 11, 14, 15, 20, tzinfo=UTC)
DAY = NOW.replace(hour=0, minute=0)
RETRY = timedelta(minutes=30)  # Running rule 4: a failed run leaves a retry this long after
# A day of runs, hand-counted: (start, seconds it took, succeeded, the request it ran for).
# Success: 18h, 22h the day before; 02h (the retry), 06h twice, 11h, 12h. Failure: 02h, 09h
# twice (the retry failed too: a retry leaves no retry), 14h. Durations sorted: 30 30 45 60
# 90 120 150 200 240 300 600: nearest-rank median 120, 90th 300, 99th 600.
RUNS = [
    (DAY - timedelta(hours=6, minutes=-5), 30, True, None),
    (DAY - timedelta(hours=2, minutes=-5), 45, True, None),
    (DAY + timedelta(hours=2, minutes=5), 60, False, None),
    (DAY + timedelta(hours=2, minutes=37, seconds=30), 90, True, "retry"),  # due 02:36:00
    (DAY + timedelta(hours=6, minutes=5), 120, True, None),
    (DAY + timedelta(hours=6, minutes=40), 150, True, None),
    (DAY + timedelta(hours=9, minutes=5), 200, False, None),
    (DAY + timedelta(hours=9, minutes=43, seconds=20), 240, False, "retry"),  # due 09:38:20
    (DAY + timedelta(hours=11, minutes=20), 30, True, "resume"),  # asked for 11:00
    (DAY + timedelta(hours=12, minutes=5), 300, True, None),
    (DAY + timedelta(hours=14, minutes=5), 600, False, None),  # its retry, due 14:45, waits
]
WEEK_ONLY = (DAY - timedelta(days=3, hours=-10), 45, True, None)  # in the week, not the day


def host_runs(papi) -> int:  # type: ignore[no-untyped-def]
    """The day of RUNS and the week's one more, written through the store as the sensor and
    the run would: a failure's retry taken when its run starts, an operator's request due at
    11:00 taken at 11:20, another due at 15:00 still waiting and one not due before 16:30.
    Answers the count of requests open at NOW before any of these was written (its
    approval's first run request among them: no sensor takes it here)."""
    plugin = StoredPlugin(papi.engine, {**MANIFEST, "id": fresh_id("f")}, T0).register()
    plugin.approve()
    with papi.engine.connect() as conn:
        open_before = len(open_run_requests(conn, NOW))
    record = {"kind": "value", "series": "usd", "date": "2029-11-01", "fields": {"buy": 58}}
    asked_for = (timedelta(hours=11), timedelta(hours=15), timedelta(hours=16, minutes=30))
    with write_transaction(papi.engine) as conn:
        resume, *_ = (
            request_run(conn, plugin.id, plugin.version_id, RunTrigger.RESUME, "op@example.org",
                        DAY, not_before=DAY + due)
            for due in asked_for
        )  # fmt: skip
    for start, took, succeeded, asked in [WEEK_ONLY, *RUNS]:
        request_id, trigger = None, RunTrigger.SCHEDULE
        if asked is not None:
            with write_transaction(papi.engine) as conn:
                retries = [
                    r.id
                    for r in open_run_requests(conn, start)
                    if r.plugin_id == plugin.id and r.trigger == "retry"
                ]
                due = resume if asked == "resume" else retries[0]
                assert take_run_request(conn, due, start)
            request_id, trigger = due, RunTrigger(asked)
        run = RunFacts(
            today=start.date(),
            trigger=trigger,
            started_at=start,
            now=start + timedelta(seconds=took),
            request_id=request_id,
        )
        if succeeded:
            plugin.write([record], start.date(), run)
        else:
            plugin.fail(start.date(), run)
    return open_before


def drawn_pixels(page: Page, key: str) -> int:
    """Pixels of a colour (not the greys of axes and grid) on the figure's canvas."""
    return page.locator(f".chart-canvas[data-figure='{key}'] canvas").evaluate(
        """canvas => {
            const d = canvas.getContext("2d").getImageData(0, 0, canvas.width, canvas.height).data;
            let n = 0;
            for (let i = 0; i < d.length; i += 4) {
                const [r, g, b, a] = d.slice(i, i + 4);
                if (a > 0 && Math.max(r, g, b) - Math.min(r, g, b) > 30) n++;
            }
            return n;
        }"""
    )


def test_an_operator_reads_the_runs_of_the_last_day_and_week_drawn(papi, browsing) -> None:
    # Imported here: the axe scan's module imports this module's MANIFEST.
    from tests.pages.test_accessibility import scan

    papi.clock.moment = NOW
    open_before = host_runs(papi)
    operator = papi.signed_in("op@example.org", operator=True)
    page = browsing.page(cookie=session_cookie(operator))
    page.goto("/host")
    figures = page.get_by_role("region", name="Runs of the last day")
    expect(figures).to_contain_text(
        f"Runs: 11. Queue now: {open_before + 2}. Longest wait from due to start: 1200 s."
        " Run duration: median 120 s, 90th percentile 300 s, 99th 600 s."
    )
    expect(page.locator(".chart-canvas[data-drawn]")).to_have_count(2)
    # Each hour of the day and the last hour's end: 25 x values, lines drawn in colour.
    assert page.locator(".chart-canvas[data-figure='runs']").get_attribute("data-drawn") == "25"
    assert drawn_pixels(page, "runs") > 0 and drawn_pixels(page, "waits") > 0
    runs = figures.get_by_role("table", name="Runs per hour by outcome: totals")
    assert runs.locator("tbody tr").all_inner_texts() == ["failure\t4", "success\t7"]
    waits = figures.get_by_role("table", name="Longest wait from due to start per hour: totals")
    assert waits.locator("tbody tr").all_inner_texts() == ["longest wait\t1200"]
    answer = operator.get("/api/v1/host/figures?days=1").json()
    waited = next(f for f in answer["figures"] if f["key"] == "waits")["lines"][0]["values"]
    hours = next(f for f in answer["figures"] if f["key"] == "waits")["x"]
    assert {h[11:13]: v for h, v in zip(hours, waited, strict=True) if v is not None} == {
        "02": 90.0, "09": 300.0, "11": 1200.0
    }  # fmt: skip
    shot(page, "host-figures-drawn-desk")

    page.get_by_role("navigation", name="Span of the figures").get_by_role(
        "link", name="Last week"
    ).click()
    week = page.get_by_role("region", name="Runs of the last week")
    expect(week).to_contain_text("Runs: 12.")
    expect(week).to_contain_text("median 90 s, 90th percentile 300 s")  # 30 30 45 45 60 90 …
    page.wait_for_selector(".chart-canvas[data-figure='runs'][data-drawn='169']")
    week_runs = week.get_by_role("table", name="Runs per hour by outcome: totals")
    assert week_runs.locator("tbody tr").all_inner_texts() == ["failure\t4", "success\t8"]
    assert drawn_pixels(page, "runs") > 0
    shot(page, "host-figures-week-desk")
    assert scan(browsing, session_cookie(operator), "/host", "host-figures", charts=True) == []


def test_an_operator_answers_held_with_the_first_missing_dates(papi, browsing) -> None:
    plugin = example_plugin(papi.engine, "uk-bank-holidays", T0)
    records, today = example_records("uk-bank-holidays")
    plugin.write(records, today)
    for n in range(3):  # the records go missing three times in a row
        plugin.write([], today + timedelta(days=n))
    operator = papi.signed_in("op@example.org", operator=True)
    page = browsing.page(cookie=session_cookie(operator))
    page.goto(f"/host/plugins/{plugin.id}")
    held = page.get_by_role("region", name="Held")
    assert "First missing dates" in held.inner_text()
    api_held = operator.get(f"/api/v1/host/plugins/{plugin.id}").json()["held_series"]
    drawn = held.locator("ul.dates").first.locator("li").all_inner_texts()
    assert drawn == api_held[0]["first_dates"]
    shot(page, "host-held-desk")
    page.set_viewport_size(PHONE)
    shot(page, "host-held-phone")
    page.get_by_role("button", name="Keep them").click()
    page.get_by_role("status").filter(has_text="Held decision recorded").wait_for()
    assert page.get_by_role("region", name="Held").count() == 0
    assert operator.get(f"/api/v1/host/plugins/{plugin.id}").json()["held"] is False


def test_host_pages_are_for_operators_only(papi, browsing) -> None:
    reader = papi.signed_in("reader@example.org")
    page = browsing.page(cookie=session_cookie(reader))
    answer = page.goto("/host")
    assert answer is not None and answer.status == 403
    assert "operators" in page.get_by_role("alert").inner_text()
    assert page.get_by_role("link", name="Host").count() == 0
    operator = papi.signed_in("op@example.org", operator=True)
    calendar = browsing.page(cookie=session_cookie(operator))
    calendar.goto("/calendar")
    calendar.get_by_role("navigation", name="Main").get_by_role("link", name="Host").click()
    calendar.get_by_role("heading", name="Plug-ins").wait_for()
    anonymous = browsing.page()
    anonymous.goto("/host")
    assert "/signin?next=/host" in anonymous.url


def test_an_operator_rolls_back_to_a_version_approved_before(papi, browsing) -> None:
    plugin = StoredPlugin(papi.engine, {**MANIFEST, "id": fresh_id("b")}, T0).register().approve()
    first = plugin.version_id
    plugin.new_version()
    operator = papi.signed_in("op@example.org", operator=True)
    page = browsing.page(cookie=session_cookie(operator))
    page.goto(f"/host/plugins/{plugin.id}")
    page.get_by_role("button", name="Approve this digest").click()
    page.get_by_role("status").filter(has_text="Approved").wait_for()
    page.goto(f"/host/plugins/{plugin.id}?version={first}")
    page.get_by_label("Why roll back to 1.0.0").fill("9.9.9 reads the source wrongly")
    page.get_by_role("button", name="Roll back to 1.0.0").click()
    page.get_by_role("status").filter(has_text="Rolled back").wait_for()
    answer = operator.get(f"/api/v1/host/plugins/{plugin.id}").json()
    assert (answer["current_version"], answer["approved_version"]) == ("1.0.0", "1.0.0")
    assert answer["moves"][-1]["by"] == "op@example.org"


def test_the_shelf_is_said_only_of_a_plugin_the_store_lists(papi, browsing) -> None:
    # Imported here: test_store_pages imports this module's MANIFEST through the axe scan.
    from tests.pages.test_store_pages import published_uk

    published_uk(papi)
    never = StoredPlugin(papi.engine, {**MANIFEST, "id": fresh_id("n")}, T0).register()
    operator = papi.signed_in("op@example.org", operator=True)
    page = browsing.page(cookie=session_cookie(operator))
    page.goto(f"/host/plugins/{never.id}")
    shelf = page.get_by_role("region", name="Takedown and shelf")
    expect(shelf).to_contain_text("Not in the store: it was never published through the portal")
    assert "On the shelf" not in shelf.inner_text()
    assert shelf.get_by_role("button", name="Take off the shelf").count() == 0

    page.goto(f"/host/plugins/{UK}")
    shelf = page.get_by_role("region", name="Takedown and shelf")
    expect(shelf).to_contain_text("On the shelf: the store lists it")
    shelf.get_by_role("button", name="Take off the shelf").click()
    page.get_by_role("status").filter(has_text="Taken off the shelf").wait_for()
    shelf = page.get_by_role("region", name="Takedown and shelf")
    expect(shelf).to_contain_text("Off the shelf: the store no longer shows it")
    shot(page, "host-plugin-off-the-shelf")
    shelf.get_by_role("button", name="Put back on the shelf").click()
    page.get_by_role("status").filter(has_text="Back on the shelf").wait_for()
    expect(page.get_by_role("region", name="Takedown and shelf")).to_contain_text(
        "On the shelf: the store lists it"
    )
    empty_plugin_tables(papi.engine)
