"""Every page at a phone's width (390 px) and a desk's (1280 px): an axe-core scan with no
serious or critical violation, no Content Security Policy violation in the console, and a
screenshot kept in tests/pages/artifacts/. axe-core comes from the `axe-playwright-python`
wheel of the dev extra (its bundled axe.min.js): nothing is downloaded at test time."""

from __future__ import annotations

from axe_playwright_python.sync_playwright import Axe
from playwright.sync_api import expect

from tests.audience.helpers import T0, StoredPlugin, fresh_id
from tests.pages.conftest import DESK, PHONE, session_cookie
from tests.pages.test_host_pages import MANIFEST
from tests.pages.test_reader_pages import CASE, busy_month, shot, stored_case

AXE = Axe()


def scan(browsing, cookie: str | None, path: str, name: str, *, charts: bool = False) -> list[str]:  # type: ignore[no-untyped-def]
    """The serious and critical violations of the page at both widths, and its console's CSP
    complaints; screenshots `<name>-desk.png` and `<name>-phone.png`. With `charts`, once
    every chart is drawn (its legend and canvas are scanned too)."""
    found = []
    for label, size in (("desk", DESK), ("phone", PHONE)):
        page = browsing.page(cookie=cookie, size=size)
        complaints: list[str] = []
        page.on(
            "console",
            lambda m, c=complaints: (
                c.append(m.text) if "Content Security Policy" in m.text else None
            ),
        )
        page.goto(path)
        page.wait_for_load_state("load")
        if charts:
            expect(page.locator(".chart-canvas:not([data-drawn])")).to_have_count(0)
        shot(page, f"{name}-{label}")
        results = AXE.run(page)
        for violation in results.response["violations"]:
            if violation["impact"] in ("serious", "critical"):
                targets = [n["target"] for n in violation["nodes"]][:3]
                found.append(f"{name} {label}: {violation['id']} ({violation['impact']}) {targets}")
        found += [f"{name} {label}: {c}" for c in complaints]
    return found


def test_every_page_passes_axe_at_both_widths(papi, browsing) -> None:
    _, plugin = stored_case(papi, CASE)
    reader = papi.signed_in("reader@example.org")
    reader.put(
        "/api/v1/reader/preferences", json={"preferences": {f"plugins.{plugin.id}.shown": True}}
    )
    pending = StoredPlugin(papi.engine, {**MANIFEST, "id": fresh_id("a")}, T0).register()
    operator = papi.signed_in("op@example.org", operator=True)
    operator.post(
        f"/api/v1/host/plugins/{plugin.id}/retention", json={"answer": "no", "terms_read": True}
    )
    # A month whose cells count values in force and the further rows of a line.
    busy = papi.signed_in("busy@example.org")
    busy.put(
        "/api/v1/reader/preferences",
        json={"preferences": {f"plugins.{p.id}.shown": True for p in busy_month(papi)}},
    )
    reader_cookie, operator_cookie = session_cookie(reader), session_cookie(operator)
    pages = [
        (None, "/", "home"),
        (None, "/signin", "signin"),
        (None, "/signup", "signup"),
        (
            reader_cookie,
            "/calendar?month=2026-06&today=2026-06-10&day=2026-06-05",
            "calendar-month",
        ),
        (
            session_cookie(busy),
            "/calendar?month=2026-06&today=2026-06-10&day=2026-06-03",
            "calendar-many-series",
        ),
        (
            reader_cookie,
            "/calendar?view=agenda&start=2026-06-01&today=2026-06-10",
            "calendar-agenda",
        ),
        (reader_cookie, f"/calendar/report/{plugin.id}?day=2026-06-05", "report"),
        (reader_cookie, "/host", "refused"),
        (operator_cookie, "/host", "host-list"),
        (operator_cookie, f"/host/plugins/{pending.id}", "host-plugin"),
        (operator_cookie, f"/host/plugins/{plugin.id}", "host-plugin-approved"),
        (operator_cookie, f"/host/plugins/{plugin.id}/purge", "host-purge"),
    ]
    problems = [p for cookie, path, name in pages for p in scan(browsing, cookie, path, name)]
    assert problems == []
