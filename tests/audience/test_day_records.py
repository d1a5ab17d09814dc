"""`day_records` reads only the records around the range (one statement for all plug-ins), yet
the days drawn from them equal the days drawn from every stored record: on PostgreSQL (LATERAL)
and on SQLite (the portable form)."""

from __future__ import annotations

from datetime import date, timedelta

from sqlalchemy import Engine

from almanac.platform.audience.days import day_records
from almanac.platform.audience.visibility import ReadablePlugin
from almanac.platform.reader import from_stored, render_days
from almanac.platform.store.reading import records_between
from tests.audience.helpers import T0, StoredPlugin, example_plugin, example_records, fresh_id

EVENTS = {
    "contract": 1,
    "id": "x",
    "name": {"en": "Decisions"},
    "version": "1.0.0",
    "timezone": "Europe/London",
    "audience": "public",
    "schedule": "0 9 * * *",
    "backfill": "all",
    "sources": [{"name": "d", "url": "https://example.org/d.json"}],
    "series": [
        {"key": "rate", "kind": "event", "cadence": "irregular", "dates": "observation",
         "name": {"en": "Bank rate"}, "unit": "%"},
        {"key": "cpi", "kind": "value", "cadence": "monthly", "dates": "publication",
         "name": {"en": "Prices"}, "fields": ["index", "yoy"], "change": "yoy"},
    ],
    "licence": {"holder": "Example", "terms": None, "retain": "yes"},
}  # fmt: skip


def readable(plugin: StoredPlugin) -> ReadablePlugin:
    return ReadablePlugin(
        plugin.id, "approved", "public", plugin.version_id, plugin.doc, False, None
    )


def assert_same_days(engine: Engine, plugin: StoredPlugin, first: date, last: date, today: date):
    with engine.connect() as conn:
        needed = day_records(conn, [readable(plugin)], first, last, today)
        every = [
            from_stored(r)
            for r in records_between(conn, [plugin.id], date(1900, 1, 1), date(2999, 1, 1))
        ]
    for language in ("en", "de"):
        kwargs = {"from_date": first, "to_date": last, "today": today, "language": language}
        drawn = render_days(plugin.manifest, needed.get(plugin.id, []), **kwargs)
        assert drawn == render_days(plugin.manifest, every, **kwargs), (first, last, today)
    return needed.get(plugin.id, [])


def test_example_rates_drawn_from_the_few_records_equal_all_records(engine: Engine) -> None:
    plugin = example_plugin(engine, "ecb-reference-rates", T0)
    records, today = example_records("ecb-reference-rates")
    plugin.write(records, today)
    for first, days, reader_today in [
        (today - timedelta(days=20), 10, today),
        (today - timedelta(days=5), 62, today),
        (today - timedelta(days=400), 30, today),
        (today + timedelta(days=3), 5, today + timedelta(days=6)),
        (today - timedelta(days=40), 62, today - timedelta(days=30)),
    ]:
        needed = assert_same_days(
            engine, plugin, first, first + timedelta(days=days - 1), reader_today
        )
        assert len(needed) < len(records)


def test_events_and_publication_values_drawn_from_the_few_records_equal_all_records(
    engine: Engine,
) -> None:
    plugin = StoredPlugin(engine, {**EVENTS, "id": fresh_id()}, T0).register().approve()
    batch = []
    start = date(2026, 1, 5)
    for n in range(0, 150, 7):
        day = (start + timedelta(days=n)).isoformat()
        figure = {"value": 4 + n / 100} if n % 3 else {}
        batch.append({"kind": "event", "series": "rate", "id": f"m{n}", "date": day,
                      "state": "happened", **figure})  # fmt: skip
        batch.append({"kind": "value", "series": "cpi", "date": day, "period": f"P{n}",
                      "fields": {"index": 100 + n, "yoy": 2 + n / 50}})  # fmt: skip
    batch.append({"kind": "event", "series": "rate", "id": "next", "date": "2026-07-30",
                  "state": "scheduled", "title": "Next decision"})  # fmt: skip
    plugin.write(batch, date(2026, 6, 1))
    moved = [r for r in batch if r.get("id") != "next"]
    moved.append({**batch[-1], "date": "2026-08-06"})
    plugin.write(moved, date(2026, 6, 2))
    for first, last, today in [
        (date(2026, 3, 1), date(2026, 3, 20), date(2026, 6, 2)),
        (date(2026, 5, 20), date(2026, 7, 20), date(2026, 6, 2)),
        (date(2026, 6, 30), date(2026, 8, 10), date(2026, 6, 2)),
        (date(2025, 12, 1), date(2026, 1, 10), date(2026, 1, 8)),
    ]:
        assert_same_days(engine, plugin, first, last, today)
