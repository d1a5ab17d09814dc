"""Readers' calendar feeds over HTTP on the real app and PostgreSQL (issue 20), each feed parsed
back with `icalendar` as a calendar client would: every event against the reader API's rows
for the same days, SEQUENCE and revisions, cancelled and moved events, who sees a private
plug-in, the private address (shown once, revoked, regenerated), ETag and 304, the window, the
status note, the language."""

from __future__ import annotations

import logging
from datetime import UTC, date, datetime, timedelta
from typing import Any

import httpx
import icalendar
import pytest

from almanac.platform.feeds import reading
from tests.api.conftest import Api, assert_problem
from tests.api.test_reader import organization, set_readers, show
from tests.audience.helpers import T0, StoredPlugin, fresh_id

TODAY = date(2026, 6, 15)
NOW = datetime(2026, 6, 15, 12, 0, tzinfo=UTC)

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
            "name": {"en": "Dollar", "es": "Dólar"},
            "unit": "DOP",
            "fields": ["buy"],
            "fieldNames": {"buy": {"en": "Buy", "es": "Compra"}},
        },
        {
            "key": "tpm",
            "kind": "event",
            "cadence": "irregular",
            "dates": "observation",
            "name": {"en": "Policy rate", "es": "Tasa de política"},
            "unit": "%",
        },
        {
            "key": "news",
            "kind": "item",
            "cadence": "irregular",
            "dates": "publication",
            "name": {"en": "Reports"},
        },
    ],
    "licence": {
        "holder": "Example Bank",
        "terms": None,
        "retain": "yes",
        "attribution": "Source: Example Bank",
    },
}


def value(day: str, buy: float) -> dict[str, Any]:
    return {"kind": "value", "series": "usd", "date": day, "fields": {"buy": buy}}


def event(day: str, id_: str, state: str, **more: Any) -> dict[str, Any]:
    return {"kind": "event", "series": "tpm", "date": day, "id": id_, "state": state, **more}


def item(day: str, id_: str, title: str) -> dict[str, Any]:
    url = f"https://example.org/{id_}"
    return {"kind": "item", "series": "news", "date": day, "id": id_, "title": title, "url": url}


RECORDS = [
    value("2026-03-02", 57.0),  # before the window: decides nothing drawn in it
    value("2026-06-01", 58.1),
    value("2026-06-02", 58.4),
    value("2026-06-05", 58.3),
    event("2026-06-03", "d1", "happened", value=5.5),
    event("2026-06-10", "d2", "happened", value=5.75),
    event("2026-06-08", "c1", "cancelled", title="Extra meeting"),
    event("2026-07-30", "s1", "scheduled", title="Rate decision"),
    event("2026-06-20", "m1", "scheduled", title="Board meeting"),
    item("2026-06-04", "report", "Monetary report"),
]


@pytest.fixture
def fapi_now(fapi: Api) -> Api:
    fapi.clock.moment = NOW
    return fapi


def stored(api: Api, audience: str = "public", records=RECORDS, **doc: Any) -> StoredPlugin:
    manifest = {**MANIFEST, "id": fresh_id("feed-"), "audience": audience, **doc}
    plugin = StoredPlugin(api.engine, manifest, T0).register().approve()
    if records:
        plugin.write(records, TODAY)
    return plugin


def new_feed(client: httpx.Client) -> str:
    """The reader's new feed address, as a path."""
    made = client.post("/api/v1/reader/feed")
    assert made.status_code == 201, made.text
    url = made.json()["url"]
    assert made.json()["webcal_url"] == "webcal://" + url.split("://", 1)[1]
    return "/" + url.split("://", 1)[1].split("/", 1)[1]


def fetch(client: httpx.Client, path: str, **params: Any) -> icalendar.Calendar:
    answer = client.get(path, params=params)
    assert answer.status_code == 200, answer.text
    assert answer.headers["content-type"] == "text/calendar; charset=utf-8"
    assert answer.headers["etag"].startswith('"')
    return icalendar.Calendar.from_ical(answer.content)


def events_of(calendar: icalendar.Calendar, plugin_id: str) -> dict[str, icalendar.Event]:
    """The plug-in's events by UID."""
    return {str(e["UID"]): e for e in calendar.events if str(e["UID"]).startswith(plugin_id + "/")}


def by_summary(events: dict[str, icalendar.Event]) -> dict[tuple[date, str], icalendar.Event]:
    return {(e.start, str(e["SUMMARY"])): e for e in events.values()}


def row_summary(row: dict[str, Any]) -> str:
    """The words of a reader API row the way a feed's summary writes them (`reader.row_words`):
    written out here as the reader's page reads them, so the test does not take the words from
    the code it checks."""
    if row["type"] == "item":
        return row["label"]
    parts = [row["label"]]
    for figure in row["figures"]:
        labelled = row["type"] == "value"
        parts.append(f"{figure['label']} {figure['text']}" if labelled else figure["text"])
    if row["change"]:
        parts.append(row["change"]["text"])
    if row["note"]:
        parts.append(row["note"])
    return " · ".join(parts)


def api_events(
    client: httpx.Client, plugin_id: str, first: date, last: date, language: str = "en"
) -> dict[tuple[date, str], dict[str, Any]]:
    """The rows the reader API draws for the plug-in over `first`..`last` (62 days a request)
    that stand for a record on their own day: values of style normal, events, items."""
    found: dict[tuple[date, str], dict[str, Any]] = {}
    start = first
    while start <= last:
        end = min(start + timedelta(days=61), last)
        answer = client.get(
            "/api/v1/reader/days",
            params={
                "from": start.isoformat(),
                "to": end.isoformat(),
                "today": TODAY.isoformat(),
                "language": language,
            },
        )
        assert answer.status_code == 200, answer.text
        plugins = {p["plugin"]: p for p in answer.json()["plugins"]}
        for day in plugins[plugin_id]["days"]:
            for section in day["sections"]:
                for row in section["rows"]:
                    if row["type"] == "status" or row.get("style") in ("in-force", "last"):
                        continue
                    found[(date.fromisoformat(day["date"]), row_summary(row))] = row
        start = end + timedelta(days=1)
    return found


# --- every event is a row of the reader's days ----------------------------------------------


def test_every_event_is_a_row_of_the_readers_days_as_an_all_day_event(fapi_now: Api) -> None:
    plugin = stored(fapi_now)
    reader = fapi_now.signed_in("reader@example.org")
    show(reader, plugin.id)
    answer = reader.get(new_feed(reader))
    assert b"DTSTART;VALUE=DATE:20260601\r\n" in answer.content
    calendar = icalendar.Calendar.from_ical(answer.content)
    events = events_of(calendar, plugin.id)
    rows = api_events(reader, plugin.id, TODAY - timedelta(days=62), TODAY + timedelta(days=366))

    assert set(by_summary(events)) == set(rows)
    assert len(events) == len(rows) == 9  # the value of March is before the window
    for event in events.values():
        assert type(event.start) is date and event.end == event.start + timedelta(days=1)
        assert event["TRANSP"] == "TRANSPARENT"
        assert event.categories == ["Sample rates"]
    literal = {(e.start.isoformat(), str(e["SUMMARY"])) for e in events.values()}
    assert literal == {
        ("2026-06-01", "Dollar · Buy 58.10 · +1.93%"),  # the change from March's value
        ("2026-06-02", "Dollar · Buy 58.40 · +0.52%"),
        ("2026-06-03", "Policy rate · 5.50%"),
        ("2026-06-04", "Monetary report"),
        ("2026-06-05", "Dollar · Buy 58.30 · -0.17%"),
        ("2026-06-08", "Extra meeting · Cancelled"),
        ("2026-06-10", "Policy rate · 5.75% · +25 bp"),
        ("2026-06-20", "Board meeting · Scheduled"),
        ("2026-07-30", "Rate decision · Scheduled"),
    }
    first = events[f"{plugin.id}/usd/2026-06-01@127.0.0.1"]
    assert first["DESCRIPTION"] == "Sample rates\nSource: Example Bank"
    assert first["STATUS"] == "CONFIRMED" and first.sequence == 0
    report = events[f"{plugin.id}/news/2026-06-04/report@127.0.0.1"]
    assert str(report["URL"]) == "https://example.org/report"
    assert "Example Bank" not in report["DESCRIPTION"]  # rule 7: an item has no attribution
    scheduled = events[f"{plugin.id}/tpm/2026-07-30/s1@127.0.0.1"]
    assert scheduled["STATUS"] == "TENTATIVE"
    # The calendar's own properties (RFC 7986 and the common X- ones).
    assert calendar["NAME"] == calendar["X-WR-CALNAME"] == "Almanac"
    assert calendar["COLOR"] and calendar["METHOD"] == "PUBLISH"
    assert b"REFRESH-INTERVAL;VALUE=DURATION:PT1H\r\n" in answer.content
    assert b"X-PUBLISHED-TTL:PT1H\r\n" in answer.content
    assert "Sample rates: Source: Example Bank" in str(calendar["DESCRIPTION"])


def test_the_public_feed_of_a_public_plugin_is_read_without_signing_in_in_a_language(
    fapi_now: Api,
) -> None:
    plugin = stored(fapi_now)
    anyone = fapi_now.client()
    path = f"/api/v1/feeds/plugins/{plugin.id}.ics"
    calendar = fetch(anyone, path, language="es")
    assert calendar["NAME"] == calendar["X-WR-CALNAME"] == "Tasas de ejemplo"
    assert str(calendar["UID"]) == f"plugins/{plugin.id}@127.0.0.1"
    reader = fapi_now.signed_in("reader@example.org")
    show(reader, plugin.id)
    rows = api_events(
        reader, plugin.id, TODAY - timedelta(days=62), TODAY + timedelta(days=366), "es"
    )
    events = events_of(calendar, plugin.id)
    assert set(by_summary(events)) == set(rows)
    assert ("2026-06-02", "Dólar · Compra 58.40 · +0.52%") in {
        (e.start.isoformat(), str(e["SUMMARY"])) for e in events.values()
    }
    # The same record has the same UID in the reader's feed and the public one.
    mine = events_of(fetch(reader, new_feed(reader)), plugin.id)
    assert set(mine) == set(events)


# --- revisions, cancelled and moved ---------------------------------------------------------


def test_a_revision_raises_the_sequence_of_the_same_uid(fapi_now: Api) -> None:
    plugin = stored(fapi_now, records=[value("2026-06-01", 58.1)])
    path = f"/api/v1/feeds/plugins/{plugin.id}.ics"
    uid = f"{plugin.id}/usd/2026-06-01@127.0.0.1"
    before = events_of(fetch(fapi_now.client(), path), plugin.id)[uid]
    assert before.sequence == 0 and before["SUMMARY"] == "Dollar · Buy 58.10"

    plugin.write([value("2026-06-01", 58.25)], TODAY)
    after = events_of(fetch(fapi_now.client(), path), plugin.id)[uid]
    assert after.sequence == 1 and after["SUMMARY"] == "Dollar · Buy 58.25"
    assert after.DTSTAMP > before.DTSTAMP

    plugin.write([value("2026-06-01", 58.1)], TODAY)  # back again: still a revision
    again = events_of(fetch(fapi_now.client(), path), plugin.id)[uid]
    assert again.sequence == 2 and again["SUMMARY"] == "Dollar · Buy 58.10"


def test_a_cancelled_event_and_a_moved_one(fapi_now: Api) -> None:
    plugin = stored(fapi_now)
    path = f"/api/v1/feeds/plugins/{plugin.id}.ics"
    old_uid = f"{plugin.id}/tpm/2026-06-20/m1@127.0.0.1"
    new_uid = f"{plugin.id}/tpm/2026-06-25/m1@127.0.0.1"
    first = events_of(fetch(fapi_now.client(), path), plugin.id)
    cancelled = first[f"{plugin.id}/tpm/2026-06-08/c1@127.0.0.1"]
    assert cancelled["STATUS"] == "CANCELLED"
    assert cancelled["SUMMARY"] == "Extra meeting · Cancelled"
    assert first[old_uid]["STATUS"] == "TENTATIVE" and first[old_uid].sequence == 0
    assert new_uid not in first

    # The next run prints the event on another date: the store marks the old date moved.
    plugin.write([event("2026-06-25", "m1", "scheduled", title="Board meeting")], TODAY)
    moved = events_of(fetch(fapi_now.client(), path), plugin.id)
    old, new = moved[old_uid], moved[new_uid]
    assert old.start == date(2026, 6, 20) and old["STATUS"] == "CANCELLED"
    assert old["SUMMARY"] == "Board meeting · Moved to 2026-06-25"
    assert old.sequence == 1  # the move is a revision of the old date's record
    assert new.start == date(2026, 6, 25) and new["STATUS"] == "TENTATIVE"
    assert new["SUMMARY"] == "Board meeting · Scheduled" and new.sequence == 0


# --- who sees a private plug-in -------------------------------------------------------------


def test_a_private_plugin_is_only_in_the_feed_of_a_reader_who_may_read_it(fapi_now: Api) -> None:
    private = stored(fapi_now, "private")
    public = stored(fapi_now)
    operator = fapi_now.signed_in("host@example.org", operator=True)
    listed = fapi_now.signed_in("listed@example.org")
    outsider = fapi_now.signed_in("outsider@example.org")
    assert set_readers(operator, private.id, emails=["listed@example.org"]).status_code == 200
    show(listed, private.id)
    show(listed, public.id)
    show(outsider, public.id)
    listed_feed = fetch(listed, new_feed(listed))
    outsider_feed = fetch(outsider, new_feed(outsider))
    assert len(events_of(listed_feed, private.id)) == 9
    assert events_of(outsider_feed, private.id) == {}
    assert len(events_of(outsider_feed, public.id)) == 9

    # Taken off the list: the next read of the same address no longer holds it.
    assert set_readers(operator, private.id).status_code == 200
    assert events_of(fetch(listed, new_feed(listed)), private.id) == {}


def test_a_public_feed_of_any_plugin_but_a_public_one_is_the_unknown_ids_answer(
    fapi_now: Api,
) -> None:
    private = stored(fapi_now, "private")
    taken_down = stored(fapi_now)
    taken_down.take_down("Withdrawn at the holder's request.")
    removed = stored(fapi_now)
    removed.remove()
    waiting = StoredPlugin(fapi_now.engine, {**MANIFEST, "id": fresh_id("feed-")}, T0).register()
    anyone = fapi_now.client()
    unknown = anyone.get(f"/api/v1/feeds/plugins/{fresh_id('nobody-')}.ics")
    body = assert_problem(unknown, 404, "NOT-FOUND")
    assert body["detail"] == "no public calendar feed for this plug-in"
    for plugin in (private, taken_down, removed, waiting):
        hidden = anyone.get(f"/api/v1/feeds/plugins/{plugin.id}.ics")
        assert_problem(hidden, 404, "NOT-FOUND")
        assert hidden.content == unknown.content
    # A signed-in reader on the list gets the same answer: a public feed is for public ones.
    operator = fapi_now.signed_in("host@example.org", operator=True)
    set_readers(operator, private.id, emails=["listed@example.org"])
    listed = fapi_now.signed_in("listed@example.org")
    assert listed.get(f"/api/v1/feeds/plugins/{private.id}.ics").content == unknown.content


def test_a_taken_down_plugin_in_a_readers_feed_is_its_notice_and_no_event(fapi_now: Api) -> None:
    plugin = stored(fapi_now)
    reader = fapi_now.signed_in("reader@example.org")
    show(reader, plugin.id)
    path = new_feed(reader)
    plugin.take_down("Withdrawn at the holder's request.")
    calendar = fetch(reader, path)
    assert events_of(calendar, plugin.id) == {}
    assert "Sample rates: Withdrawn at the holder's request." in str(calendar["DESCRIPTION"])


# --- the private address --------------------------------------------------------------------


def test_the_address_is_shown_once_and_a_revoked_one_is_a_never_existing_one(
    fapi_now: Api,
) -> None:
    reader = fapi_now.signed_in("reader@example.org")
    assert reader.get("/api/v1/reader/feed").json() == {"exists": False, "created_at": None}
    path = new_feed(reader)
    secret = path.rsplit("/", 1)[1].removesuffix(".ics")
    assert secret.startswith("almcal_") and len(secret) > 40
    state = reader.get("/api/v1/reader/feed")
    assert state.json()["exists"] is True and secret not in state.text
    anyone = fapi_now.client()
    assert anyone.get(path).status_code == 200

    assert reader.delete("/api/v1/reader/feed").status_code == 204
    assert reader.get("/api/v1/reader/feed").json()["exists"] is False
    revoked = anyone.get(path)
    never = anyone.get(f"/api/v1/feeds/almcal_{'x' * 43}.ics")
    assert_problem(revoked, 404, "NOT-FOUND")
    assert revoked.content == never.content
    for header in ("content-type", "content-length", "cache-control", "etag"):
        assert revoked.headers.get(header) == never.headers.get(header)
    assert secret not in revoked.text
    assert reader.delete("/api/v1/reader/feed").status_code == 204  # nothing left to revoke


def test_regenerating_revokes_the_old_address_and_a_token_may_not(fapi_now: Api) -> None:
    reader = fapi_now.signed_in("reader@example.org")
    old = new_feed(reader)
    made = reader.post("/api/v1/reader/feed")
    assert made.status_code == 201 and made.json()["revoked_previous"] is True
    new = "/" + made.json()["url"].split("://", 1)[1].split("/", 1)[1]
    assert new != old
    anyone = fapi_now.client()
    assert_problem(anyone.get(old), 404, "NOT-FOUND")
    assert anyone.get(new).status_code == 200

    token = reader.post("/api/v1/tokens", json={"name": "calendar"}).json()["token"]
    program = fapi_now.client()
    program.headers["Authorization"] = f"Bearer {token}"
    assert_problem(program.post("/api/v1/reader/feed"), 403, "FORBIDDEN")
    assert anyone.get(new).status_code == 200  # the refusal changed nothing
    assert program.get("/api/v1/reader/feed").json()["exists"] is True
    assert_problem(fapi_now.client().post("/api/v1/reader/feed"), 401, "AUTH-REQUIRED")


def test_the_secret_never_reaches_the_access_log(fapi_now: Api, caplog) -> None:
    reader = fapi_now.signed_in("reader@example.org")
    path = new_feed(reader)
    secret = path.rsplit("/", 1)[1].removesuffix(".ics")
    caplog.set_level(logging.INFO)
    access = logging.getLogger("uvicorn.access")
    access.addHandler(caplog.handler)
    old_level = access.level
    access.setLevel(logging.INFO)
    try:
        assert fapi_now.client().get(path).status_code == 200
    finally:
        access.removeHandler(caplog.handler)
        access.setLevel(old_level)
    lines = [r.getMessage() for r in caplog.records if r.name == "uvicorn.access"]
    assert any("/api/v1/feeds/[redacted]" in line for line in lines), lines
    assert not any(secret in line for line in lines)


# --- ETag and 304 ---------------------------------------------------------------------------


def test_an_unchanged_feed_is_304_without_drawing_and_a_run_changes_its_etag(
    fapi_now: Api, monkeypatch: pytest.MonkeyPatch
) -> None:
    plugin = stored(fapi_now, records=[value("2026-06-01", 58.1)])
    reader = fapi_now.signed_in("reader@example.org")
    show(reader, plugin.id)
    path = new_feed(reader)
    drawn: list[int] = []
    build = reading.build_calendar

    def counted(**kwargs: Any) -> bytes:
        drawn.append(1)
        return build(**kwargs)

    monkeypatch.setattr(reading, "build_calendar", counted)
    client = fapi_now.client()
    first = client.get(path)
    assert first.status_code == 200 and len(drawn) == 1
    etag = first.headers["etag"]

    unchanged = client.get(path, headers={"If-None-Match": etag})
    assert unchanged.status_code == 304 and unchanged.content == b""
    assert unchanged.headers["etag"] == etag
    listed = client.get(path, headers={"If-None-Match": f'"other", W/{etag}'})
    assert listed.status_code == 304
    again = client.get(path)  # no If-None-Match: the kept bytes
    assert again.status_code == 200 and again.content == first.content
    assert len(drawn) == 1

    plugin.write([value("2026-06-01", 58.1), value("2026-06-02", 58.4)], TODAY)
    changed = client.get(path, headers={"If-None-Match": etag})
    assert changed.status_code == 200 and changed.headers["etag"] != etag
    summaries = {str(e["SUMMARY"]) for e in icalendar.Calendar.from_ical(changed.content).events}
    assert "Dollar · Buy 58.40 · +0.52%" in summaries
    assert len(drawn) == 2

    # What the reader shows changes the feed too.
    show(reader, plugin.id, False)
    hidden = client.get(path, headers={"If-None-Match": changed.headers["etag"]})
    assert (
        hidden.status_code == 200
        and events_of(icalendar.Calendar.from_ical(hidden.content), plugin.id) == {}
    )
    # And so does the next day: the window moves with the reader's today.
    fapi_now.clock.advance(timedelta(days=1))
    next_day = client.get(path, headers={"If-None-Match": hidden.headers["etag"]})
    assert next_day.status_code == 200


# --- the window -----------------------------------------------------------------------------


def test_the_default_window_is_62_days_back_and_366_ahead(fapi_now: Api) -> None:
    back = TODAY - timedelta(days=62)
    ahead = TODAY + timedelta(days=366)
    plugin = stored(
        fapi_now,
        records=[
            value((back - timedelta(days=1)).isoformat(), 57.0),
            value(back.isoformat(), 57.5),
            event(ahead.isoformat(), "in", "scheduled", title="Last in"),
            event((ahead + timedelta(days=1)).isoformat(), "out", "scheduled", title="Out"),
        ],
    )
    path = f"/api/v1/feeds/plugins/{plugin.id}.ics"
    events = by_summary(events_of(fetch(fapi_now.client(), path), plugin.id))
    assert set(events) == {
        (back, "Dollar · Buy 57.50 · +0.88%"),
        (ahead, "Last in · Scheduled"),
    }
    # Values are not filled in: no event on the days the value stays in force.
    narrow = by_summary(events_of(fetch(fapi_now.client(), path, past=0, ahead=0), plugin.id))
    assert narrow == {}
    wide = by_summary(events_of(fetch(fapi_now.client(), path, past=63, ahead=367), plugin.id))
    assert len(wide) == 4
    refused = fapi_now.client().get(path, params={"ahead": 732})
    assert_problem(refused, 422, "REQUEST-INVALID")
    assert_problem(fapi_now.client().get(path, params={"language": "?"}), 422, "REQUEST-INVALID")


# --- an update that removes a series --------------------------------------------------------

SDR: dict[str, Any] = {
    "key": "sdr",
    "kind": "value",
    "cadence": "daily",
    "dates": "observation",
    "name": {"en": "SDR", "es": "DEG"},
    "fields": ["rate"],
    "fieldNames": {"rate": {"en": "Rate"}},
}
LAST_SDR = {
    **SDR,
    "name": {"en": "IMF SDR", "es": "DEG del FMI"},
    "fieldNames": {"rate": {"en": "USD per SDR", "es": "USD por DEG"}},
}


def sdr(day: str, rate: float) -> dict[str, Any]:
    return {"kind": "value", "series": "sdr", "date": day, "fields": {"rate": rate}}


def with_a_removed_series(api: Api) -> StoredPlugin:
    """Version 1.0.0 writes the series `sdr`, 1.0.1 renames it (its last names) and writes one
    more, 1.1.0 leaves it out ("Versioning" 4: allowed with a warning, records kept) and runs."""
    plugin = stored(
        api,
        records=[value("2026-06-01", 58.1), sdr("2026-06-01", 1.3301), sdr("2026-06-03", 1.3355)],
        series=[*MANIFEST["series"], SDR],
    )
    plugin.update("1.0.1", series=[*MANIFEST["series"], LAST_SDR])
    plugin.write([value("2026-06-02", 58.4), sdr("2026-06-04", 1.3362)], TODAY)
    plugin.update("1.1.0", series=MANIFEST["series"])
    plugin.write([value("2026-06-05", 58.3)], TODAY)
    return plugin


def sdr_rows(days: list[dict[str, Any]]) -> dict[str, list[dict[str, Any]]]:
    """The rows of the series `sdr` by day."""
    return {
        day["date"]: rows
        for day in days
        if (rows := [r for s in day["sections"] for r in s["rows"] if r.get("series") == "sdr"])
    }


def test_an_update_that_removes_a_series_keeps_its_records_on_the_days_and_in_the_feed(
    fapi_now: Api,
) -> None:
    plugin = with_a_removed_series(fapi_now)
    reader = fapi_now.signed_in("reader@example.org")
    show(reader, plugin.id)
    records = reader.get(
        f"/api/v1/reader/plugins/{plugin.id}/records",
        params={"from": "2026-06-01", "to": "2026-06-15"},
    ).json()
    assert sum(1 for r in records["records"] if r["record"]["series"] == "sdr") == 3

    # The reader's days: the kept records with the last names the series had, between its
    # records the value in force; nothing after its newest record, since no version updates it.
    days = reader.get(
        "/api/v1/reader/days",
        params={"from": "2026-06-01", "to": "2026-06-15", "today": "2026-06-15"},
    ).json()
    (mine,) = [p["days"] for p in days["plugins"] if p["plugin"] == plugin.id]
    rows = sdr_rows(mine)
    assert sorted(rows) == ["2026-06-01", "2026-06-02", "2026-06-03", "2026-06-04"]
    assert [r["style"] for d in sorted(rows) for r in rows[d]] == [
        "normal", "in-force", "normal", "normal"
    ]  # fmt: skip
    (fourth,) = rows["2026-06-04"]
    assert fourth["label"] == "IMF SDR"
    assert [(f["label"], f["text"]) for f in fourth["figures"]] == [("USD per SDR", "1.34")]
    assert fourth["change"]["text"] == "+0.05%" and fourth["attribution"] == "Source: Example Bank"
    # Rule 3: after the approved version's own series.
    (first_day,) = mine[0]["sections"]
    assert [r["series"] for r in first_day["rows"]] == ["usd", "sdr"]
    spanish = reader.get(
        "/api/v1/reader/days",
        params={"from": "2026-06-04", "to": "2026-06-04", "today": "2026-06-15", "language": "es"},
    ).json()
    (es,) = [p["days"] for p in spanish["plugins"] if p["plugin"] == plugin.id]
    assert [r["label"] for r in sdr_rows(es)["2026-06-04"]] == ["DEG del FMI"]

    # The feeds: one event per kept record, the same words as the reader's days.
    public = events_of(
        fetch(fapi_now.client(), f"/api/v1/feeds/plugins/{plugin.id}.ics"), plugin.id
    )
    own = events_of(fetch(reader, new_feed(reader)), plugin.id)
    uids = {f"{plugin.id}/sdr/2026-06-0{n}@127.0.0.1" for n in (1, 3, 4)}
    assert uids <= set(public) and uids <= set(own)
    assert str(public[f"{plugin.id}/sdr/2026-06-04@127.0.0.1"]["SUMMARY"]) == (
        "IMF SDR · USD per SDR 1.34 · +0.05%"
    )
    api_rows = api_events(
        reader, plugin.id, TODAY - timedelta(days=62), TODAY + timedelta(days=366)
    )
    assert set(by_summary(public)) == set(api_rows)
    assert len(public) == len(own) == 6  # three dollar values and three kept SDR values


# --- the status rows' meaning ---------------------------------------------------------------


def test_a_failing_or_paused_plugin_is_noted_on_the_feed_and_on_today(fapi_now: Api) -> None:
    plugin = stored(fapi_now, records=[value("2026-06-10", 58.1)])
    path = f"/api/v1/feeds/plugins/{plugin.id}.ics"
    calendar = fetch(fapi_now.client(), path)
    assert f"{plugin.id}/status/2026-06-15@127.0.0.1" not in events_of(calendar, plugin.id)

    plugin.fail(TODAY)
    calendar = fetch(fapi_now.client(), path)
    note = events_of(calendar, plugin.id)[f"{plugin.id}/status/2026-06-15@127.0.0.1"]
    assert note.start == TODAY and note["SUMMARY"] == "Could not refresh since 2026-06-10"
    assert "Sample rates: Could not refresh since 2026-06-10" in str(calendar["DESCRIPTION"])
    reader = fapi_now.signed_in("reader@example.org")
    show(reader, plugin.id)
    days = reader.get(
        "/api/v1/reader/days",
        params={"from": "2026-06-15", "to": "2026-06-15", "today": "2026-06-15"},
    ).json()
    (mine,) = [p for p in days["plugins"] if p["plugin"] == plugin.id]
    assert mine["days"][0]["sections"][0]["rows"][-1]["note"] == str(note["SUMMARY"])

    plugin.pause()
    calendar = fetch(fapi_now.client(), path)
    note = events_of(calendar, plugin.id)[f"{plugin.id}/status/2026-06-15@127.0.0.1"]
    assert note["SUMMARY"] == "Not updating"
    assert "Sample rates: Not updating" in str(calendar["DESCRIPTION"])


def test_the_organization_default_shows_a_private_plugin_in_a_members_feed(fapi_now: Api) -> None:
    private = stored(fapi_now, "private")
    operator = fapi_now.signed_in("host@example.org", operator=True)
    owner = fapi_now.signed_in("owner@example.org")
    org = organization(owner, "Listed")
    assert set_readers(operator, private.id, organizations=[org]).status_code == 200
    path = new_feed(owner)
    assert events_of(fetch(owner, path), private.id) == {}
    default = owner.put(
        f"/api/v1/reader/organizations/{org}/plugins/{private.id}/shown", json={"shown": True}
    )
    assert default.status_code == 200, default.text
    assert len(events_of(fetch(owner, path), private.id)) == 9
