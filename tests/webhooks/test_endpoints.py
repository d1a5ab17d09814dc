"""Issue 38 over HTTP on both stores: registering endpoints (public https addresses only, the
reader's own plug-ins, at most 20), the secret shown once and rotated, pause, resume, delete;
and the outbox: a run with revisions leaves a `records.changed` event carrying exactly what
the write stored (in parts past `MAX_CHANGES`), fanned out by the delivery sensor to the
endpoints subscribed then; a state move leaves a `plugin.status` event."""

from __future__ import annotations

from datetime import date, timedelta
from typing import Any

import pytest
from sqlalchemy import select
from sqlalchemy.orm import Session

from almanac.platform import audience
from almanac.platform.store.engine import write_transaction
from almanac.platform.webhooks.deliveries import due_deliveries, may_receive
from almanac.platform.webhooks.outbox import MAX_CHANGES, fan_out
from almanac.platform.webhooks.tables import deliveries, events
from tests.api.conftest import assert_problem
from tests.api.test_reader import MANIFEST
from tests.audience.helpers import T0, StoredPlugin, fresh_id

URL = "https://hooks.example.org/almanac"


def stored_plugin(api, audience: str = "public") -> StoredPlugin:
    manifest = {**MANIFEST, "id": fresh_id("w"), "audience": audience}
    return StoredPlugin(api.engine, manifest, T0).register().approve()


def register(client, plugins: list[str], url: str = URL, **extra: Any):
    return client.post("/api/v1/reader/webhooks", json={"url": url, "plugins": plugins, **extra})


def usd(day: str, buy: float) -> dict[str, Any]:
    return {"kind": "value", "series": "usd", "date": day, "fields": {"buy": buy}}


def tpm(day: str, ident: str, state: str = "scheduled") -> dict[str, Any]:
    return {"kind": "event", "series": "tpm", "date": day, "id": ident, "state": state}


def test_an_endpoint_is_registered_listed_rotated_paused_and_deleted(wapi) -> None:
    plugin = stored_plugin(wapi)
    reader = wapi.signed_in("reader@example.org")
    made = register(reader, [plugin.id], description="rates to my ledger")
    assert made.status_code == 201, made.text
    secret = made.json()["secret"]
    assert secret.startswith("whsec_") and len(secret) > 30
    endpoint = made.json()["endpoint"]
    assert endpoint["plugins"] == [plugin.id] and endpoint["url"] == URL
    listed = reader.get("/api/v1/reader/webhooks").json()
    assert [e["id"] for e in listed] == [endpoint["id"]]
    assert "secret" not in listed[0]
    rotated = reader.post(f"/api/v1/reader/webhooks/{endpoint['id']}/rotate-secret").json()
    assert rotated["secret"] != secret and rotated["endpoint"]["previous_secret_until"]
    paused = reader.post(f"/api/v1/reader/webhooks/{endpoint['id']}/pause").json()
    assert paused["paused"] is True
    assert reader.post(f"/api/v1/reader/webhooks/{endpoint['id']}/resume").json()["paused"] is False
    other = wapi.signed_in("other@example.org")
    assert_problem(other.get(f"/api/v1/reader/webhooks/{endpoint['id']}"), 404, "NOT-FOUND")
    assert reader.delete(f"/api/v1/reader/webhooks/{endpoint['id']}").status_code == 204
    assert reader.get("/api/v1/reader/webhooks").json() == []


@pytest.mark.parametrize(
    ("url", "words"),
    [
        ("https://private.example.org/h", "10.1.2.3, a refused address: private"),
        ("https://loop.example.org/h", "127.0.0.1, a refused address: loopback"),
        ("https://link.example.org/h", "169.254.169.254, a refused address: link-local"),
        ("https://mixed.example.org/h", "192.168.0.7, a refused address: private"),
        ("https://93.184.216.34/h", "not an IP address"),
        ("http://hooks.example.org/h", "only https"),
        ("https://user:pw@hooks.example.org/h", "user name and password"),
        ("https://nowhere.example.org/h", "could not resolve nowhere.example.org"),
    ],
)
def test_endpoints_on_addresses_that_are_not_public_are_refused(wapi, url, words) -> None:
    plugin = stored_plugin(wapi)
    reader = wapi.signed_in("reader@example.org")
    body = assert_problem(register(reader, [plugin.id], url), 422, "REQUEST-INVALID")
    assert body["detail"].startswith("url: ") and words in body["detail"], body["detail"]


def test_only_readable_plugins_and_at_most_20_endpoints(wapi) -> None:
    private = stored_plugin(wapi, "private")
    public = stored_plugin(wapi)
    reader = wapi.signed_in("reader@example.org")
    body = assert_problem(register(reader, [private.id]), 422, "REQUEST-INVALID")
    assert body["detail"] == f"plugins: no plug-in {private.id} you may read"
    for _ in range(20):
        assert register(reader, [public.id]).status_code == 201
    body = assert_problem(register(reader, [public.id]), 422, "REQUEST-INVALID")
    assert "20 endpoints" in body["detail"]


def _event_data(engine, plugin_id: str, kind: str) -> list[dict[str, Any]]:
    with engine.connect() as conn:
        rows = conn.execute(
            select(events.c.payload)
            .where(events.c.plugin_id == plugin_id, events.c.type == kind)
            .order_by(events.c.id)
        )
        return [r.payload for r in rows]


def test_a_run_with_revisions_leaves_exactly_what_the_store_wrote(wapi) -> None:
    plugin = stored_plugin(wapi)
    reader = wapi.signed_in("reader@example.org")
    for _ in range(2):
        assert register(reader, [plugin.id]).status_code == 201
    day = date(2026, 11, 2)
    plugin.write([usd("2026-11-01", 58.1), tpm("2026-11-20", "m1")], day)
    plugin.write([usd("2026-11-01", 58.4), usd("2026-11-02", 58.2), tpm("2026-11-27", "m1")], day)
    plugin.write([usd("2026-11-01", 58.4), usd("2026-11-02", 58.2), tpm("2026-11-27", "m1")], day)
    payloads = _event_data(wapi.engine, plugin.id, "records.changed")
    assert len(payloads) == 2, "the unchanged third run leaves no event"
    first, second = (p["data"] for p in payloads)
    assert first["counts"] == {"new": 2, "revised": 0, "moved": 0, "withdrawn": 0, "returned": 0}
    assert second["counts"] == {"new": 2, "revised": 1, "moved": 1, "withdrawn": 0, "returned": 0}
    changes = second["changes"]
    stored = reader.get(
        f"/api/v1/reader/plugins/{plugin.id}/records",
        params={"from": "2026-11-01", "to": "2026-11-30"},
    ).json()["records"]
    by_key = {(r["record"]["series"], r["record"]["date"]): r for r in stored}
    revised = changes["revised"][0]
    assert revised["new"] == {
        k: by_key[("usd", "2026-11-01")][k] for k in ("record", "digest", "since")
    }
    assert revised["old"]["record"]["fields"] == {"buy": 58.1}
    assert revised["old"] == {
        k: by_key[("usd", "2026-11-01")]["revisions"][0][k] for k in revised["old"]
    }
    assert [c["record"] for c in changes["new"]] == [
        by_key[("usd", "2026-11-02")]["record"],
        by_key[("tpm", "2026-11-27")]["record"],
    ]
    assert changes["moved"][0]["record"]["movedTo"] == "2026-11-27"
    assert changes["moved"][0]["record"] == by_key[("tpm", "2026-11-20")]["record"]
    assert second["run"] > first["run"] and second["version"] == "1.0.0"
    assert (second["part"], second["parts"]) == (1, 1)


def _deliveries(engine) -> list[tuple[int, int]]:
    with engine.connect() as conn:
        rows = conn.execute(select(deliveries.c.event_id, deliveries.c.endpoint_id))
        return sorted((row.event_id, row.endpoint_id) for row in rows)


def test_the_run_writes_events_and_the_sensor_fans_them_out_to_the_subscribers_then(
    wapi,
) -> None:
    plugin = stored_plugin(wapi)
    reader = wapi.signed_in("reader@example.org")
    early = register(reader, [plugin.id]).json()["endpoint"]["id"]
    paused = register(reader, [plugin.id]).json()["endpoint"]["id"]
    plugin.write([usd("2026-11-01", 58.1)], date(2026, 11, 2))
    assert _deliveries(wapi.engine) == [], "the run's write makes no delivery"
    (event,) = [p for p in _event_ids(wapi.engine, plugin.id)]
    late = register(reader, [plugin.id]).json()["endpoint"]["id"]
    assert reader.post(f"/api/v1/reader/webhooks/{paused}/pause").status_code == 200
    with write_transaction(wapi.engine) as conn:
        assert fan_out(conn, T0) == 1
    with write_transaction(wapi.engine) as conn:
        assert fan_out(conn, T0) == 0, "an event is fanned out once"
    assert _deliveries(wapi.engine) == [(event, early), (event, late)]


def _event_ids(engine, plugin_id: str) -> list[int]:
    with engine.connect() as conn:
        return list(
            conn.execute(select(events.c.id).where(events.c.plugin_id == plugin_id)).scalars()
        )


def test_a_run_changing_many_records_sends_them_in_parts(wapi) -> None:
    plugin = stored_plugin(wapi)
    reader = wapi.signed_in("reader@example.org")
    assert register(reader, [plugin.id]).status_code == 201
    many = MAX_CHANGES * 2 + 5
    start = date(2026, 1, 1)
    plugin.write(
        [usd((start + timedelta(days=i)).isoformat(), 1.0) for i in range(many)],
        date(2026, 11, 2),
    )
    payloads = [p["data"] for p in _event_data(wapi.engine, plugin.id, "records.changed")]
    assert [(p["part"], p["parts"]) for p in payloads] == [(1, 3), (2, 3), (3, 3)]
    assert [len(p["changes"]["new"]) for p in payloads] == [MAX_CHANGES, MAX_CHANGES, 5]
    assert all(p["counts"]["new"] == many and p["run"] == payloads[0]["run"] for p in payloads)
    dates = [c["record"]["date"] for p in payloads for c in p["changes"]["new"]]
    assert len(set(dates)) == many


def test_a_failing_and_paused_plugin_tells_its_subscribers(wapi) -> None:
    plugin = stored_plugin(wapi)
    reader = wapi.signed_in("reader@example.org")
    assert register(reader, [plugin.id]).status_code == 201
    day = date(2026, 11, 2)
    plugin.write([usd("2026-11-02", 58.1)], day)
    plugin.fail(day)
    plugin.write([usd("2026-11-02", 58.1)], day)
    plugin.pause()
    statuses = [p["data"]["status"] for p in _event_data(wapi.engine, plugin.id, "plugin.status")]
    assert statuses == ["failing", "back", "paused"]


def example_organization(api) -> tuple[dict[str, Any], int, StoredPlugin]:
    """Signed-in ada (owner), adm (admin) and mem (member) of the organization Example, its
    id, and a private plug-in listing it."""
    people = {n: api.signed_in(f"{n}@example.org") for n in ("ada", "adm", "mem")}
    made = people["ada"].post("/api/v1/organizations", json={"name": "Example"})
    assert made.status_code == 201, made.text
    org = made.json()["id"]
    for name, role in (("adm", "admin"), ("mem", "member")):
        added = people["ada"].post(
            f"/api/v1/organizations/{org}/members",
            json={"email": f"{name}@example.org", "role": role},
        )
        assert added.status_code == 201, added.text
    listed = stored_plugin(api, "private")
    with Session(api.engine) as db:
        audience.set_reader_list(db, listed.id, [], [org], by="host", now=T0)
        db.commit()
    return people, org, listed


def test_an_organizations_owners_and_admins_register_endpoints_its_members_may_not(wapi) -> None:
    people, org, listed = example_organization(wapi)
    unlisted = stored_plugin(wapi, "private")
    body = {"url": URL, "plugins": [listed.id], "organization": org}
    registered = people["adm"].post("/api/v1/reader/webhooks", json=body)
    assert registered.status_code == 201, registered.text
    endpoint = registered.json()["endpoint"]
    assert endpoint["organization_id"] == org and endpoint["plugins"] == [listed.id]
    refused = register(people["adm"], [unlisted.id], organization=org)
    assert "the organization may see" in assert_problem(refused, 422, "REQUEST-INVALID")["detail"]
    assert_problem(register(people["mem"], [listed.id], organization=org), 403, "FORBIDDEN")
    at = f"/api/v1/reader/webhooks/{endpoint['id']}"
    assert_problem(people["mem"].post(f"{at}/pause"), 403, "FORBIDDEN")
    assert_problem(
        people["mem"].get("/api/v1/reader/webhooks", params={"organization": org}), 403, "FORBIDDEN"
    )
    assert people["adm"].get("/api/v1/reader/webhooks").json() == [], "not the admin's own"
    owners = people["ada"].get("/api/v1/reader/webhooks", params={"organization": org}).json()
    assert [e["id"] for e in owners] == [endpoint["id"]]
    assert people["ada"].post(f"{at}/pause").json()["paused"] is True
    assert people["ada"].post(f"{at}/resume").json()["paused"] is False
    # At delivery, the organization must still be on the private plug-in's list.
    listed.write([usd("2026-11-01", 58.1)], date(2026, 11, 2))
    with write_transaction(wapi.engine) as conn:
        fan_out(conn, T0)
        (due,) = due_deliveries(conn, T0 + timedelta(days=1), 10)
    with Session(wapi.engine) as db:
        assert due.organization_id == org and may_receive(db, due)
        audience.set_reader_list(db, listed.id, [], [], by="host", now=T0)
        db.commit()
        assert not may_receive(db, due)
