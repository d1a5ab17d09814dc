"""The device grant's verification address in Chromium: an owner opens the address the tool
printed, sees the agent's name, chooses the organization and whether it may publish, and
approves; the tool's next poll gets the token; the owner revokes the agent on the organization's
page and the token stops working. Denying ends the other login. Both pages pass axe."""

from __future__ import annotations

from datetime import timedelta

from playwright.sync_api import expect

from tests.agents.helpers import oauth_error, poll, start
from tests.api.conftest import Api
from tests.pages.conftest import Browsing, session_cookie
from tests.pages.test_accessibility import scan
from tests.publishing.test_uploads import new_org


def test_an_owner_approves_and_revokes_an_agent_in_the_pages(papi: Api, browsing: Browsing) -> None:
    owner, org = new_org(papi, "owner@bank.example", "Bank")
    tool = papi.client()
    login = start(tool, name="Release bot", machine="machine-pages-1")
    assert oauth_error(poll(tool, login["device_code"])) == "authorization_pending"
    page = browsing.page(cookie=session_cookie(owner))
    page.goto(login["verification_uri_complete"].split(papi.base_url, 1)[1])
    expect(page.get_by_role("heading", name="Release bot")).to_be_visible()
    expect(page.get_by_label("Organization it acts for")).to_have_value(str(org))
    page.get_by_label("It may publish, unpublish and list again").check()
    page.get_by_role("button", name="Approve").click()
    expect(page.get_by_text("Approved: the tool receives its token now.")).to_be_visible()
    papi.clock.advance(timedelta(seconds=login["interval"]))
    issued = poll(tool, login["device_code"])
    assert issued.status_code == 200, issued.text
    token = issued.json()["access_token"]
    uploads = f"/api/v1/portal/organizations/{org}/uploads"
    agent = papi.client()
    assert agent.get(uploads, headers={"authorization": f"Bearer {token}"}).status_code == 200

    page.goto(f"/portal/{org}")
    agents = page.locator("#agents ~ ul")
    expect(agents).to_contain_text("Release bot")
    expect(agents).to_contain_text("may publish")
    agents.get_by_role("button", name="Revoke").click()
    expect(page.get_by_text("Agent revoked: its token stops working at once.")).to_be_visible()
    refused = agent.get(uploads, headers={"authorization": f"Bearer {token}"})
    assert refused.status_code == 401, refused.text

    other = start(tool, name="Stray bot", machine="machine-pages-2")
    page.goto("/portal/device")
    page.get_by_label("The code the tool printed").fill(other["user_code"].lower())
    page.get_by_role("button", name="Look it up").click()
    expect(page.get_by_role("heading", name="Stray bot")).to_be_visible()
    page.get_by_role("button", name="Deny").click()
    expect(page.get_by_text("Denied.")).to_be_visible()
    papi.clock.advance(timedelta(seconds=other["interval"]))
    assert oauth_error(poll(tool, other["device_code"])) == "access_denied"

    third = start(tool, name="Third bot", machine="machine-pages-3")
    cookie = session_cookie(owner)
    problems = [
        *scan(browsing, cookie, "/portal/device", "portal-device"),
        *scan(
            browsing, cookie, f"/portal/device?user_code={third['user_code']}", "portal-device-code"
        ),
    ]
    assert problems == []
