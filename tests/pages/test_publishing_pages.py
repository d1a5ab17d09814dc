"""The publishing pages clicked through in Chromium as each role would: a publisher makes an
organization, names its domain, publishes the TXT record the page shows on a real DNS server on
loopback and presses Check now, accepts the agreement, uploads a pack, makes the attestations
and submits; a reviewer approves on the desk; the
publisher publishes; a reader finds it in the store and installs it; the publisher unpublishes
and retires it with the typed id. Then every one of these pages passes axe at both widths.
The invitation is made through its domain function (its staff route is tested in
test_portal_api.py) and the locked-room checks are marked passed (`room_checks_done`), as in the
API tests."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest
from playwright.sync_api import Browser, expect
from sqlalchemy import Engine
from sqlalchemy.orm import Session

from almanac.platform import accounts
from almanac.platform.accounts.models import InvitationRequest, InvitationStatus
from almanac.platform.contract.pack import check_pack
from almanac.platform.lifecycle import RunTrigger
from almanac.platform.publishing.identity import invitations
from almanac.platform.store.plugins import plugin_status
from almanac.platform.store.write import RunFacts, write_run
from tests.api.conftest import Api, live_api
from tests.api.test_host import UK, empty_plugin_tables, zip_of
from tests.pages.conftest import PHONE, Browsing, session_cookie
from tests.pages.test_accessibility import scan
from tests.pages.test_reader_pages import shot
from tests.publishing.servers import ProofWorld, proof_world
from tests.publishing.test_review_and_store import resubmitted, reviewer, update_in_review
from tests.publishing.test_submission import files_with, may_submit
from tests.publishing.test_uploads import Publisher, new_org, room_checks_done

DOMAIN = "example.org"  # the UK example listing's publisher.domain


@pytest.fixture
def world() -> Iterator[ProofWorld]:
    with proof_world() as running:
        yield running


@pytest.fixture
def proving(
    browser: Browser, live_server, pg_engine: Engine, passwords, world
) -> Iterator[Browsing]:
    """Browsing the live app whose domain prover asks the loopback DNS server."""
    with live_api(live_server, pg_engine, passwords, domain_prover=world.prover()) as api:
        made = Browsing(browser, api)
        yield made
        made.close()


def first_run(api: Api) -> None:
    """The published version's run on the fixture's day, its batch the fixture's records."""
    records = [json.loads(line) for line in files_with()["fixtures/records.jsonl"].splitlines()]
    with api.engine.connect() as conn:
        status = plugin_status(conn, UK)
    assert status.approved_version_id is not None and status.approved_digest is not None
    day = datetime(2022, 11, 4, 12, 0, tzinfo=UTC)
    write_run(
        api.engine,
        plugin_id=UK,
        version_id=status.approved_version_id,
        digest=status.approved_digest,
        manifest=check_pack(zip_of(files_with(), top=UK)).manifest,
        run=RunFacts(today=day.date(), trigger=RunTrigger.SCHEDULE, started_at=day, now=day),
        batch=records,
    )


def invite(api: Api) -> None:
    """Staff's invitation for the domain (its route is tested in test_portal_api.py)."""
    now = api.clock()
    with Session(api.engine) as db:
        staff = accounts.find_account(db, "owner@bank.example")
        assert staff is not None
        request = InvitationRequest(
            email="asker@example.org",
            email_key="asker@example.org",
            organization="Bank",
            domain=DOMAIN,
            note="holidays",
            status=InvitationStatus.OPEN,
            created_at=now,
        )
        db.add(request)
        db.flush()
        invitations.invite(db, request.id, staff, now, api.base_url)
        db.commit()


def test_upload_review_publish_install_and_retire_in_the_pages(
    proving: Browsing, world: ProofWorld, tmp_path: Path
) -> None:
    browsing, papi = proving, proving.api
    empty_plugin_tables(papi.engine)
    owner = papi.signed_in("owner@bank.example")
    publisher = browsing.page(cookie=session_cookie(owner))
    publisher.goto("/portal")
    publisher.get_by_label("Name").fill("Bank")
    publisher.get_by_role("button", name="Make it").click()
    expect(publisher.get_by_text("Organization made.")).to_be_visible()
    org = int(publisher.url.split("/portal/", 1)[1].split("?")[0])
    pub = Publisher(papi, owner, org)
    publisher.get_by_label("Name the organization's domain").fill(DOMAIN)
    publisher.get_by_role("button", name="Name it").click()
    expect(publisher.get_by_text("Domain named: publish the TXT record")).to_be_visible()
    txt_name, txt_value = (
        publisher.locator("#domain ~ ol code.hash").nth(i).inner_text() for i in (0, 1)
    )
    assert txt_name == f"_almanac-verify.{DOMAIN}"
    world.dns.publish(DOMAIN, txt_value)
    publisher.get_by_role("button", name="Check now").click()
    expect(publisher.get_by_text("Checked: see what each way found below.")).to_be_visible()
    expect(publisher.locator("#domain ~ p .badge.ok")).to_have_text("verified")
    invite(papi)
    publisher.get_by_role("button", name="Accept version 1").click()
    expect(publisher.get_by_text("Agreement accepted.")).to_be_visible()
    pack = tmp_path / f"{UK}-1.0.0.zip"
    pack.write_bytes(zip_of(files_with(), top=UK))

    publisher = browsing.page(cookie=session_cookie(owner))
    publisher.goto("/portal")
    publisher.get_by_role("link", name="Bank").click()
    expect(publisher.get_by_role("heading", name="Bank", level=1)).to_be_visible()
    expect(
        publisher.get_by_text("The organization may submit versions for review.")
    ).to_be_visible()
    publisher.get_by_label("Pack (.zip made by almanac-plugin.mjs pack)").set_input_files(str(pack))
    publisher.get_by_role("button", name="Upload").click()
    expect(publisher.get_by_role("heading", name=f"{UK} 1.0.0")).to_be_visible()
    expect(publisher.get_by_text("Uploaded: its checks run now.")).to_be_visible()
    assert publisher.locator('meta[http-equiv="refresh"]').count() == 1
    upload_url = publisher.url
    room_checks_done(pub)
    publisher.reload()
    assert publisher.locator('meta[http-equiv="refresh"]').count() == 0
    for box in publisher.get_by_role("checkbox").all()[:5]:
        box.check()
    publisher.get_by_role("button", name="Make the ticked attestations").click()
    expect(publisher.get_by_text("Attestations made.")).to_be_visible()
    shot(publisher, "portal-upload-ready")
    publisher.get_by_role("button", name="Submit for review").click()
    expect(publisher.get_by_text("Submitted for review.")).to_be_visible()
    expect(publisher.locator(".facts").get_by_text("in review")).to_be_visible()

    rev = reviewer(papi, "rev@service.example")
    desk = browsing.page(cookie=session_cookie(rev))
    desk.goto("/review")
    desk.get_by_role("link", name=UK).click()
    expect(desk.get_by_role("heading", name=f"{UK} 1.0.0")).to_be_visible()
    expect(desk.locator("summary code", has_text="fetch.mjs")).to_be_visible()
    desk.get_by_label("Approve").check()
    desk.get_by_label("Reason").fill("Matches the holder's own list")
    desk.get_by_role("button", name="Record the decision").click()
    expect(desk.get_by_text("Decision recorded; the publisher was told.")).to_be_visible()
    expect(desk.get_by_text("Matches the holder's own list")).to_be_visible()

    publisher.goto(upload_url)
    publisher.get_by_role("button", name="Publish").click()
    expect(publisher.get_by_text("Published: it runs within minutes")).to_be_visible()

    reader = papi.signed_in("reader@example.net")
    store = browsing.page(cookie=session_cookie(reader), size=PHONE)
    store.goto("/store")
    store.get_by_label("Find plug-ins").fill("bank holidays")
    store.get_by_role("button", name="Search").click()
    store.locator("ul.cards").get_by_role("link").first.click()
    expect(store.get_by_role("heading", name="Example days")).to_be_visible()
    store.get_by_role("button", name="Install").click()
    expect(store.get_by_text("Installed: it is on your calendar.")).to_be_visible()
    shot(store, "store-page-installed")
    prefs = reader.get("/api/v1/reader/preferences").json()
    assert prefs["shown"] == [UK]
    # Its first run (the fixture's, stored as a run on the fixture's day writes it; the real
    # run is in test_publish_end_to_end.py) puts its rows on the right days of the calendar.
    first_run(papi)
    store.goto("/calendar?month=2022-12&today=2022-12-30&day=2022-12-26")
    panel = store.locator("#day-panel")
    expect(panel.get_by_role("heading", name="Monday 26 December 2022")).to_be_visible()
    expect(panel.locator("li.row.event").first).to_contain_text("Boxing Day")
    days = reader.get(
        "/api/v1/reader/days",
        params={"from": "2022-12-26", "to": "2022-12-26", "today": "2022-12-30"},
    ).json()
    api_labels = [
        r["label"] for d in days["plugins"][0]["days"] for s in d["sections"] for r in s["rows"]
    ]
    drawn = [t.strip() for t in panel.locator("li.row .name").all_inner_texts()]
    assert drawn == api_labels and api_labels

    publisher.goto(f"/portal/{org}/plugins/{UK}")
    publisher.get_by_role("button", name="Unpublish").click()
    expect(publisher.get_by_text("Unpublished: nobody new can install it")).to_be_visible()
    store.goto(f"/store/{UK}")
    expect(
        store.get_by_text("it stays on your calendar, but nobody new can install it")
    ).to_be_visible()
    publisher.get_by_label("Retire").fill("not-the-id")
    publisher.get_by_role("button", name="Retire").click()
    expect(publisher.get_by_text("PLG-RETIRE-CONFIRM")).to_be_visible()
    publisher.go_back()
    publisher.get_by_label("Retire").fill(UK)
    publisher.get_by_role("button", name="Retire").click()
    expect(publisher.get_by_text("Retired: its runs stopped for good")).to_be_visible()
    expect(publisher.get_by_text("retire by owner@bank.example")).to_be_visible()

    pages = [
        (session_cookie(reader), "/store", "store-list"),
        (session_cookie(reader), f"/store/{UK}", "store-page"),
        (session_cookie(owner), "/portal", "portal-home"),
        (session_cookie(owner), f"/portal/{org}", "portal-organization"),
        (session_cookie(owner), upload_url.split(papi.base_url, 1)[1], "portal-upload"),
        (session_cookie(owner), f"/portal/{org}/plugins/{UK}", "portal-plugin"),
        (session_cookie(rev), "/review", "review-queue"),
        (
            session_cookie(rev),
            "/review/uploads/" + upload_url.rsplit("/", 1)[1].split("?")[0],
            "review-version",
        ),
    ]
    problems = [p for cookie, path, name in pages for p in scan(browsing, cookie, path, name)]
    assert problems == []
    empty_plugin_tables(papi.engine)


def test_the_desk_shows_resubmissions_record_diffs_and_review_information_as_tables(
    browsing: Browsing,
) -> None:
    """A reviewer reaches the desk from the header; a resubmission shows the earlier decision
    and the diff against the upload sent back; an update's record diff and review information
    are tables and labelled fields, the removed series named, never JSON."""
    papi = browsing.api
    empty_plugin_tables(papi.engine)
    owner, org = new_org(papi, "owner@bank.example", "Bank")
    pub = Publisher(papi, owner, org)
    may_submit(pub)
    rev = reviewer(papi, "rev@service.example")
    first, again = resubmitted(pub, rev)
    update = update_in_review(pub, rev)

    desk = browsing.page(cookie=session_cookie(rev))
    desk.goto("/calendar")
    nav = desk.get_by_role("navigation", name="Main")
    nav.get_by_role("link", name="Review").click()
    expect(desk.get_by_role("heading", name="Review queue")).to_be_visible()
    expect(nav.get_by_role("link", name="Review")).to_have_attribute("aria-current", "page")
    publisher = browsing.page(cookie=session_cookie(owner))
    publisher.goto("/portal")
    expect(publisher.get_by_role("navigation", name="Main").get_by_role("link")).to_have_text(
        ["Calendar", "Store", "Portal"]
    )

    desk.goto(f"/review/uploads/{again}")
    decided = desk.locator("section", has=desk.get_by_role("heading", name="Decisions"))
    expect(decided.locator("tbody tr")).to_have_count(1)
    expect(decided.locator("tbody tr th")).to_have_text(f"upload {first}, 1.0.0")
    expect(decided.locator("tbody tr td")).to_have_text(
        [
            "Request changes",
            "rev@service.example",
            re.compile(r"\d{4}-\d\d-\d\d \d\d:\d\d UTC"),
            "example day 2 is wrong",
            "GOV.UK lists 27 December.\nCheck the substitute days.",
        ]
    )
    since = desk.locator(
        "section",
        has=desk.get_by_role("heading", name=f"Changes since upload {first} was sent back"),
    )
    expect(since.locator("summary code")).to_have_text(["fetch.mjs", "review.json"])
    expect(since.locator("pre.diff").first).to_contain_text("+// substitute days fixed")
    expect(since).to_contain_text("Unchanged: ")
    shot(desk, "review-resubmission")

    desk.goto(f"/review/uploads/{update}")
    diff = desk.locator("section", has=desk.get_by_role("heading", name="Record diff"))
    expect(diff.get_by_role("table", name="Records that change").locator("thead th")).to_have_text(
        ["Series", "Date", "Change", "Before", "After"]
    )
    boxing = diff.locator("table.record-diff tbody tr", has_text="Boxing Day (observed)")
    expect(boxing.locator("td, th")).to_have_text(
        [
            "england-and-wales",
            "2022-12-26",
            "revised",
            "scheduled: Boxing Day",
            "scheduled: Boxing Day (observed)",
        ]
    )
    moved = diff.locator("table.record-diff tbody tr", has_text="moved to")
    expect(moved.locator("td, th")).to_have_text(
        ["scotland", "2022-11-30", "moved", "scheduled: St Andrew’s Day", "moved to 2022-12-01"]
    )
    expect(diff.get_by_role("listitem")).to_have_text(
        "Series northern-ireland removed: 72 records kept"
    )
    counts = diff.get_by_role("table", name="Records by series").locator("tbody tr")
    expect(counts.first.locator("th, td")).to_have_text(["england-and-wales", "1", "1", "0", "1"])
    info = desk.locator("section", has=desk.get_by_role("heading", name="Review information"))
    expect(info.locator("dl.facts dt").first).to_have_text("Release notes")
    expect(info.locator("dl.facts dd").first).to_have_text("en: Northern Ireland leaves.")
    sources = info.get_by_role("table", name="Why each source may be published")
    expect(sources.locator("thead th")).to_have_text(
        ["Source", "Holder", "Terms", "Basis", "Evidence"]
    )
    expect(sources.locator("tbody td").nth(2)).to_have_text("open-licence")
    examples = info.get_by_role("table", name="Example days and what the publisher expects on them")
    expect(examples.locator("tbody tr").nth(3).locator("th, td")).to_have_text(
        ["2022-12-26", "england-and-wales", "state: scheduled; title: Boxing Day", ""]
    )
    for section in (diff, info):
        expect(section.locator("pre")).to_have_count(0)
        assert '{"' not in section.inner_text() and '\\"' not in section.inner_text()
    shot(desk, "review-update-tables")

    problems = [
        p
        for path, name in (
            (f"/review/uploads/{again}", "review-resubmission-axe"),
            (f"/review/uploads/{update}", "review-update-axe"),
        )
        for p in scan(browsing, session_cookie(rev), path, name)
    ]
    assert problems == []
    empty_plugin_tables(papi.engine)
