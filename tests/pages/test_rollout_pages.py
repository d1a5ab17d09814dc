"""A rollout in the pages, in Chromium: the publisher publishes an update with a shadow period
from the upload page, the plug-in page shows its state, runs done of N and the shadow run's
diff with a link to the full diff (a page: counts per series and the records that change; the
desk links its own), the host lists it in progress, the review desk shows the
shadow run of the version it reviewed; the publisher stops it from the plug-in page. Every page
passes axe at both widths. The shadow run is kept through its domain function from a real diff
of the stored records (its run in the locked room is tests/publishing/test_rollouts.py)."""

from __future__ import annotations

import json
import re
from datetime import date

from playwright.sync_api import expect
from sqlalchemy.orm import Session

from almanac.platform.publishing.models import Rollout
from almanac.platform.publishing.publication.rollouts import record_shadow_run
from almanac.platform.store.tables import runs
from tests.api.test_host import UK, empty_plugin_tables
from tests.pages.conftest import Browsing, session_cookie
from tests.pages.test_accessibility import scan
from tests.pages.test_publishing_pages import first_run
from tests.publishing.test_review_and_store import approved, publish, reviewer
from tests.publishing.test_submission import files_with, may_submit
from tests.publishing.test_uploads import Publisher, new_org


def test_a_rollout_on_the_upload_plugin_host_and_desk_pages(browsing: Browsing) -> None:
    papi = browsing.api
    empty_plugin_tables(papi.engine)
    owner, org = new_org(papi, "owner@bank.example", "Bank")
    pub = Publisher(papi, owner, org)
    may_submit(pub)
    rev = reviewer(papi, "rev@service.example")
    assert publish(pub, approved(pub, rev, files_with())).status_code == 200
    first_run(papi)
    files = files_with(version="1.1.0", releaseNotes={"en": "Retitled."})
    update = approved(pub, rev, files)

    page = browsing.page(cookie=session_cookie(owner))
    page.goto(f"/portal/{org}/uploads/{update}")
    page.get_by_label(re.compile("^Shadow period")).select_option("2")
    page.get_by_role("button", name="Publish").click()
    expect(page.get_by_role("status")).to_contain_text("Published with a shadow period")

    # One shadow run: every record printed again, Boxing Day 2022 retitled.
    batch = [json.loads(line) for line in files["fixtures/records.jsonl"].splitlines()]
    for record in batch:
        if record["series"] == "england-and-wales" and record["id"] == "boxing-day-2022":
            record["title"] = "Boxing Day (observed)"
    with Session(papi.engine) as db:
        rollout = db.query(Rollout).one()
        run_id = db.connection().execute(runs.select().with_only_columns(runs.c.id)).scalar_one()
        record_shadow_run(
            db,
            rollout.id,
            run_id=run_id,
            today=date(2022, 11, 4),
            batch=batch,
            failure=None,
            seconds=0.42,
            now=papi.clock(),
            base_url=papi.base_url,
        )
        db.commit()

    page.goto(f"/portal/{org}/plugins/{UK}")
    section = page.locator("section", has=page.get_by_role("heading", name="Rollouts"))
    expect(section.get_by_role("heading", level=3)).to_have_text(
        "1.1.0 after 1.0.0: shadowing, 1 of 2 shadow runs"
    )
    row = section.get_by_role("table").locator("tbody tr")
    expect(row.locator("td").nth(2)).to_have_text("passed")
    expect(row.locator("td").nth(3)).to_contain_text(
        "england-and-wales: 0 new, 1 revised, 0 moved, 0 missing"
    )
    expect(section.get_by_role("button", name="Promote now")).to_be_visible()
    # The full diff is a page: per series counts, and the records that change, before and after.
    row.get_by_role("link", name=re.compile("full diff of shadow run")).click()
    diff_page = page.url.removeprefix(papi.base_url)
    assert re.fullmatch(rf"/portal/{org}/plugins/{UK}/shadow-runs/\d+/diff", diff_page), diff_page
    counts = page.get_by_role("table", name="Records by series")
    expect(counts.locator("tbody tr", has_text="england-and-wales").locator("td")).to_have_text(
        ["0", "1", "0", "0"]
    )
    changed = page.get_by_role("table", name="Records that change").locator("tbody tr")
    expect(changed).to_have_count(1)
    expect(changed.locator("td").nth(3)).to_contain_text("Boxing Day (observed)")
    page.get_by_role("link", name=f"Back to {UK}").click()

    operator = papi.signed_in("op@service.example", operator=True)
    host = browsing.page(cookie=session_cookie(operator))
    host.goto("/host")
    listed = host.get_by_role("table", name=re.compile("^Updates shadowing"))
    expect(listed.locator("tbody tr td").nth(2)).to_have_text("shadowing")
    desk = browsing.page(cookie=session_cookie(rev))
    desk.goto(f"/review/uploads/{update}")
    expect(
        desk.locator("section", has=desk.get_by_role("heading", name="Shadow runs beside"))
    ).to_contain_text("1 revised")
    desk.get_by_role("link", name=re.compile("full diff of shadow run")).click()
    desk_diff = desk.url.removeprefix(papi.base_url)
    assert desk_diff.startswith(f"/review/uploads/{update}/shadow-runs/"), desk_diff
    expect(desk.get_by_role("table", name="Records that change").locator("tbody tr")).to_have_count(
        1
    )

    problems = [
        *scan(browsing, session_cookie(owner), f"/portal/{org}/plugins/{UK}", "rollout-axe"),
        *scan(browsing, session_cookie(owner), f"/portal/{org}/uploads/{update}", "shadow-axe"),
        *scan(browsing, session_cookie(operator), "/host", "host-rollouts-axe"),
        *scan(browsing, session_cookie(rev), f"/review/uploads/{update}", "desk-shadow-axe"),
        *scan(browsing, session_cookie(owner), diff_page, "shadow-diff-axe"),
        *scan(browsing, session_cookie(rev), desk_diff, "desk-shadow-diff-axe"),
    ]
    assert problems == []

    page.get_by_label("Stop the rollout: why").fill("the titles need a second look")
    page.get_by_role("button", name="Stop the rollout").click()
    expect(page.get_by_role("status")).to_have_text(
        "Rollout stopped: the current version keeps running."
    )
    expect(section.get_by_role("heading", level=3)).to_have_text(
        "1.1.0 after 1.0.0: stopped, 1 of 2 shadow runs"
    )
    expect(section).to_contain_text("the titles need a second look")
    empty_plugin_tables(papi.engine)
