"""The reader API over HTTP on the real app and PostgreSQL: who may read which plug-in
("Authentication" 1), `plugins.<id>.shown` and the organization default (Reader presentation
rule 1), the rendered days of every shared case in tests/conformance/days/ (validated against
its schema), raw records with revisions, reports, and the host's reader list."""

from __future__ import annotations

import json
from datetime import date, timedelta
from pathlib import Path
from typing import Any

import pytest
from jsonschema import Draft202012Validator
from sqlalchemy import select

from almanac.platform.store.models import PluginMove
from tests.api.conftest import assert_problem
from tests.audience.helpers import (
    T0,
    StoredPlugin,
    empty_audience_tables,
    fresh_id,
    store_case_records,
)
from tests.conftest import CONFORMANCE

DAYS = CONFORMANCE / "days"
SCHEMA = Draft202012Validator(json.loads((DAYS / "schema.json").read_text(encoding="utf-8")))
CASES = sorted(p for p in DAYS.glob("*.json") if p.name != "schema.json")
# `unreachable` is the app's own status when it cannot reach the service: the service never
# answers it, so those cases are the app's to draw, not the API's.
SERVED = [p for p in CASES if json.loads(p.read_text(encoding="utf-8"))["status"] != "unreachable"]

MANIFEST: dict[str, Any] = {
    "contract": 1,
    "id": "x",
    "name": {"en": "Sample rates", "es": "Tasas de ejemplo"},
    "version": "1.0.0",
    "timezone": "America/Santo_Domingo",
    "audience": "public",
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
        },
        {
            "key": "tpm",
            "kind": "event",
            "cadence": "irregular",
            "dates": "observation",
            "name": {"en": "Policy rate"},
            "unit": "%",
        },
    ],
    "licence": {"holder": "Example Bank", "terms": None, "retain": "yes"},
}


@pytest.fixture
def rapi(api):
    yield api
    empty_audience_tables(api.engine)


def plugin_in_store(api, audience: str = "public", **doc: Any) -> StoredPlugin:
    manifest = {**MANIFEST, "id": fresh_id(), "audience": audience, **doc}
    return StoredPlugin(api.engine, manifest, T0).register().approve()


def value(day: str, buy: float) -> dict[str, Any]:
    return {"kind": "value", "series": "usd", "date": day, "fields": {"buy": buy}}


def organization(owner, name: str = "Example") -> int:
    made = owner.post("/api/v1/organizations", json={"name": name})
    assert made.status_code == 201, made.text
    return made.json()["id"]


def add_member(owner, org_id: int, email: str, role: str) -> int:
    added = owner.post(
        f"/api/v1/organizations/{org_id}/members", json={"email": email, "role": role}
    )
    assert added.status_code == 201, added.text
    return added.json()["account_id"]


def set_readers(operator, plugin_id: str, emails=(), organizations=()):
    return operator.put(
        f"/api/v1/host/plugins/{plugin_id}/readers",
        json={"emails": list(emails), "organizations": list(organizations)},
    )


def show(client, plugin_id: str, shown: bool | None = True):
    answer = client.put(
        "/api/v1/reader/preferences", json={"preferences": {f"plugins.{plugin_id}.shown": shown}}
    )
    assert answer.status_code == 200, answer.text
    return answer.json()


def days_of(client, **params: str) -> dict[str, Any]:
    answer = client.get("/api/v1/reader/days", params=params)
    assert answer.status_code == 200, answer.text
    return {entry["plugin"]: entry for entry in answer.json()["plugins"]}


def visible(client) -> set[str]:
    answer = client.get("/api/v1/reader/plugins")
    assert answer.status_code == 200, answer.text
    return {p["id"] for p in answer.json()}


def assert_does_not_exist(client, plugin_id: str) -> None:
    """Every reader route answers a hidden plug-in exactly as an id nobody has."""
    unknown = fresh_id("nobody")
    routes = [
        ("get", "/api/v1/reader/plugins/{}", None),
        ("get", "/api/v1/reader/plugins/{}/records?from=2026-06-01&to=2026-06-02", None),
        ("post", "/api/v1/reader/plugins/{}/reports", {"category": "other", "note": "x"}),
        ("get", "/api/v1/reader/plugins/{}/reports", None),
    ]
    for method, path, body in routes:
        hidden = client.request(method, path.format(plugin_id), json=body)
        nobody = client.request(method, path.format(unknown), json=body)
        a = assert_problem(hidden, 404, "NOT-FOUND")
        b = assert_problem(nobody, 404, "NOT-FOUND")
        assert a["detail"].replace(plugin_id, "ID") == b["detail"].replace(unknown, "ID")
        assert hidden.headers.get("content-length") == nobody.headers.get("content-length") or (
            len(plugin_id) != len(unknown)
        )
    key = f"plugins.{plugin_id}.shown"
    refused = client.put("/api/v1/reader/preferences", json={"preferences": {key: True}})
    assert_problem(refused, 404, "NOT-FOUND")
    assert plugin_id not in visible(client)


# --- who may read ----------------------------------------------------------------------------


def test_a_public_plugin_is_read_by_anyone_signed_in_and_nobody_else(rapi) -> None:
    plugin = plugin_in_store(rapi)
    reader = rapi.signed_in("reader@example.org")
    assert plugin.id in visible(reader)
    one = reader.get(f"/api/v1/reader/plugins/{plugin.id}?language=es-DO").json()
    assert one["name"] == "Tasas de ejemplo" and one["status"] == "running"
    assert one["shown"] is False and one["choice"] is None
    anonymous = rapi.client().get("/api/v1/reader/plugins")
    assert_problem(anonymous, 401, "AUTH-REQUIRED")


def test_a_first_version_awaiting_approval_and_a_removed_plugin_do_not_exist(rapi) -> None:
    waiting = StoredPlugin(rapi.engine, {**MANIFEST, "id": fresh_id()}, T0).register()
    removed = plugin_in_store(rapi)
    removed.remove()
    reader = rapi.signed_in("reader@example.org")
    assert_does_not_exist(reader, waiting.id)
    assert_does_not_exist(reader, removed.id)


def test_a_private_plugin_not_listed_is_answered_as_an_unknown_id(rapi) -> None:
    plugin = plugin_in_store(rapi, "private")
    outsider = rapi.signed_in("outsider@example.org")
    assert_does_not_exist(outsider, plugin.id)


def test_private_readers_are_listed_people_and_active_members_of_listed_organizations(
    rapi,
) -> None:
    plugin = plugin_in_store(rapi, "private")
    operator = rapi.signed_in("host@example.org", operator=True)
    owner = rapi.signed_in("owner@example.org")
    other_owner = rapi.signed_in("other@example.org")
    listed_org = organization(owner, "Listed")
    other_org = organization(other_owner, "Not listed")
    clients = {
        n: rapi.signed_in(f"{n}@example.org")
        for n in ("member", "admin", "guest", "former", "elsewhere")
    }
    add_member(owner, listed_org, "member@example.org", "member")
    add_member(owner, listed_org, "admin@example.org", "admin")
    add_member(owner, listed_org, "guest@example.org", "guest")
    former = add_member(owner, listed_org, "former@example.org", "member")
    add_member(other_owner, other_org, "elsewhere@example.org", "member")
    left = owner.delete(f"/api/v1/organizations/{listed_org}/members/{former}")
    assert left.status_code == 204
    person = rapi.signed_in("Person@Example.org")
    unverified = rapi.signed_in("late@example.org", verify=False)

    answer = set_readers(
        operator, plugin.id, emails=["person@example.org", "LATE@example.org"],
        organizations=[listed_org],
    )  # fmt: skip
    assert answer.status_code == 200, answer.text

    for reader in (person, owner, clients["member"], clients["admin"]):
        assert plugin.id in visible(reader)
        assert reader.get(f"/api/v1/reader/plugins/{plugin.id}").status_code == 200
    # Never guests or former members; an unverified address proves nothing.
    for reader in (clients["guest"], clients["former"], clients["elsewhere"], other_owner):
        assert_does_not_exist(reader, plugin.id)
    assert_does_not_exist(unverified, plugin.id)


# --- the host's reader list --------------------------------------------------------------------


def test_the_host_replaces_the_reader_list_whole_and_keeps_the_move(rapi) -> None:
    plugin = plugin_in_store(rapi, "private")
    operator = rapi.signed_in("host@example.org", operator=True)
    owner = rapi.signed_in("owner@example.org")
    org_id = organization(owner)
    first = set_readers(operator, plugin.id, ["a@example.org", "A@EXAMPLE.org", "b@example.org"])
    assert first.json() == {
        "plugin": plugin.id,
        "emails": ["a@example.org", "b@example.org"],
        "organizations": [],
    }
    second = set_readers(operator, plugin.id, ["c@example.org"], [org_id])
    assert second.json()["emails"] == ["c@example.org"]
    assert second.json()["organizations"] == [org_id]
    assert operator.get(f"/api/v1/host/plugins/{plugin.id}/readers").json() == second.json()
    with rapi.engine.connect() as conn:
        moves = conn.execute(
            select(PluginMove.by, PluginMove.detail).where(
                PluginMove.plugin_id == plugin.id, PluginMove.action == "readers"
            )
        ).all()
    assert [m.by for m in moves] == ["host@example.org", "host@example.org"]
    assert moves[1].detail["people_added"] == ["c@example.org"]
    assert moves[1].detail["people_removed"] == ["a@example.org", "b@example.org"]


def test_the_reader_list_refusals(rapi) -> None:
    private = plugin_in_store(rapi, "private")
    public = plugin_in_store(rapi)
    operator = rapi.signed_in("host@example.org", operator=True)
    reader = rapi.signed_in("reader@example.org")
    assert_problem(set_readers(reader, private.id, ["a@example.org"]), 403, "FORBIDDEN")

    many = [f"p{n}@example.org" for n in range(501)]
    body = assert_problem(set_readers(operator, private.id, many), 422, "READER-LIST-TOO-LONG")
    assert body["detail"].startswith("emails:")
    assert set_readers(operator, private.id, many[:500]).status_code == 200
    orgs = list(range(1, 102))
    body = assert_problem(set_readers(operator, private.id, [], orgs), 422, "READER-LIST-TOO-LONG")
    assert body["detail"].startswith("organizations:")
    body = assert_problem(set_readers(operator, private.id, [], [999999]), 422, "REQUEST-INVALID")
    assert body["detail"].startswith("organizations:")
    body = assert_problem(
        set_readers(operator, private.id, ["not-an-address"]), 422, "REQUEST-INVALID"
    )
    assert body["detail"].startswith("emails[0]:")
    assert_problem(set_readers(operator, public.id, ["a@example.org"]), 409, "AUDIENCE-NOT-PRIVATE")
    assert_problem(set_readers(operator, fresh_id(), []), 404, "NOT-FOUND")
    # A refused list changes nothing.
    kept = operator.get(f"/api/v1/host/plugins/{private.id}/readers").json()
    assert len(kept["emails"]) == 500


# --- shown and the organization default --------------------------------------------------------


def test_shown_preference_is_synced_and_nothing_is_pushed_onto_days(rapi) -> None:
    plugin = plugin_in_store(rapi)
    plugin.write([value("2026-06-01", 58.1)], date(2026, 6, 1))
    reader = rapi.signed_in("reader@example.org")
    key = f"plugins.{plugin.id}.shown"
    window = {"from": "2026-06-01", "to": "2026-06-02", "today": "2026-06-02"}
    assert reader.get("/api/v1/reader/preferences").json()["preferences"][key] is None
    assert plugin.id not in days_of(reader, **window)
    assert show(reader, plugin.id)["preferences"][key] is True
    assert plugin.id in days_of(reader, **window)
    assert (
        show(reader, plugin.id, False)["shown"] == []
        or plugin.id not in show(reader, plugin.id, False)["shown"]
    )
    assert plugin.id not in days_of(reader, **window)
    assert show(reader, plugin.id, None)["preferences"][key] is None
    bad = reader.put("/api/v1/reader/preferences", json={"preferences": {"theme": True}})
    assert_problem(bad, 422, "REQUEST-INVALID")


def test_an_owner_or_admin_turns_a_private_plugin_on_for_members_and_a_member_choice_wins(
    rapi,
) -> None:
    plugin = plugin_in_store(rapi, "private")
    plugin.write([value("2026-06-01", 58.1)], date(2026, 6, 1))
    operator = rapi.signed_in("host@example.org", operator=True)
    owner = rapi.signed_in("owner@example.org")
    org_id = organization(owner)
    member, admin, guest = (rapi.signed_in(f"{n}@example.org") for n in ("m", "a", "g"))
    add_member(owner, org_id, "m@example.org", "member")
    add_member(owner, org_id, "a@example.org", "admin")
    add_member(owner, org_id, "g@example.org", "guest")
    assert set_readers(operator, plugin.id, [], [org_id]).status_code == 200
    path = f"/api/v1/reader/organizations/{org_id}/plugins/{plugin.id}/shown"
    window = {"from": "2026-06-01", "to": "2026-06-01", "today": "2026-06-01"}

    assert plugin.id not in days_of(member, **window)
    assert_problem(member.put(path, json={"shown": True}), 403, "FORBIDDEN")
    assert_problem(guest.put(path, json={"shown": True}), 404, "NOT-FOUND")
    set_default = admin.put(path, json={"shown": True})
    assert set_default.status_code == 200, set_default.text
    assert plugin.id in days_of(member, **window)
    one = member.get(f"/api/v1/reader/plugins/{plugin.id}").json()
    assert one["shown"] is True and one["choice"] is None and one["organization_default"] is True
    show(member, plugin.id, False)
    assert plugin.id not in days_of(member, **window)
    assert owner.put(path, json={"shown": None}).status_code == 200
    show(member, plugin.id, None)
    assert plugin.id not in days_of(member, **window)


def test_the_organization_default_refusals(rapi) -> None:
    private = plugin_in_store(rapi, "private")
    public = plugin_in_store(rapi)
    operator = rapi.signed_in("host@example.org", operator=True)
    owner = rapi.signed_in("owner@example.org")
    listed = organization(owner, "Listed")
    unlisted = organization(owner, "Unlisted")
    set_readers(operator, private.id, [], [listed])
    path = "/api/v1/reader/organizations/{}/plugins/{}/shown"
    wrong = owner.put(path.format(unlisted, private.id), json={"shown": True})
    assert_problem(wrong, 403, "AUDIENCE-ORGANIZATION-NOT-LISTED")
    assert_problem(
        owner.put(path.format(listed, public.id), json={"shown": True}), 409, "AUDIENCE-NOT-PRIVATE"
    )
    stranger = rapi.signed_in("stranger@example.org")
    assert_problem(
        stranger.put(path.format(listed, private.id), json={"shown": True}), 404, "NOT-FOUND"
    )
    assert_problem(
        owner.put(path.format(listed, fresh_id()), json={"shown": True}), 404, "NOT-FOUND"
    )


# --- days --------------------------------------------------------------------------------------


@pytest.mark.parametrize("path", SERVED, ids=[p.stem for p in SERVED])
def test_every_shared_rendering_case_is_served_exactly(rapi, path: Path) -> None:
    case = json.loads(path.read_text(encoding="utf-8"))
    plugin = StoredPlugin(rapi.engine, {**case["manifest"], "id": fresh_id()}, T0)
    plugin.register().approve()
    store_case_records(plugin, case["records"], case["today"])
    if case["status"] == "failing":
        plugin.fail(date.fromisoformat(case["today"]))
    elif case["status"] == "paused":
        plugin.pause()
    elif case["status"] == "pending":
        plugin.new_version()
    reader = rapi.signed_in("reader@example.org")
    show(reader, plugin.id)
    answer = reader.get(
        "/api/v1/reader/days",
        params={k: case[k] for k in ("from", "to", "today", "language")},
    )
    assert answer.status_code == 200, answer.text
    [entry] = answer.json()["plugins"]
    assert entry["plugin"] == plugin.id and entry["status"] == case["status"]
    assert entry["notice"] is None
    assert list(SCHEMA.iter_errors(entry["days"])) == []
    case_id = case["manifest"]["id"]
    expected = json.loads(json.dumps(case["expect"]).replace(f'"{case_id}"', f'"{plugin.id}"'))
    assert entry["days"] == expected


def test_kept_days_show_a_runs_new_record_at_once_and_only_to_their_readers(rapi) -> None:
    private = plugin_in_store(rapi, audience="private")
    private.write([value("2026-06-01", 58.1)], date(2026, 6, 1))
    operator = rapi.signed_in("host@example.org", operator=True)
    assert set_readers(operator, private.id, emails=["listed@example.org"]).status_code == 200
    listed = rapi.signed_in("listed@example.org")
    show(listed, private.id)
    params = {"from": "2026-06-01", "to": "2026-06-03", "today": "2026-06-03"}
    first = listed.get("/api/v1/reader/days", params=params)
    again = listed.get("/api/v1/reader/days", params=params)
    assert again.content == first.content
    assert again.headers["content-type"] == "application/json"
    # The answer is the JSON of the whole object, as a JSONResponse would write it.
    assert first.content == json.dumps(
        first.json(), ensure_ascii=False, separators=(",", ":")
    ).encode("utf-8")
    private.write([value("2026-06-01", 58.1), value("2026-06-02", 58.4)], date(2026, 6, 2))
    days = days_of(listed, **params)[private.id]["days"]
    assert [r["figures"][0]["value"] for r in days[1]["sections"][0]["rows"]] == [58.4]
    stranger = rapi.signed_in("stranger@example.org")
    assert private.id not in days_of(stranger, **params)


def test_the_days_of_several_plugins_come_by_id(rapi) -> None:
    plugins = sorted((plugin_in_store(rapi) for _ in range(3)), key=lambda p: p.id)
    reader = rapi.signed_in("reader@example.org")
    for plugin in plugins:
        plugin.write([value("2026-06-01", 58.1)], date(2026, 6, 1))
        show(reader, plugin.id)
    answer = reader.get(
        "/api/v1/reader/days",
        params={"from": "2026-05-31", "to": "2026-06-02", "today": "2026-06-02"},
    ).json()
    assert [e["plugin"] for e in answer["plugins"]] == [p.id for p in plugins]
    for entry in answer["plugins"]:
        assert list(SCHEMA.iter_errors(entry["days"])) == []
        assert [d["date"] for d in entry["days"]] == ["2026-05-31", "2026-06-01", "2026-06-02"]


def test_values_in_force_come_from_before_the_range_and_the_newest_from_after_it(rapi) -> None:
    plugin = plugin_in_store(rapi)
    plugin.write([value("2026-03-02", 57.0), value("2026-03-03", 57.5)], date(2026, 3, 3))
    plugin.write([value("2026-06-20", 59.0)], date(2026, 6, 20))
    reader = rapi.signed_in("reader@example.org")
    show(reader, plugin.id)
    entry = days_of(reader, **{"from": "2026-05-01", "to": "2026-05-02", "today": "2026-06-20"})
    rows = [d["sections"][0]["rows"] for d in entry[plugin.id]["days"]]
    assert [r[0]["style"] for r in rows] == ["in-force", "in-force"]
    assert rows[0][0]["note"] == "Rate of 2026-03-03" and rows[0][0]["figures"][0]["value"] == 57.5
    # After the newest record (in the range's future) a status row would show; here the
    # newest is later, so the days in the range carry no status row.
    assert all(r[-1]["type"] == "value" for r in rows)


def test_sixty_three_days_are_refused_naming_the_parameter(rapi) -> None:
    reader = rapi.signed_in("reader@example.org")
    first = date(2026, 6, 1)
    ok = reader.get(
        "/api/v1/reader/days",
        params={"from": first.isoformat(), "to": (first + timedelta(days=61)).isoformat()},
    )
    assert ok.status_code == 200, ok.text
    refused = reader.get(
        "/api/v1/reader/days",
        params={"from": first.isoformat(), "to": (first + timedelta(days=62)).isoformat()},
    )
    body = assert_problem(refused, 422, "READER-TOO-MANY-DAYS")
    assert body["detail"].startswith("to:") and "63 days" in body["detail"]
    backwards = reader.get("/api/v1/reader/days", params={"from": "2026-06-02", "to": "2026-06-01"})
    assert assert_problem(backwards, 422, "REQUEST-INVALID")["detail"].startswith("to:")
    malformed = reader.get("/api/v1/reader/days", params={"from": "2026-02-30", "to": "2026-03-01"})
    assert "query.from" in assert_problem(malformed, 422, "REQUEST-INVALID")["detail"]
    plugin = plugin_in_store(rapi)
    records = reader.get(
        f"/api/v1/reader/plugins/{plugin.id}/records",
        params={"from": "2026-01-01", "to": "2026-03-04"},
    )
    assert_problem(records, 422, "READER-TOO-MANY-DAYS")


def test_a_taken_down_plugin_shows_its_public_message_and_no_records(rapi) -> None:
    plugin = plugin_in_store(rapi)
    plugin.write([value("2026-06-01", 58.1)], date(2026, 6, 1))
    reader = rapi.signed_in("reader@example.org")
    show(reader, plugin.id)
    plugin.take_down("Taken down: the holder withdrew permission.")
    entry = days_of(reader, **{"from": "2026-06-01", "to": "2026-06-02", "today": "2026-06-02"})
    assert entry[plugin.id]["notice"] == "Taken down: the holder withdrew permission."
    assert entry[plugin.id]["days"] == [
        {"date": "2026-06-01", "sections": []},
        {"date": "2026-06-02", "sections": []},
    ]
    records = reader.get(
        f"/api/v1/reader/plugins/{plugin.id}/records",
        params={"from": "2026-06-01", "to": "2026-06-02"},
    ).json()
    assert records["records"] == [] and records["notice"].startswith("Taken down")
    listed = reader.get(f"/api/v1/reader/plugins/{plugin.id}").json()
    assert listed["taken_down"] is True and listed["notice"].startswith("Taken down")


# --- raw records -------------------------------------------------------------------------------


def test_raw_records_carry_their_revisions_and_read_as_of_a_moment(rapi) -> None:
    plugin = plugin_in_store(rapi)
    plugin.write(
        [
            value("2026-06-01", 58.1),
            {"kind": "event", "series": "tpm", "id": "d5", "date": "2026-06-09",
             "state": "scheduled", "title": "July decision"},
        ],
        date(2026, 6, 1),
    )  # fmt: skip
    between = plugin.now()
    plugin.write(
        [
            value("2026-06-01", 58.25),
            {"kind": "event", "series": "tpm", "id": "d5", "date": "2026-06-10",
             "state": "scheduled", "title": "July decision"},
        ],
        date(2026, 6, 2),
    )  # fmt: skip
    reader = rapi.signed_in("reader@example.org")
    path = f"/api/v1/reader/plugins/{plugin.id}/records"
    now = reader.get(path, params={"from": "2026-06-01", "to": "2026-06-10"}).json()
    by_date = {(r["record"]["series"], r["record"]["date"]): r for r in now["records"]}
    usd = by_date[("usd", "2026-06-01")]
    assert usd["record"]["fields"] == {"buy": 58.25}
    assert [r["record"]["fields"]["buy"] for r in usd["revisions"]] == [58.1, 58.25]
    assert usd["revisions"][0]["valid_to"] == usd["revisions"][1]["valid_from"]
    assert usd["revisions"][1]["valid_to"] is None
    assert by_date[("tpm", "2026-06-09")]["record"]["movedTo"] == "2026-06-10"
    assert "movedTo" not in by_date[("tpm", "2026-06-10")]["record"]

    then = reader.get(
        path, params={"from": "2026-06-01", "to": "2026-06-10", "as_of": between.isoformat()}
    ).json()
    by_date = {(r["record"]["series"], r["record"]["date"]): r for r in then["records"]}
    assert set(by_date) == {("usd", "2026-06-01"), ("tpm", "2026-06-09")}
    assert by_date[("usd", "2026-06-01")]["record"]["fields"] == {"buy": 58.1}
    assert len(by_date[("usd", "2026-06-01")]["revisions"]) == 1
    assert "movedTo" not in by_date[("tpm", "2026-06-09")]["record"]
    naive = reader.get(
        path, params={"from": "2026-06-01", "to": "2026-06-02", "as_of": "2026-06-01T12:00"}
    )
    assert assert_problem(naive, 422, "REQUEST-INVALID")["detail"].startswith("as_of:")


# --- reports -----------------------------------------------------------------------------------


def test_reports_are_read_by_the_publisher_and_staff_never_with_the_sender(rapi) -> None:
    plugin = plugin_in_store(rapi)
    publisher = rapi.signed_in("publisher@example.org")
    org_id = organization(publisher, "Publisher")
    staffer = rapi.signed_in("staffer@example.org")
    helper = rapi.signed_in("helper@example.org")
    add_member(publisher, org_id, "staffer@example.org", "member")
    add_member(publisher, org_id, "helper@example.org", "admin")
    plugin.publish_as(org_id)
    reader = rapi.signed_in("reader@example.org")
    operator = rapi.signed_in("host@example.org", operator=True)
    path = f"/api/v1/reader/plugins/{plugin.id}/reports"

    sent = reader.post(
        path, json={"category": "wrong-data", "note": "June 1 is 58.2", "day": "2026-06-01"}
    )
    assert sent.status_code == 201, sent.text
    reader.post(path, json={"category": "stopped-working", "note": ""})
    for who in (publisher, helper, operator):
        got = who.get(path)
        assert got.status_code == 200, got.text
        assert [r["category"] for r in got.json()] == ["stopped-working", "wrong-data"]
        text = got.text
        assert "reader@example.org" not in text
        assert all(
            set(r) == {"id", "plugin", "category", "note", "day", "created_at"} for r in got.json()
        )
    for who in (staffer, reader):
        assert_problem(who.get(path), 403, "FORBIDDEN")
    bad = reader.post(path, json={"category": "spam", "note": "x"})
    assert assert_problem(bad, 422, "REQUEST-INVALID")["detail"].startswith("category:")
