"""The reader's webhooks page in Chromium (issue 38): register an endpoint (the secret shown
once), see a refusal naming the field, pause, resume, rotate, the delivery log with a replay,
delete; an organization's admin registers and pauses one of its endpoints, which its plain
members do not see; axe at both widths. Endpoint addresses resolve through a table (no DNS
leaves the machine)."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import date

import pytest
from playwright.sync_api import expect
from sqlalchemy import Engine
from sqlalchemy.orm import Session

from almanac.platform import audience
from almanac.platform.store.engine import write_transaction
from almanac.platform.webhooks.outbox import fan_out
from almanac.sandbox.webhooks import EndpointAddressCheck
from tests.api.conftest import Api, live_api
from tests.audience.helpers import T0, empty_audience_tables
from tests.pages.conftest import Browsing, session_cookie
from tests.pages.test_accessibility import scan
from tests.sandbox.tls_server import TableResolver
from tests.webhooks.conftest import HOSTS, empty_webhook_tables
from tests.webhooks.test_endpoints import example_organization, stored_plugin, usd


@pytest.fixture
def papi(live_server, pg_engine: Engine, passwords) -> Iterator[Api]:
    addresses = EndpointAddressCheck(TableResolver(HOSTS))
    with live_api(live_server, pg_engine, passwords, endpoint_addresses=addresses) as api:
        yield api
    empty_webhook_tables(pg_engine)
    empty_audience_tables(pg_engine)


def test_a_reader_manages_endpoints_and_replays_a_delivery_in_the_page(
    papi: Api, browsing: Browsing
) -> None:
    plugin = stored_plugin(papi)
    reader = papi.signed_in("reader@example.net")
    page = browsing.page(cookie=session_cookie(reader))
    page.goto("/calendar")
    page.get_by_role("link", name="Webhooks").click()
    expect(page.get_by_text("You have no webhook endpoints yet.")).to_be_visible()
    page.get_by_label("Address (https)").fill("https://loop.example.org/h")
    page.get_by_label(plugin.id).check()
    page.get_by_role("button", name="Register").click()
    expect(page.get_by_role("alert")).to_contain_text("a refused address: loopback")
    page.get_by_label("Address (https)").fill("https://hooks.example.org/almanac")
    page.get_by_label("Description").fill("rates to my ledger")
    page.get_by_role("button", name="Register").click()
    expect(page.get_by_text("It is shown only now")).to_be_visible()
    secret = page.get_by_label("Signing secret").input_value()
    assert secret.startswith("whsec_")
    listed = reader.get("/api/v1/reader/webhooks").json()
    assert [(e["url"], e["description"], e["plugins"]) for e in listed] == [
        ("https://hooks.example.org/almanac", "rates to my ledger", [plugin.id])
    ]
    page.goto("/account/webhooks")
    assert secret not in page.content()
    page.get_by_role("button", name="Pause https://hooks.example.org/almanac").click()
    assert reader.get("/api/v1/reader/webhooks").json()[0]["paused"] is True
    page.get_by_role("button", name="Resume https://hooks.example.org/almanac").click()
    assert reader.get("/api/v1/reader/webhooks").json()[0]["paused"] is False
    page.get_by_role("button", name="New secret for https://hooks.example.org/almanac").click()
    rotated = page.get_by_label("Signing secret").input_value()
    assert rotated != secret and rotated.startswith("whsec_")
    plugin.write([usd("2026-11-01", 58.1)], date(2026, 11, 2))
    with write_transaction(papi.engine) as conn:
        fan_out(conn, T0)
    page.get_by_role("link", name="Delivery log of https://hooks.example.org/almanac").click()
    expect(page.get_by_role("cell", name="records.changed")).to_be_visible()
    (delivery,) = reader.get(f"/api/v1/reader/webhooks/{listed[0]['id']}/deliveries").json()
    page.get_by_role("button", name=f"Replay {delivery['message_id']}").click()
    expect(page.get_by_role("status")).to_contain_text("sent again")
    path = page.url.split(papi.base_url, 1)[1].split("?")[0]
    cookie = session_cookie(reader)
    assert scan(browsing, cookie, "/account/webhooks", "webhooks") == []
    assert scan(browsing, cookie, path, "webhook-log") == []
    page.goto("/account/webhooks")
    page.get_by_role("button", name="Delete https://hooks.example.org/almanac").click()
    expect(page.get_by_text("You have no webhook endpoints yet.")).to_be_visible()
    assert reader.get("/api/v1/reader/webhooks").json() == []


def test_an_admin_registers_and_pauses_an_organization_endpoint_a_member_sees_none(
    papi: Api, browsing: Browsing
) -> None:
    people, org, listed = example_organization(papi)
    own = stored_plugin(papi, "private")
    with Session(papi.engine) as db:
        audience.set_reader_list(db, own.id, ["adm@example.org"], [], by="host", now=T0)
        db.commit()
    cookie = session_cookie(people["adm"])
    page = browsing.page(cookie=cookie)
    page.goto("/account/webhooks")
    expect(page.get_by_text("Example has no webhook endpoints yet.")).to_be_visible()
    page.get_by_label("Endpoint of").select_option(label="Example")
    offered = page.get_by_role("group", name="Plug-ins Example may see (an endpoint of Example)")
    expect(offered.get_by_label(listed.id)).to_be_visible()
    expect(offered.get_by_label(own.id)).to_have_count(0)
    expect(page.get_by_role("group", name="Plug-ins you may read")).to_be_hidden()
    page.get_by_label("Address (https)").fill("https://hooks.example.org/almanac")
    offered.get_by_label(listed.id).check()
    page.get_by_role("button", name="Register").click()
    expect(page.get_by_text("It is shown only now")).to_be_visible()
    at = {"organization": org}
    (made,) = people["ada"].get("/api/v1/reader/webhooks", params=at).json()
    assert (made["organization_id"], made["plugins"]) == (org, [listed.id])
    assert people["adm"].get("/api/v1/reader/webhooks").json() == [], "not the admin's own"
    page.goto("/account/webhooks")
    section = page.locator("ul.endpoints")
    expect(page.get_by_role("heading", name="Endpoints of Example")).to_be_visible()
    expect(section).to_contain_text("https://hooks.example.org/almanac")
    expect(page.get_by_text("You have no webhook endpoints yet.")).to_be_visible()
    page.get_by_role("button", name="Pause https://hooks.example.org/almanac").click()
    assert people["ada"].get("/api/v1/reader/webhooks", params=at).json()[0]["paused"] is True
    assert scan(browsing, cookie, "/account/webhooks", "webhooks-organization") == []
    member = browsing.page(cookie=session_cookie(people["mem"]))
    member.goto("/account/webhooks")
    expect(member.get_by_role("heading", name="Register an endpoint")).to_be_visible()
    expect(member.get_by_label("Endpoint of")).to_have_count(0)
    expect(member.get_by_role("heading", name="Endpoints of Example")).to_have_count(0)
