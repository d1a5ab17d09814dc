"""A reader's pictures over HTTP on the real app, on PostgreSQL and SQLite: a series chart's
data against hand-counted days (rule 5's fill, rule 6's steps), the calendar as it stood at a
moment (cut off at the exact moment of a write), and a differential test: after several writes
with revisions, moves and withdrawals, the days as of each write's moment equal the days the
reader read right after that write."""

from __future__ import annotations

from datetime import date, timedelta
from typing import Any

import pytest
from sqlalchemy import Engine, select

from almanac.platform.store.tables import records
from tests.accounts.conftest import passwords  # noqa: F401
from tests.api.conftest import assert_problem, live_api, live_server  # noqa: F401
from tests.api.test_reader import MANIFEST, show, value
from tests.audience.helpers import T0, StoredPlugin, fresh_id
from tests.store.conftest import db_url, engine, migrated_postgres, sqlite_template  # noqa: F401

WINDOWED: dict[str, Any] = {
    **MANIFEST,
    "series": [
        {**MANIFEST["series"][0], "snapshot": {"back": "30d", "ahead": "0d"}},
        MANIFEST["series"][1],
    ],
}


def event(day: str, event_id: str, state: str, **more: Any) -> dict[str, Any]:
    return {"kind": "event", "series": "tpm", "id": event_id, "date": day, "state": state, **more}


@pytest.fixture
def scene(live_server, engine: Engine, passwords):  # noqa: F811
    with live_api(live_server, engine, passwords) as api:
        plugin = StoredPlugin(engine, {**WINDOWED, "id": fresh_id()}, T0).register().approve()
        reader = api.signed_in(f"{fresh_id('reader')}@example.org")
        show(reader, plugin.id)
        yield plugin, reader


def chart(reader, plugin: StoredPlugin, series: str, **params: str) -> dict[str, Any]:
    answer = reader.get(f"/api/v1/reader/plugins/{plugin.id}/series/{series}/chart", params=params)
    assert answer.status_code == 200, answer.text
    return answer.json()


def test_a_chart_fills_days_as_the_reader_sees_them(scene) -> None:
    plugin, reader = scene
    plugin.write(
        [value("2026-03-02", 58.1), value("2026-03-04", 58.3), value("2026-03-09", 58.9),
         event("2026-01-10", "a", "happened", value=6.5),
         event("2026-03-05", "b", "happened", value=6.25),
         event("2026-04-10", "c", "scheduled", title="April decision")],
        date(2026, 3, 9),
    )  # fmt: skip
    drawn = chart(reader, plugin, "usd", range="month", today="2026-03-07")
    assert (drawn["first"], drawn["last"]) == ("2026-02-05", "2026-03-07")
    assert len(drawn["points"]) == 31 and drawn["field"] == "buy"
    by_day = {p["date"]: p for p in drawn["points"]}
    # Hand-counted: nothing before the first record; a record's own day; the value in force
    # between records; the record of 03-09 is after the reader's today, so 03-05 to 03-07 are
    # in force (not the last rate) and nothing is drawn after today.
    assert all(by_day[f"2026-02-{d:02d}"]["value"] is None for d in range(5, 29))
    assert by_day["2026-03-01"]["value"] is None
    assert by_day["2026-03-02"] | {} == {
        "date": "2026-03-02", "value": 58.1, "text": "58.10", "spoken": "58.10 Dominican pesos",
        "style": "normal", "note": None, "change": None,
    }  # fmt: skip
    assert (by_day["2026-03-03"]["style"], by_day["2026-03-03"]["note"]) == (
        "in-force",
        "Rate of 2026-03-02",
    )
    assert by_day["2026-03-04"]["change"] == "+0.34%"
    assert [by_day[f"2026-03-0{d}"]["style"] for d in (5, 6, 7)] == ["in-force"] * 3
    assert "March 2026" in drawn["title"] and drawn["title"].startswith("Dollar, buy")
    later = chart(reader, plugin, "usd", range="month", today="2026-03-12")
    assert [p["style"] for p in later["points"][-3:]] == ["last"] * 3
    assert later["points"][-1]["note"] == "Last rate 2026-03-09"
    everything = chart(reader, plugin, "usd", range="all", today="2026-03-12")
    assert everything["first"] == "2026-03-02" and len(everything["points"]) == 11
    # An event series: the step starts at the value in force on the first day, happened
    # values in the range, the scheduled event marked ahead of today.
    steps = chart(reader, plugin, "tpm", range="month", today="2026-03-15")
    assert steps["start"]["date"] == "2026-01-10" and steps["start"]["value"] == 6.5
    assert [(m["date"], m["state"], m["value"]) for m in steps["marks"]] == [
        ("2026-03-05", "happened", 6.25),
        ("2026-04-10", "scheduled", None),
    ]
    assert steps["marks"][1]["label"] == "April decision"
    for params, field in [({"range": "week"}, "range"), ({"field": "sell"}, "field")]:
        wrong = reader.get(f"/api/v1/reader/plugins/{plugin.id}/series/usd/chart", params=params)
        assert assert_problem(wrong, 422, "REQUEST-INVALID")["detail"].startswith(field)
    missing = reader.get(f"/api/v1/reader/plugins/{plugin.id}/series/nope/chart")
    assert_problem(missing, 404, "NOT-FOUND")


def days_now(reader, first: str, last: str, today: str, **more: str) -> dict[str, Any]:
    params = {"from": first, "to": last, "today": today, **more}
    answer = reader.get("/api/v1/reader/days", params=params)
    assert answer.status_code == 200, answer.text
    return answer.json()


def since_of(engine: Engine, plugin: StoredPlugin, day: str) -> Any:  # noqa: F811
    with engine.connect() as conn:
        return conn.execute(
            select(records.c.since).where(
                records.c.plugin_id == plugin.id, records.c.date == date.fromisoformat(day)
            )
        ).scalar_one()


def test_the_days_as_of_each_write_equal_the_days_read_then(scene, engine: Engine) -> None:  # noqa: F811
    plugin, reader = scene
    window = ("2026-05-01", "2026-06-15")
    writes: list[tuple[list[dict[str, Any]], str]] = [
        ([value("2026-05-28", 58.0), value("2026-05-29", 58.1), value("2026-06-01", 58.2),
          event("2026-06-03", "d1", "scheduled", title="June decision")], "2026-06-01"),
        # a revision, and the event moved to another date
        ([value("2026-05-28", 58.0), value("2026-05-29", 58.15), value("2026-06-01", 58.2),
          value("2026-06-02", 58.4),
          event("2026-06-04", "d1", "scheduled", title="June decision")], "2026-06-02"),
        # 05-28 missed (1), the event happened
        ([value("2026-05-29", 58.15), value("2026-06-01", 58.2), value("2026-06-02", 58.4),
          event("2026-06-04", "d1", "happened", value=6.0)], "2026-06-04"),
        ([value("2026-05-29", 58.15), value("2026-06-01", 58.2), value("2026-06-02", 58.45),
          event("2026-06-04", "d1", "happened", value=6.0)], "2026-06-05"),
        # 05-28 missed a third time: withdrawn
        ([value("2026-05-29", 58.15), value("2026-06-01", 58.2), value("2026-06-02", 58.45),
          event("2026-06-04", "d1", "happened", value=6.0)], "2026-06-06"),
    ]  # fmt: skip
    # Besides the whole window, two narrow ones whose days draw on records before them (the
    # value in force, the change from the newest before, the happened value before).
    windows = [window, ("2026-05-30", "2026-05-31"), ("2026-06-05", "2026-06-06")]
    seen: list[tuple[Any, list[Any]]] = []
    for batch, today in writes:
        plugin.write(batch, date.fromisoformat(today))
        moment = plugin.moment
        seen.append(
            (moment, [days_now(reader, *w, "2026-06-06")["plugins"][0]["days"] for w in windows])
        )
    assert seen[0][1] != seen[-1][1]
    for moment, then in seen:
        for w, days in zip(windows, then, strict=True):
            stood = days_now(reader, *w, "2026-06-06", as_of=moment.isoformat())
            assert stood["plugins"][0]["days"] == days, (moment, w)
    # The cut-off is the exact moment of a write: one microsecond before the revision the
    # day shows the old figure, at the moment the new one.
    revised_at = since_of(engine, plugin, "2026-05-29")
    before = revised_at - timedelta(microseconds=1)
    for at, buy in [(before, 58.1), (revised_at, 58.15)]:
        stood = days_now(reader, "2026-05-29", "2026-05-29", "2026-06-06", as_of=at.isoformat())
        rows = stood["plugins"][0]["days"][0]["sections"][0]["rows"]
        assert rows[0]["figures"][0]["value"] == buy, at
    # As of the first write, the revised records of the window are listed with their changes.
    first_moment = seen[0][0]
    stood = days_now(reader, *window, "2026-06-06", as_of=first_moment.isoformat())
    revised = {(r["series"], r["date"], r["key"]): r for r in stood["plugins"][0]["revised"]}
    changes = revised[("usd", "2026-05-29", "")]["changes"]
    assert [(c["before"]["fields"]["buy"], c["after"]["fields"]["buy"]) for c in changes] == [
        (58.1, 58.15)
    ]
    assert changes[0]["when"].startswith(revised_at.isoformat()[:19])
    assert changes[0]["run"] > 0
    withdrawn = revised[("usd", "2026-05-28", "")]["changes"]
    assert withdrawn[-1]["after"] is None and withdrawn[-1]["before"]["fields"]["buy"] == 58.0
    moved = revised[("tpm", "2026-06-03", "d1")]["changes"]
    assert moved[0]["after"]["movedTo"] == "2026-06-04"
    assert ("tpm", "2026-06-04", "d1") in revised  # new on its date since, then happened
    naive = reader.get(
        "/api/v1/reader/days",
        params={"from": window[0], "to": window[1], "as_of": "2026-06-01T12:00"},
    )
    assert assert_problem(naive, 422, "REQUEST-INVALID")["detail"].startswith("as_of:")
