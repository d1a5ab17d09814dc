"""Portal pages one at a time (issue 30): the Developer Agreement as a page, an upload's
listing-only line, the warning of a version without listing.json."""

from __future__ import annotations

import json

from playwright.sync_api import expect

from almanac.platform import hosting
from almanac.platform.contract.pack import check_pack
from almanac.platform.store.engine import write_transaction
from tests.api.test_host import empty_plugin_tables, zip_of
from tests.pages.conftest import session_cookie
from tests.pages.test_accessibility import scan
from tests.pages.test_reader_pages import shot
from tests.publishing.test_submission import files_with
from tests.publishing.test_uploads import Publisher, new_org, publish_at_host, room_checks_done


def test_the_agreement_opens_as_a_page_with_its_version_and_date(papi, browsing) -> None:
    owner = papi.signed_in("owner@bank.example")
    org = owner.post("/api/v1/organizations", json={"name": "Bank"}).json()["id"]
    page = browsing.page(cookie=session_cookie(owner))
    page.goto(f"/portal/{org}")
    agreement = page.get_by_role("region", name="Developer Agreement")
    agreement.get_by_role("link", name="Read version 1").click()
    expect(page.get_by_role("heading", level=1)).to_have_text("Developer Agreement, version 1")
    facts = page.locator("dl.facts")
    expect(facts.locator("dd").nth(1)).to_have_text("Thursday 1 October 2026")
    expect(facts).to_contain_text("The first version.")
    # The text is drawn as a document: its own headings and paragraphs, not escaped JSON.
    text = page.locator(".agreement-text")
    expect(
        text.get_by_role("heading", name="Almanac Developer Agreement, version 1")
    ).to_be_visible()
    expect(text.get_by_role("heading", name="1. What the publisher offers")).to_be_visible()
    expect(text.locator("p").first).to_contain_text("In effect from 1 October 2026.")
    assert '"effective_on"' not in page.content() and "\\n" not in text.inner_text()
    shot(page, "portal-agreement")
    # Anyone may read it, as the API's versions are open to all; an unknown version is a 404 page.
    anonymous = browsing.page()
    assert anonymous.goto("/portal/agreement/1").status == 200
    expect(anonymous.get_by_role("heading", level=1)).to_have_text("Developer Agreement, version 1")
    assert anonymous.goto("/portal/agreement/7").status == 404
    expect(anonymous.get_by_role("alert")).to_contain_text("no Developer Agreement version 7")
    assert scan(browsing, None, "/portal/agreement/1", "agreement") == []


def test_the_upload_page_says_a_code_approval_stands_only_when_the_code_was_approved(
    papi, browsing
) -> None:
    empty_plugin_tables(papi.engine)
    owner, org = new_org(papi, "owner@bank.example", "Bank")
    pub = Publisher(papi, owner, org)
    page = browsing.page(cookie=session_cookie(owner))

    def listing_change(files: dict[str, bytes], tagline: str) -> dict[str, bytes]:
        listing = json.loads(files["listing.json"])
        listing["tagline"]["en"] = tagline
        return {**files, "listing.json": json.dumps(listing).encode()}

    def digest_line(upload_id: int) -> str:
        page.goto(f"/portal/{org}/uploads/{upload_id}")
        return page.locator("dl.facts dd").nth(1).inner_text()

    # The same code as an earlier upload nobody approved: listing-only, no approval to stand.
    first = pub.send(zip_of(files_with())).json()
    second = pub.send(zip_of(listing_change(files_with(), "By nation"))).json()
    assert second["listing_only"] and not second["code_approved"]
    line = digest_line(second["id"])
    assert "listing-only" in line and "approval stands" not in line
    assert f"the same code as upload {first['id']}, not approved yet" in line
    assert "listing-only" not in digest_line(first["id"])

    # Registered at the host but still Pending there: not an approval either.
    pending = files_with(version="1.1.0")
    with write_transaction(papi.engine) as conn:
        hosting.register_code(
            conn, check_pack(zip_of(pending)), origin="upload", by="host@example.org",
            now=papi.clock(), publisher_organization_id=org,
        )  # fmt: skip
    third = pub.send(zip_of(listing_change(pending, "Pending code"))).json()
    assert third["code_published"] and not third["code_approved"]
    assert "approval stands" not in digest_line(third["id"])

    # Approved at the host by its digest: now the approval stands, for the API and the page.
    publish_at_host(pub, files_with(version="1.2.0"))
    room_checks_done(pub)  # three versions being checked is the most at once
    fourth = pub.send(zip_of(listing_change(files_with(version="1.2.0"), "Approved"))).json()
    assert fourth["listing_only"] and fourth["code_approved"]
    assert "listing-only: its code approval stands" in digest_line(fourth["id"])
    empty_plugin_tables(papi.engine)


def test_a_version_without_listing_json_is_warned_it_can_never_be_listed(
    papi, browsing, tmp_path
) -> None:
    empty_plugin_tables(papi.engine)
    owner, org = new_org(papi, "owner@bank.example", "Bank")
    files = files_with()
    del files["listing.json"], files["listing/icon.png"]
    pack = tmp_path / "no-listing.zip"
    pack.write_bytes(zip_of(files))
    page = browsing.page(cookie=session_cookie(owner))
    page.goto(f"/portal/{org}")
    page.get_by_label("Pack (.zip made by almanac-plugin.mjs pack)").set_input_files(str(pack))
    page.get_by_role("button", name="Upload").click()
    expect(page.get_by_text("Uploaded: its checks run now.")).to_be_visible()
    listing = page.locator("ul.checks > li").filter(has=page.locator("strong", has_text="listing"))
    expect(listing).to_contain_text("passed")  # a warning: the version may still be published
    expect(listing).to_contain_text("PLG-LISTING-MISSING")
    expect(listing).to_contain_text(
        "this version has no listing.json: it can be published but never listed in the store; "
        "add one to list"
    )
    shot(page, "portal-upload-no-listing")
    upload_id = int(page.url.split("/uploads/")[1].split("?")[0])
    answer = owner.get(f"/api/v1/portal/organizations/{org}/uploads/{upload_id}").json()
    [warning] = [w for w in answer["warnings"] if w["code"] == "PLG-LISTING-MISSING"]
    assert warning["severity"] == "warning" and warning["docs"].endswith("/PLG-LISTING-MISSING")
    assert owner.get(warning["docs"].replace(papi.base_url, "")).status_code == 200
    empty_plugin_tables(papi.engine)
