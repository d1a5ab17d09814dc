"""Days kept by `read_days_json`: the same bytes as drawing anew, stale the moment a write
changes the plug-in's records (in any process: the stamp is read from the store), and never a
way around who may read and who shows a plug-in. On PostgreSQL and SQLite."""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import UTC, date, datetime, timedelta
from typing import Any

import pytest
from sqlalchemy import Engine
from sqlalchemy.orm import Session

from almanac.platform import accounts
from almanac.platform.accounts import Account, Argon2Parameters, Passwords
from almanac.platform.audience import (
    compact_json,
    read_days,
    read_days_json,
    set_reader_list,
    set_shown,
)
from almanac.platform.audience.days import DRAWN_DAYS
from almanac.platform.store.engine import make_engine, write_transaction
from almanac.platform.store.held import decide_held
from almanac.platform.store.moves import record_retain_answer
from almanac.platform.store.retention import purge
from tests.audience.helpers import T0, StoredPlugin, fresh_id

MANIFEST: dict[str, Any] = {
    "contract": 1,
    "name": {"en": "Sample rates"},
    "version": "1.0.0",
    "timezone": "UTC",
    "audience": "public",
    "schedule": "0 9 * * *",
    "backfill": "all",
    "sources": [{"name": "rates", "url": "https://example.org/rates.csv"}],
    "series": [
        {"key": "usd", "kind": "value", "cadence": "daily", "dates": "observation",
         "name": {"en": "Dollar"}, "unit": "DOP", "fields": ["buy"]},
    ],
    "licence": {"holder": "Example Bank", "terms": None, "retain": "yes"},
}  # fmt: skip
FIRST, LAST = date(2026, 6, 1), date(2026, 6, 10)
NOW = datetime.now(UTC)


@pytest.fixture(autouse=True)
def nothing_kept() -> Iterator[None]:
    DRAWN_DAYS.clear()
    yield
    DRAWN_DAYS.clear()


def value(day: str, buy: float) -> dict[str, Any]:
    return {"kind": "value", "series": "usd", "date": day, "fields": {"buy": buy}}


FAST = Passwords(Argon2Parameters.fast())


def reader(engine: Engine) -> Account:
    """A new verified account."""
    with Session(engine, expire_on_commit=False) as db:
        address = f"{fresh_id('reader')}@example.org"
        made = accounts.sign_up(db, address, "correct horse battery", FAST, NOW)
        account = accounts.verify_email(db, made.verification_token, NOW)
        db.commit()
        return account


def show(engine: Engine, account: Account, plugin: StoredPlugin, shown: bool = True) -> None:
    with Session(engine) as db:
        set_shown(db, account, {f"plugins.{plugin.id}.shown": shown}, NOW)
        db.commit()


def plugin_with(engine: Engine, records: list[dict[str, Any]], **doc: Any) -> StoredPlugin:
    plugin = StoredPlugin(engine, {**MANIFEST, "id": fresh_id(), **doc}, T0).register().approve()
    plugin.write(records, date(2026, 6, 5))
    return plugin


def answer(engine: Engine, account: Account, today: date = LAST) -> dict[str, bytes]:
    """The reader's days as kept: plug-in id to its days' JSON; checked against drawing anew."""
    with Session(engine) as db:
        kept = read_days_json(db, account, first=FIRST, last=LAST, today=today, language="en")
        drawn = read_days(db, account, first=FIRST, last=LAST, today=today, language="en")
    assert [(k.plugin, k.status, k.notice) for k in kept] == [
        (d.plugin, d.status, d.notice) for d in drawn
    ]
    assert [k.days_json for k in kept] == [compact_json(d.days) for d in drawn]
    return {k.plugin: k.days_json for k in kept}


def values_shown(days_json: bytes) -> list[float]:
    """The figures of the days' own value rows (not a value in force or the last one)."""
    return [
        row["figures"][0]["value"]
        for day in json.loads(days_json)
        for section in day["sections"]
        for row in section["rows"]
        if row["type"] == "value" and row["style"] == "normal"
    ]


def test_a_runs_new_record_shows_at_once_even_written_by_another_process(engine: Engine) -> None:
    plugin = plugin_with(engine, [value("2026-06-02", 58.0)])
    account = reader(engine)
    show(engine, account, plugin)
    first = answer(engine, account)
    assert len(DRAWN_DAYS) == 1 and answer(engine, account) == first
    assert values_shown(first[plugin.id]) == [58.0]
    # A run in another process: its own engine, the same store.
    elsewhere = make_engine(str(engine.url.render_as_string(hide_password=False)))
    try:
        plugin.engine = elsewhere
        plugin.write([value("2026-06-02", 58.0), value("2026-06-03", 59.5)], date(2026, 6, 5))
    finally:
        plugin.engine = engine
        elsewhere.dispose()
    assert values_shown(answer(engine, account)[plugin.id]) == [58.0, 59.5]


def test_a_failed_run_changes_the_status_row_of_kept_days(engine: Engine) -> None:
    plugin = plugin_with(engine, [value("2026-06-02", 58.0)])
    account = reader(engine)
    show(engine, account, plugin)
    assert b'"status":"last-rate"' in answer(engine, account)[plugin.id]
    plugin.fail(date(2026, 6, 6))
    again = answer(engine, account)[plugin.id]
    assert b'"status":"could-not-refresh"' in again and b'"status":"last-rate"' not in again


def test_accepted_removals_and_a_purge_show_at_once(engine: Engine) -> None:
    series = {**MANIFEST["series"][0], "snapshot": {"back": "30d", "ahead": "0d"}}
    may_2026 = [value(f"2026-05-{n}", 40.0 + n) for n in range(18, 32)]
    june = [value(f"2026-06-0{n}", 50.0 + n) for n in range(1, 5)]
    plugin = plugin_with(engine, may_2026 + june, series=[series])
    account = reader(engine)
    show(engine, account, plugin)
    assert values_shown(answer(engine, account)[plugin.id]) == [51.0, 52.0, 53.0, 54.0]
    # Three runs printing only June 1: the third miss would withdraw 17 records of the series
    # (more than 10), so the run is Held, and accepting the removals withdraws them.
    for day in (6, 7, 8):
        plugin.write([june[0]], date(2026, 6, day))
    assert values_shown(answer(engine, account)[plugin.id]) == [51.0, 52.0, 53.0, 54.0]
    with write_transaction(engine) as conn:
        assert decide_held(conn, plugin.id, accept=True, by="host@example.org", now=NOW) == 17
    assert values_shown(answer(engine, account)[plugin.id]) == [51.0]
    with write_transaction(engine) as conn:
        record_retain_answer(conn, plugin.id, "no", by="host@example.org", now=NOW)
        purge(conn, plugin.id, typed_id=plugin.id, dry_run=False, by="host@example.org", now=NOW)
    assert values_shown(answer(engine, account)[plugin.id]) == []


def test_kept_days_never_reach_a_reader_who_may_not_read_or_does_not_show_them(
    engine: Engine,
) -> None:
    private = plugin_with(engine, [value("2026-06-02", 58.0)], audience="private")
    listed = reader(engine)
    with Session(engine) as db:
        set_reader_list(db, private.id, [listed.email], [], by="host@example.org", now=NOW)
        db.commit()
    show(engine, listed, private)
    assert private.id in answer(engine, listed)
    assert len(DRAWN_DAYS) == 1
    stranger = reader(engine)
    assert private.id not in answer(engine, stranger)
    hiding = reader(engine)
    with Session(engine) as db:
        set_reader_list(
            db, private.id, [listed.email, hiding.email], [], by="host@example.org", now=NOW
        )
        db.commit()
    show(engine, hiding, private, shown=False)
    assert private.id not in answer(engine, hiding)
    # Off the list: the kept days are not read for the former reader either.
    with Session(engine) as db:
        set_reader_list(db, private.id, [hiding.email], [], by="host@example.org", now=NOW)
        db.commit()
    assert private.id not in answer(engine, listed)
    # Taken down: the public message and no records, whatever was kept.
    show(engine, hiding, private)
    assert values_shown(answer(engine, hiding)[private.id]) == [58.0]
    private.take_down("Taken down: the holder withdrew permission.")
    with Session(engine) as db:
        [entry] = read_days_json(db, hiding, first=FIRST, last=LAST, today=LAST, language="en")
    assert entry.notice == "Taken down: the holder withdrew permission."
    assert values_shown(entry.days_json) == [] and b'"sections":[]' in entry.days_json


def test_days_are_kept_per_range_today_and_language(engine: Engine) -> None:
    plugin = plugin_with(engine, [value("2026-06-02", 58.0)], name={"en": "Rates", "es": "Tasas"})
    account = reader(engine)
    show(engine, account, plugin)
    english = answer(engine, account)[plugin.id]
    with Session(engine) as db:
        [spanish] = read_days_json(db, account, first=FIRST, last=LAST, today=LAST, language="es")
        [earlier] = read_days_json(
            db, account, first=FIRST, last=LAST, today=LAST - timedelta(days=5), language="en"
        )
    assert b'"name":"Rates"' in english and b'"name":"Tasas"' in spanish.days_json
    assert earlier.days_json != english and b"2026-06-05" in earlier.days_json


def test_an_update_that_removes_a_series_keeps_drawing_its_records_by_their_last_names(
    engine: Engine,
) -> None:
    euro = {**MANIFEST["series"][0], "key": "eur", "name": {"en": "Euro"}, "unit": "EUR"}
    plugin = plugin_with(engine, [], series=[*MANIFEST["series"], euro])
    plugin.write(
        [value("2026-06-02", 58.0), {**value("2026-06-02", 64.1), "series": "eur"}],
        date(2026, 6, 5),
    )
    plugin.update("1.1.0", series=MANIFEST["series"])
    plugin.write([value("2026-06-04", 58.5)], date(2026, 6, 5))
    # A later version declaring the key again, never approved, names nothing.
    plugin.doc.update(version="1.2.0", series=[*MANIFEST["series"], {**euro, "name": {"en": "?"}}])
    plugin.register({**plugin.files, "fetch.mjs": b"// 1.2.0\n"})
    account = reader(engine)
    show(engine, account, plugin)

    days = json.loads(answer(engine, account)[plugin.id])
    euros = {
        day["date"]: (row["label"], row["style"], row["figures"][0]["spoken"])
        for day in days
        for section in day["sections"]
        for row in section["rows"]
        if row.get("series") == "eur"
    }
    # Its own day, and nothing after its newest record: no version updates it any more.
    assert euros == {"2026-06-02": ("Euro", "normal", "64.10 euros")}
    assert answer(engine, account) == answer(engine, account)  # kept and read again alike
    # The approved version's series still runs to the reader's today.
    assert [d["sections"][0]["rows"][0]["style"] for d in days if d["date"] >= "2026-06-05"] == [
        "last"
    ] * 6
