"""The readers' pages in Chromium: sign up, verify, sign in, turn a plug-in on from a day's
Show sections menu and see its rows on the right days; the drawn rows equal the reader API's
rows for every shared rendering case; the report form; the phone layout."""

from __future__ import annotations

import json
from datetime import date
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import Page

from tests.accounts.helpers import PASSWORD
from tests.api.test_reader import SERVED
from tests.audience.helpers import T0, StoredPlugin, fresh_id, store_case_records
from tests.pages.conftest import ARTIFACTS, PHONE, session_cookie

CASE = (
    Path(__file__).resolve().parents[1]
    / "conformance"
    / "days"
    / "value-in-force-and-last-rate.json"
)

# The drawn rows of a page, read back field by field from the markup.
READ_ROWS = """() => Array.from(document.querySelectorAll('[data-date]'))
  .filter((day) => day.querySelector('.section'))
  .map((day) => ({
    date: day.dataset.date,
    sections: Array.from(day.querySelectorAll('.section')).map((s) => ({
      plugin: s.dataset.plugin,
      name: s.querySelector('.section-name').textContent.trim(),
      rows: Array.from(s.querySelectorAll('li.row')).map((li) => {
        const text = (sel) => {
          const e = li.querySelector(sel);
          return e ? e.textContent.trim() : null;
        };
        return {
          type: li.dataset.type,
          series: li.dataset.series || null,
          label: li.dataset.type === 'status' ? null : text('.name'),
          href: li.dataset.type === 'item' ? li.querySelector('a').getAttribute('href') : null,
          figures: Array.from(li.querySelectorAll('.fig')).map((f) => ({
            label: f.querySelector('.lab') ? f.querySelector('.lab').textContent.trim() : null,
            text: f.querySelector('.num').textContent.trim(),
            spoken: f.querySelector('.spoken').textContent.trim(),
          })),
          change: text('.change'),
          note: text('.note'),
          attribution: text('.attr'),
          lighter: li.classList.contains('in-force') || li.classList.contains('last'),
        };
      }),
    })),
  }))"""


# The words a line shows on screen, its parts apart (its screen reader's words left out).
SEEN_TEXT = """(e) => {
  const copy = e.cloneNode(true);
  copy.querySelectorAll('.sr-only').forEach((s) => s.remove());
  const parts = Array.from(copy.children).map((c) => c.textContent);
  return parts.join(' ').split(/\\s+/).filter(Boolean).join(' ');
}"""


def expected_rows(days: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The reader API's days in the shape READ_ROWS reads: every field a row draws."""
    drawn = []
    for day in days:
        if not day["sections"]:
            continue
        sections = []
        for section in day["sections"]:
            rows = []
            for row in section["rows"]:
                kind = row["type"]
                rows.append(
                    {
                        "type": kind,
                        "series": row.get("series"),
                        "label": None if kind == "status" else row["label"],
                        "href": row.get("href"),
                        "figures": [
                            {
                                "label": f["label"] if kind == "value" else None,
                                "text": f["text"],
                                "spoken": f["spoken"],
                            }
                            for f in row.get("figures", [])
                        ],
                        "change": (row.get("change") or {}).get("text"),
                        "note": row.get("note"),
                        "attribution": row.get("attribution"),
                        "lighter": row.get("style") in ("in-force", "last"),
                    }
                )
            sections.append({"plugin": section["plugin"], "name": section["name"], "rows": rows})
        drawn.append({"date": day["date"], "sections": sections})
    return drawn


def stored_case(api, path: Path) -> tuple[dict[str, Any], StoredPlugin]:  # type: ignore[no-untyped-def]
    case = json.loads(path.read_text(encoding="utf-8"))
    plugin = StoredPlugin(api.engine, {**case["manifest"], "id": fresh_id()}, T0)
    plugin.register().approve()
    store_case_records(plugin, case["records"], case["today"])
    if case["status"] == "failing":
        plugin.fail(date.fromisoformat(case["today"]))
    elif case["status"] == "paused":
        plugin.pause()
    elif case["status"] == "pending":
        plugin.new_version()
    return case, plugin


def shot(page: Page, name: str) -> None:
    page.screenshot(path=str(ARTIFACTS / f"{name}.png"), full_page=True)


def test_a_reader_signs_up_turns_a_plugin_on_and_sees_its_rows_on_their_days(
    papi, browsing
) -> None:
    _, plugin = stored_case(papi, CASE)
    page = browsing.page()
    page.goto("/")
    page.get_by_role("link", name="Sign up").first.click()
    page.get_by_label("E-mail address").fill("reader@example.org")
    page.get_by_label("Password").fill(PASSWORD)
    page.get_by_role("button", name="Sign up").click()
    page.get_by_role("status").filter(has_text="reader@example.org").wait_for()
    page.goto(papi.verification_link("reader@example.org"))
    page.goto("/calendar?month=2026-06&today=2026-06-10")
    assert "/signin" in page.url  # not signed in yet: sent to sign in, and back afterwards
    page.get_by_label("E-mail address").fill("reader@example.org")
    page.get_by_label("Password").fill(PASSWORD)
    page.get_by_role("button", name="Sign in").click()
    page.wait_for_url("**/calendar?month=2026-06&today=2026-06-10")
    assert page.get_by_role("heading", level=1).inner_text() == "June 2026"
    assert page.locator("td.day .compact").count() == 0  # nothing shown yet: quiet days

    # Choose a day, open its Show sections menu and turn the plug-in on.
    page.get_by_role("link", name="Friday 5 June 2026").click()
    page.get_by_role("heading", name="Friday 5 June 2026").wait_for()
    # The menu is open while nothing is shown: a new reader sees where to start.
    assert page.locator("details.menu[open]").count() == 1
    page.locator(f"#show-{plugin.id}").check()  # other tests left plug-ins of this name
    page.get_by_role("button", name="Save sections").click()
    page.get_by_role("status").filter(has_text="saved").wait_for()

    # The synced preference is the API's own.
    reader = papi.client()
    cookies = {c["name"]: c["value"] for c in page.context.cookies()}
    reader.cookies.set("almanac_session", cookies["almanac_session"])
    prefs = reader.get("/api/v1/reader/preferences").json()
    assert prefs["preferences"][f"plugins.{plugin.id}.shown"] is True

    # The rows are on their days: the 5th's rate, the 6th in force (lighter), nothing after today.
    cell = page.locator('td[data-date="2026-06-05"]')
    compact = cell.locator("li.c").first
    assert compact.inner_text().startswith("US dollar")
    assert compact.locator(".num").inner_text() == "58.20"  # the first figure, Buy
    assert compact.locator(".sr-only").inner_text() == "58.20 Dominican pesos"  # rule 8
    assert "in-force" in page.locator('td[data-date="2026-06-06"] li.c').first.get_attribute(
        "class"
    )
    assert page.locator('td[data-date="2026-06-11"] li.c').count() == 0
    assert "today" in page.locator('td[data-date="2026-06-10"]').get_attribute("class")
    panel = page.locator("#day-panel")
    assert panel.locator("li.row .change").inner_text() == "+0.50%"
    api_days = reader.get(
        "/api/v1/reader/days",
        params={"from": "2026-06-05", "to": "2026-06-05", "today": "2026-06-10"},
    ).json()["plugins"][0]["days"]
    assert page.evaluate(
        READ_ROWS.replace("[data-date]", "#day-panel [data-date]")
    ) == expected_rows(api_days)
    # The day menu's little script: arrow keys walk the month, Escape closes the menu.
    page.get_by_role("link", name="Friday 5 June 2026").focus()
    page.keyboard.press("ArrowRight")
    page.keyboard.press("ArrowDown")
    focused = page.evaluate("document.activeElement.textContent")
    assert "Saturday 13 June 2026" in focused
    page.get_by_text("Show sections").click()
    page.keyboard.press("Escape")
    assert page.locator("details.menu[open]").count() == 0
    shot(page, "calendar-month-desk")

    page.set_viewport_size(PHONE)
    shot(page, "calendar-month-phone")
    # On a phone the month is a list: days without rows are hidden, the long dates are shown.
    assert not page.locator('td[data-date="2026-06-03"]').is_visible()
    assert page.locator('td[data-date="2026-06-05"] .long').is_visible()


@pytest.mark.parametrize("path", SERVED, ids=[p.stem for p in SERVED])
def test_the_agenda_draws_exactly_the_reader_api_rows(papi, browsing, path: Path) -> None:
    case, plugin = stored_case(papi, path)
    reader = papi.signed_in("reader@example.org")
    answer = reader.put(
        "/api/v1/reader/preferences", json={"preferences": {f"plugins.{plugin.id}.shown": True}}
    )
    assert answer.status_code == 200, answer.text
    params = {k: case[k] for k in ("from", "to", "today", "language")}
    [entry] = reader.get("/api/v1/reader/days", params=params).json()["plugins"]
    page = browsing.page(cookie=session_cookie(reader))
    page.goto(
        f"/calendar?view=agenda&start={case['from']}&today={case['today']}&lang={case['language']}"
    )
    drawn = page.evaluate(READ_ROWS.replace("[data-date]", ".agenda [data-date]"))
    # The agenda holds 62 days from `from`; the case's range is its start.
    drawn = [d for d in drawn if d["date"] <= case["to"]]
    assert drawn == expected_rows(entry["days"])
    # Empty days stay quiet: no day but today is drawn without rows, and nothing says "Nothing".
    dates = page.locator(".agenda-day").evaluate_all("(els) => els.map((e) => e.dataset.date)")
    with_rows = {d["date"] for d in expected_rows(entry["days"])}
    assert set(dates) - with_rows <= {case["today"]}
    assert "Nothing" not in page.locator("main").inner_text()
    # The month holding `from` draws the same rows compactly in their cells, what happened
    # that day first: its events, its own records, then the values carried forward.
    month = page.goto(
        f"/calendar?month={case['from'][:7]}&today={case['today']}&lang={case['language']}"
    )
    assert month is not None and month.status == 200
    for day in entry["days"]:
        cell = page.locator(f'td[data-date="{day["date"]}"]')
        if cell.count():
            rows = [r for s in day["sections"] for r in s["rows"]]
            lines = [li.evaluate(SEEN_TEXT) for li in cell.locator("li.c").all()]
            assert lines == cell_lines(rows), day["date"]


def cell_lines(rows: list[dict[str, Any]]) -> list[str]:
    """The lines a month cell shows for one plug-in's rows of a day: its first event with the
    count of the others, its first record of the day likewise, one value in force as a row or
    several counted, then a status that says something is wrong."""

    def words(row: dict[str, Any]) -> str:
        if row["type"] in ("item", "status"):
            return row.get("label") or row["note"]
        marker = "◆ " if row.get("state") == "scheduled" else ""
        figure = f" {row['figures'][0]['text']}" if row["figures"] else ""
        return f"{marker}{row['label']}{figure}"

    def line(group: list[dict[str, Any]]) -> list[str]:
        more = f" +{len(group) - 1}" if len(group) > 1 else ""
        return [words(group[0]) + more] if group else []

    carried = [r for r in rows if r.get("style") in ("in-force", "last")]
    return (
        line([r for r in rows if r["type"] == "event"])
        + line([r for r in rows if r["type"] == "item" or r.get("style") == "normal"])
        + (line(carried) if len(carried) < 2 else [f"{len(carried)} rates in force"])
        + [r["note"] for r in rows if r["type"] == "status" and r["status"] != "last-rate"]
    )


def test_a_reader_picks_a_language_reports_a_plugin_and_sees_a_takedown(papi, browsing) -> None:
    _, plugin = stored_case(papi, CASE)
    reader = papi.signed_in("reader@example.org")
    reader.put(
        "/api/v1/reader/preferences", json={"preferences": {f"plugins.{plugin.id}.shown": True}}
    )
    page = browsing.page(cookie=session_cookie(reader))
    page.goto("/calendar?month=2026-06&today=2026-06-10&day=2026-06-05")
    page.get_by_label("Language").select_option("es")
    page.get_by_role("button", name="Apply").click()
    panel = page.locator("#day-panel")
    assert panel.locator(f'[data-plugin="{plugin.id}"] .section-name').text_content() == "Tasas DOP"
    assert panel.locator("li.row .name").inner_text() == "Dólar"
    assert page.get_by_label("Language").input_value() == "es"

    page.get_by_role("link", name="Report Tasas DOP").click()
    page.get_by_label("Wrong data").check()
    page.get_by_label("Note").fill("The sell rate of the 5th looks off.")
    page.get_by_role("button", name="Send report").click()
    page.get_by_role("status").filter(has_text="the report was sent").wait_for()
    operator = papi.signed_in("op@example.org", operator=True)
    [report] = operator.get(f"/api/v1/reader/plugins/{plugin.id}/reports").json()
    assert (report["category"], report["day"]) == ("wrong-data", "2026-06-05")
    assert "reader@example.org" not in str(report)

    plugin.take_down("Withdrawn while its terms are checked.")
    page.goto("/calendar?month=2026-06&today=2026-06-10")
    assert "Withdrawn while its terms are checked." in page.get_by_role("note").inner_text()
    assert page.locator("li.c").count() == 0


def test_a_busy_day_shows_four_rows_in_its_cell_and_says_how_many_more(papi, browsing) -> None:
    from tests.api.test_reader import plugin_in_store, value

    reader = papi.signed_in("reader@example.org")
    for n in range(6):
        plugin = plugin_in_store(papi)
        plugin.write([value("2026-06-03", 58 + n), value("2026-06-04", 58.5 + n)], date(2026, 6, 4))
        reader.put(
            "/api/v1/reader/preferences",
            json={"preferences": {f"plugins.{plugin.id}.shown": True}},
        )
    page = browsing.page(cookie=session_cookie(reader))
    page.goto("/calendar?month=2026-06&today=2026-06-04&day=2026-06-04")
    cell = page.locator('td[data-date="2026-06-04"]')
    assert cell.locator("li.c").count() == 6
    assert sum(1 for row in cell.locator("li.c").all() if row.is_visible()) == 4
    more = cell.get_by_role("link", name="2 more on Thursday 4 June 2026")
    assert more.is_visible()
    assert page.locator("#day-panel li.row").count() == 6
    shot(page, "calendar-busy-desk")
    page.set_viewport_size(PHONE)
    assert sum(1 for row in cell.locator("li.c").all() if row.is_visible()) == 6
    assert not more.is_visible()
    shot(page, "calendar-busy-phone")


# --- the month grid: what happened that day first -------------------------------------------


def _value_series(key: str, name: str, unit: str) -> dict[str, Any]:
    return {"key": key, "kind": "value", "cadence": "business-day", "dates": "observation",
            "name": {"en": name}, "unit": unit, "fields": ["rate"]}  # fmt: skip


def _plugin(api, prefix: str, name: str, series: list[dict[str, Any]]) -> StoredPlugin:  # type: ignore[no-untyped-def]
    doc = {
        "contract": 1, "id": fresh_id(prefix), "name": {"en": name}, "version": "1.0.0",
        "timezone": "UTC", "audience": "public", "schedule": "0 16 * * 1-5", "backfill": "all",
        "sources": [{"name": "rates", "url": "https://example.org/rates.csv"}],
        "series": series, "licence": {"holder": f"{name} holder", "terms": None, "retain": "yes"},
    }  # fmt: skip
    return StoredPlugin(api.engine, doc, T0).register().approve()


def busy_month(api) -> list[StoredPlugin]:  # type: ignore[no-untyped-def]
    """A plug-in of 26 rates last published on 1 June (ids sort it first), a central bank's
    rate decision on 3 June and another bank's three rates fixed that day."""
    many = _plugin(
        api, "a-sdr-", "SDR rates",
        [_value_series(f"c{n:02d}", f"Currency {n:02d}", "XDR") for n in range(26)],
    )  # fmt: skip
    many.write(
        [{"kind": "value", "series": f"c{n:02d}", "date": "2026-06-01", "fields": {"rate": n + 1}}
         for n in range(26)],
        date(2026, 6, 1),
    )  # fmt: skip
    fed = _plugin(
        api, "b-fed-", "Federal Reserve",
        [{"key": "target", "kind": "event", "cadence": "irregular", "dates": "observation",
          "name": {"en": "Federal funds rate"}, "unit": "%"}],
    )  # fmt: skip
    fed.write(
        [{"kind": "event", "series": "target", "id": "may", "date": "2026-05-06",
          "state": "happened", "value": 4.5},
         {"kind": "event", "series": "target", "id": "june", "date": "2026-06-03",
          "state": "happened", "value": 4.25}],
        date(2026, 6, 3),
    )  # fmt: skip
    cnb = _plugin(
        api, "c-cnb-", "CNB fixing",
        [_value_series("usd", "US dollar", "CZK"), _value_series("eur", "Euro", "CZK"),
         _value_series("gbp", "Pound", "CZK")],
    )  # fmt: skip
    cnb.write(
        [{"kind": "value", "series": key, "date": "2026-06-03", "fields": {"rate": rate}}
         for key, rate in (("usd", 22.1), ("eur", 24.9), ("gbp", 29.3))],
        date(2026, 6, 3),
    )  # fmt: skip
    return [many, fed, cnb]


def test_a_month_cell_shows_the_days_event_and_records_before_values_carried_forward(
    papi, browsing
) -> None:
    reader = papi.signed_in("reader@example.org")
    for plugin in busy_month(papi):
        reader.put(
            "/api/v1/reader/preferences",
            json={"preferences": {f"plugins.{plugin.id}.shown": True}},
        )
    page = browsing.page(cookie=session_cookie(reader))
    page.goto("/calendar?month=2026-06&today=2026-06-10&day=2026-06-03")
    cell = page.locator('td[data-date="2026-06-03"]')

    def visible_lines() -> list[str]:
        box = cell.bounding_box()
        assert box is not None
        seen = []
        for line in cell.locator("li.c").all():
            shown = line.bounding_box()
            if (
                line.is_visible()
                and shown
                and shown["y"] + shown["height"] <= box["y"] + box["height"]
            ):
                seen.append(line.evaluate(SEEN_TEXT))
        return seen

    # The rate decision, then the day's fixing (one line for the bank's three rates), then the
    # 26 rates carried forward as one line (their "Last rate" status row is the panel's).
    assert visible_lines() == [
        "Federal funds rate 4.25%",
        "US dollar 22.10 +2",
        "26 rates in force",
    ]
    assert cell.locator("li.more").count() == 0
    assert cell.locator("li.c.event .sr-only").inner_text() == "4.25 percent"
    assert cell.locator("li.c .also .sr-only").inner_text() == ", and 2 more"
    shot(page, "calendar-many-series-desk")
    # The day panel keeps every row in rule 3's order, as the reader API draws them.
    api_days = [
        entry["days"][0]
        for entry in reader.get(
            "/api/v1/reader/days",
            params={"from": "2026-06-03", "to": "2026-06-03", "today": "2026-06-10"},
        ).json()["plugins"]
    ]
    merged = [{"date": "2026-06-03", "sections": [s for d in api_days for s in d["sections"]]}]
    drawn = page.evaluate(READ_ROWS.replace("[data-date]", "#day-panel [data-date]"))
    assert drawn == expected_rows(merged)
    assert page.locator("#day-panel li.row").count() == 26 + 1 + 1 + 3

    page.set_viewport_size(PHONE)
    shot(page, "calendar-many-series-phone")
    phone_lines = [line.evaluate(SEEN_TEXT) for line in cell.locator("li.c").all()]
    assert phone_lines == ["Federal funds rate 4.25%", "US dollar 22.10 +2", "26 rates in force"]
    assert all(line.is_visible() for line in cell.locator("li.c").all())


def test_the_records_of_a_series_an_update_removed_stay_on_the_calendar(papi, browsing) -> None:
    from tests.feeds.test_feeds import with_a_removed_series

    plugin = with_a_removed_series(papi)
    reader = papi.signed_in("reader@example.org")
    reader.put(
        "/api/v1/reader/preferences", json={"preferences": {f"plugins.{plugin.id}.shown": True}}
    )
    params = {"from": "2026-06-01", "to": "2026-06-15", "today": "2026-06-15"}
    [entry] = reader.get("/api/v1/reader/days", params=params).json()["plugins"]
    page = browsing.page(cookie=session_cookie(reader))
    page.goto("/calendar?month=2026-06&today=2026-06-15&day=2026-06-04")
    cell = page.locator('td[data-date="2026-06-04"]')
    assert [li.evaluate(SEEN_TEXT) for li in cell.locator("li.c").all()] == [
        "IMF SDR 1.34",  # the day's record of the series 1.1.0 removed, by its last name
        "Dollar 58.40",  # the dollar of 2 June in force
    ]
    panel = page.evaluate(READ_ROWS.replace("[data-date]", "#day-panel [data-date]"))
    fourth = [d for d in entry["days"] if d["date"] == "2026-06-04"]
    assert panel == expected_rows(fourth)
    assert page.locator('#day-panel li.row[data-series="sdr"] .lab').inner_text() == "USD per SDR"
    page.goto("/calendar?view=agenda&start=2026-06-01&today=2026-06-15")
    agenda = page.evaluate(READ_ROWS.replace("[data-date]", ".agenda [data-date]"))
    assert [d for d in agenda if d["date"] <= "2026-06-15"] == expected_rows(entry["days"])
    assert page.locator('.agenda li.row[data-series="sdr"]').count() == 4
