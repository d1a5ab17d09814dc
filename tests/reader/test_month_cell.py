"""The lines of a month cell (`reader.month_cell`), from rows `render_days` drew: what happened
that day first, one line per plug-in, values in force last or counted, and only the statuses
that say something is wrong."""

from __future__ import annotations

from typing import Any

from almanac.platform.contract.manifest import parse_manifest
from almanac.platform.reader import render_days
from almanac.platform.reader.month import month_cell


def manifest(plugin_id: str, series: list[dict[str, Any]]) -> Any:
    doc = {
        "contract": 1, "id": plugin_id, "name": {"en": plugin_id}, "version": "1.0.0",
        "timezone": "UTC", "audience": "public", "schedule": "0 9 * * *", "backfill": "all",
        "sources": [{"name": "s", "url": "https://example.org/s.csv"}], "series": series,
        "licence": {"holder": "Holder", "terms": None, "retain": "yes"},
    }  # fmt: skip
    result = parse_manifest(doc)
    assert result.manifest is not None, [p.message for p in result.problems]
    return result.manifest


def rates(count: int) -> list[dict[str, Any]]:
    return [
        {"key": f"r{n}", "kind": "value", "cadence": "daily", "dates": "observation",
         "name": {"en": f"Rate {n}"}, "fields": ["v"]}
        for n in range(count)
    ]  # fmt: skip


def sections(plugin: Any, records: list[dict[str, Any]], day: str, status: str = "running"):
    [drawn] = render_days(plugin, records, from_date=day, to_date=day, today="2026-06-10",
                          status=status)  # fmt: skip
    return drawn["sections"]


def value(series: str, day: str, v: float) -> dict[str, Any]:
    return {"kind": "value", "series": series, "date": day, "fields": {"v": v}}


def described(lines) -> list[tuple[str, str | None, int]]:  # type: ignore[no-untyped-def]
    return [(line.group, line.row and (line.row.get("label") or line.row["note"]), line.more)
            for line in lines]  # fmt: skip


def test_events_then_the_days_records_then_values_in_force_counted() -> None:
    many = manifest("many", rates(5))
    old = [value(f"r{n}", "2026-06-01", n) for n in range(5)]
    bank = manifest("bank", [
        {"key": "d", "kind": "event", "cadence": "irregular", "dates": "observation",
         "name": {"en": "Decision"}},
        *rates(3),
    ])  # fmt: skip
    today = [value(f"r{n}", "2026-06-03", n) for n in range(3)]
    events = [{"kind": "event", "series": "d", "id": x, "date": "2026-06-03", "state": "happened",
               "title": f"Meeting {x}"} for x in ("m1", "m2")]  # fmt: skip
    day = sections(many, old, "2026-06-03") + sections(bank, today + events, "2026-06-03")
    assert described(month_cell(day)) == [
        ("event", "Meeting m1", 1),
        ("record", "Rate 0", 2),
        ("in-force", None, 5),
    ]
    assert month_cell(day)[-1].words == "5 rates in force"


def test_one_value_in_force_is_its_row_and_a_failing_plugin_says_so() -> None:
    one = manifest("many", rates(1))
    day = sections(one, [value("r0", "2026-06-01", 1)], "2026-06-04", status="failing")
    assert described(month_cell(day)) == [
        ("in-force", "Rate 0", 0),
        ("status", "Could not refresh since 2026-06-01", 0),
    ]
    # Running: the last-rate status only repeats the lighter row, and the panel draws it.
    running = sections(one, [value("r0", "2026-06-01", 1)], "2026-06-04")
    assert [r["type"] for r in running[0]["rows"]] == ["value", "status"]
    assert described(month_cell(running)) == [("in-force", "Rate 0", 0)]
