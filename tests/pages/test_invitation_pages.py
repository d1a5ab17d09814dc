"""Invitations in Chromium: a publisher asks to be invited through the form (no sign-in, from
the sign-up page and from the portal's gate that says the domain is not invited), the form
names the field it refuses, an operator invites or declines from the host page, and the
requester's mail arrives in the outbox only when invited. The staff API sees the same."""

from __future__ import annotations

from playwright.sync_api import Page, expect
from sqlalchemy import select
from sqlalchemy.orm import Session

from almanac.platform.accounts.models import InvitationRequest
from almanac.platform.mail import OutboxMessage
from tests.api.conftest import Api
from tests.pages.conftest import Browsing, session_cookie
from tests.pages.test_accessibility import scan
from tests.pages.test_reader_pages import shot


def mails_to(api: Api, address: str) -> list[OutboxMessage]:
    with Session(api.engine) as db:
        return list(db.scalars(select(OutboxMessage).where(OutboxMessage.to_address == address)))


def requests_of(api: Api) -> list[tuple[str, str]]:
    with Session(api.engine) as db:
        rows = db.scalars(select(InvitationRequest).order_by(InvitationRequest.id))
        return [(r.domain, str(r.status)) for r in rows]


def fill_request(page: Page, email: str, organization: str, domain: str, note: str) -> None:
    page.get_by_label("Your e-mail address").fill(email)
    page.get_by_label("Organization", exact=True).fill(organization)
    page.get_by_label("Domain", exact=True).fill(domain)
    page.get_by_label("What your plug-ins will put on days").fill(note)
    page.get_by_role("button", name="Ask to be invited").click()


def test_a_publisher_asks_and_an_operator_invites_from_the_host_page(
    papi: Api, browsing: Browsing
) -> None:
    asker = browsing.page()
    asker.goto("/signup")
    asker.get_by_role("link", name="Ask to be invited to publish").click()
    expect(asker.get_by_role("heading", name="Ask to be invited to publish")).to_be_visible()
    shot(asker, "invitation-form")
    fill_request(asker, "dev@example.org", "Example Bank", "Example.ORG", "UK bank holidays")
    expect(asker.get_by_role("status")).to_contain_text("If an invitation can be given")
    assert requests_of(papi) == [("example.org", "open")]
    assert mails_to(papi, "dev@example.org") == [], "nothing is mailed before an invitation"

    operator = papi.signed_in("op@example.org", operator=True)
    host = browsing.page(cookie=session_cookie(operator))
    host.goto("/host")
    region = host.get_by_role("region", name="Invitation requests")
    row = region.get_by_role("row").filter(has_text="example.org")
    expect(row).to_contain_text("Example Bank")
    expect(row).to_contain_text("dev@example.org")
    expect(row).to_contain_text("UK bank holidays")
    shot(host, "host-invitations")
    assert [r["domain"] for r in operator.get("/api/v1/staff/invitations").json()] == [
        "example.org"
    ]
    row.get_by_role("button", name="Invite example.org").click()
    expect(host.get_by_role("status")).to_contain_text(
        "Invited example.org: dev@example.org was mailed"
    )
    expect(host.get_by_role("region", name="Invitation requests")).to_contain_text(
        "No request is waiting"
    )
    [mail] = mails_to(papi, "dev@example.org")
    assert mail.subject == "You are invited to publish plug-ins on Almanac for example.org"
    assert f"{papi.base_url}/portal" in mail.body
    assert operator.get("/api/v1/staff/invitations").json() == []
    assert requests_of(papi) == [("example.org", "invited")]


def test_the_form_names_the_field_it_refuses_and_an_operator_declines(
    papi: Api, browsing: Browsing
) -> None:
    asker = browsing.page()
    asker.goto("/invitations")
    fill_request(asker, "dev@example", "Example Bank", "example.org", "rates")
    alert = asker.get_by_role("alert")
    expect(alert).to_contain_text("email:")
    expect(asker.get_by_label("Your e-mail address")).to_have_attribute("aria-invalid", "true")
    # What was typed stays, so only the named field needs a change.
    expect(asker.get_by_label("Organization", exact=True)).to_have_value("Example Bank")
    shot(asker, "invitation-form-refused")
    fill_request(asker, "dev@example.org", "Example Bank", "localhost", "rates")
    expect(asker.get_by_role("alert")).to_contain_text("domain:")
    expect(asker.get_by_label("Domain", exact=True)).to_have_attribute("aria-invalid", "true")
    expect(asker.get_by_label("Your e-mail address")).not_to_have_attribute("aria-invalid", "true")
    assert requests_of(papi) == []

    # A form without this browser's token changes nothing.
    posted = papi.client().post(
        "/invitations",
        data={"email": "x@example.org", "organization": "X", "domain": "x.example", "note": ""},
    )
    assert posted.status_code == 403 and requests_of(papi) == []

    for n in range(5):
        asker.goto("/invitations")
        fill_request(asker, "many@example.org", "Many", f"d{n}.example", "rates")
        expect(asker.get_by_role("status")).to_contain_text("If an invitation can be given")
    asker.goto("/invitations")
    fill_request(asker, "many@example.org", "Many", "d5.example", "rates")
    expect(asker.get_by_role("alert")).to_contain_text("email: at most 5 invitation requests")
    assert len(requests_of(papi)) == 5

    operator = papi.signed_in("op@example.org", operator=True)
    host = browsing.page(cookie=session_cookie(operator))
    host.goto("/host")
    row = host.get_by_role("region", name="Invitation requests").get_by_role("row")
    row.filter(has_text="d0.example").get_by_role("button", name="Decline d0.example").click()
    expect(host.get_by_role("status")).to_contain_text("Declined d0.example: nobody was mailed")
    assert ("d0.example", "declined") in requests_of(papi)
    assert mails_to(papi, "many@example.org") == []
    open_now = [r["domain"] for r in operator.get("/api/v1/staff/invitations").json()]
    assert open_now == ["d1.example", "d2.example", "d3.example", "d4.example"]
    # An answered request, from a page opened before, is refused with the API's code.
    stale = browsing.page(cookie=session_cookie(operator))
    stale.goto("/host")
    host.get_by_role("button", name="Invite d1.example").click()
    expect(host.get_by_role("status")).to_contain_text("Invited d1.example")
    stale.get_by_role("button", name="Decline d1.example").click()
    expect(stale.get_by_role("alert")).to_contain_text("INVITATION-NOT-OPEN")

    problems = scan(browsing, None, "/invitations", "invitation-request")
    problems += scan(browsing, session_cookie(operator), "/host", "host-with-invitations")
    assert problems == []


def test_the_portal_gate_links_to_the_request_for_its_domain(papi: Api, browsing: Browsing) -> None:
    owner = papi.signed_in("owner@bank.example")
    made = owner.post("/api/v1/organizations", json={"name": "Bank"})
    org = made.json()["id"]
    named = owner.put(f"/api/v1/portal/organizations/{org}/domain", json={"domain": "bank.example"})
    assert named.status_code == 200, named.text
    page = browsing.page(cookie=session_cookie(owner))
    page.goto(f"/portal/{org}")
    gate = page.get_by_role("region", name="Submitting")
    expect(gate).to_contain_text("DOMAIN-NOT-INVITED")
    gate.get_by_role("link", name="Ask to be invited for bank.example").click()
    expect(page.get_by_label("Domain", exact=True)).to_have_value("bank.example")
    expect(page.get_by_label("Organization", exact=True)).to_have_value("Bank")
    expect(page.get_by_label("Your e-mail address")).to_have_value("owner@bank.example")
    page.get_by_label("What your plug-ins will put on days").fill("bank holidays")
    page.get_by_role("button", name="Ask to be invited").click()
    expect(page.get_by_role("status")).to_contain_text("If an invitation can be given")
    assert requests_of(papi) == [("bank.example", "open")]
