"""The run context (Run context table) and fixtures/context.json rules."""

from __future__ import annotations

import copy
import json
from datetime import UTC, date, datetime, timedelta, timezone

import pytest

from almanac.platform.contract.context import (
    build_run_context,
    check_fixture_context,
    check_run_context,
    run_context_from_fixture,
)
from almanac.platform.contract.manifest import Manifest, parse_manifest

MANIFEST = {
    "contract": 1,
    "id": "dop-rates",
    "name": {"en": "DOP rates"},
    "version": "1.0.0",
    "timezone": "America/Santo_Domingo",
    "audience": "public",
    "schedule": "0 18 * * 1-5",
    "backfill": "2y",
    "sources": [
        {"name": "rates", "url": "https://www.bancentral.gov.do/rates.xlsx"},
        {"name": "calendar", "url": "https://www.bancentral.gov.do/calendar.json"},
    ],
    "series": [
        {"key": "usd", "kind": "value", "cadence": "business-day", "dates": "observation",
         "name": {"en": "USD"}, "unit": "DOP", "fields": ["buy", "sell"]},
        {"key": "meetings", "kind": "event", "cadence": "irregular", "dates": "observation",
         "name": {"en": "Policy meetings"}},
    ],
    "licence": {"holder": "Banco Central", "terms": None, "retain": "yes"},
}  # fmt: skip


def manifest(**changes: object) -> Manifest:
    doc = copy.deepcopy(MANIFEST)
    doc.update(changes)
    result = parse_manifest(doc)
    assert result.manifest is not None, result.problems
    return result.manifest


def codes(problems) -> list[tuple[str, str | None]]:
    return sorted((p.code, p.path) for p in problems)


def test_first_run_context() -> None:
    m = manifest()
    ctx = build_run_context(
        m, now=datetime(2026, 3, 10, 3, 30, 15, 999, tzinfo=UTC), series_state={}
    )
    assert ctx == {
        "contract": 1,
        "plugin": "dop-rates",
        "now": "2026-03-10T03:30:15Z",
        "today": "2026-03-09",  # 23:30 the evening before in Santo Domingo (UTC-4)
        "backfill": True,
        "backfillFrom": "2024-03-09",
        "sources": {"rates": "/sources/rates", "calendar": "/sources/calendar"},
        "series": {"usd": {"last": None, "count": 0}, "meetings": {"last": None, "count": 0}},
    }
    assert len(ctx["now"]) <= 40
    assert json.loads(json.dumps(ctx)) == ctx
    assert check_run_context(ctx, m) == []


def test_later_run_context_and_zone_ahead_of_utc() -> None:
    m = manifest(timezone="Australia/Lord_Howe", backfill="all")
    ctx = build_run_context(
        m,
        now=datetime(2026, 1, 1, 13, 0, tzinfo=UTC),
        series_state={"usd": (date(2025, 12, 31), 480)},
    )
    assert ctx["today"] == "2026-01-02"  # +11:00 in January
    assert ctx["backfill"] is False
    assert ctx["backfillFrom"] is None
    assert ctx["series"] == {
        "usd": {"last": "2025-12-31", "count": 480},
        "meetings": {"last": None, "count": 0},
    }
    assert check_run_context(ctx, m) == []


def test_backfill_window_in_days_and_an_explicit_backfill_flag() -> None:
    m = manifest(backfill="30d")
    ctx = build_run_context(
        m, now=datetime(2026, 3, 1, 12, tzinfo=UTC), series_state={}, backfill=False
    )
    assert ctx["backfillFrom"] == "2026-01-30"
    assert ctx["backfill"] is False


def test_leap_day_year_window() -> None:
    m = manifest(backfill="1y")
    ctx = build_run_context(m, now=datetime(2028, 2, 29, 16, tzinfo=UTC), series_state={})
    assert ctx["backfillFrom"] == "2027-02-28"
    assert check_run_context(ctx, m) == []


def test_build_refuses_naive_now_and_impossible_state() -> None:
    m = manifest()
    with pytest.raises(ValueError, match="aware"):
        build_run_context(m, now=datetime(2026, 1, 1), series_state={})
    with pytest.raises(ValueError, match="usd"):
        build_run_context(
            m, now=datetime(2026, 1, 1, tzinfo=UTC), series_state={"usd": (date(2026, 1, 5), 3)}
        )


@pytest.fixture
def good() -> tuple[dict, Manifest]:
    m = manifest()
    ctx = build_run_context(
        m, now=datetime(2026, 6, 1, 22, tzinfo=UTC), series_state={"usd": (date(2026, 5, 29), 10)}
    )
    return ctx, m


@pytest.mark.parametrize(
    ("change", "expected"),
    [
        ({"today": "2026-06-02"}, [("PLG-RECORD-TODAY", "today")]),
        ({"today": "2026-6-1"}, [("PLG-RECORD-TODAY", "today")]),
        ({"today": None}, [("PLG-RECORD-TODAY", "today")]),
        ({"today": "2026-02-30"}, [("PLG-RECORD-TODAY", "today")]),
        ({"now": "2026-06-01T18:00:00-04:00"}, [("PLG-CONTEXT-INVALID", "now")]),
        ({"now": "2026-06-01 22:00:00Z"}, [("PLG-CONTEXT-INVALID", "now")]),
        ({"now": "2026-06-01T22:00:00.123456Z"}, []),
        ({"contract": True}, [("PLG-CONTEXT-INVALID", "contract")]),
        ({"plugin": "other"}, [("PLG-CONTEXT-INVALID", "plugin")]),
        ({"backfill": "no"}, [("PLG-CONTEXT-INVALID", "backfill")]),
        ({"backfillFrom": "2024-06-02"}, [("PLG-CONTEXT-INVALID", "backfillFrom")]),
        ({"backfillFrom": None}, [("PLG-CONTEXT-INVALID", "backfillFrom")]),
        ({"extra": 1}, [("PLG-CONTEXT-INVALID", "extra")]),
        ({"sources": {"rates": "/tmp/rates"}}, [("PLG-CONTEXT-INVALID", "sources")]),
        (
            {"series": {"usd": {"last": "2026-05-29", "count": 10}}},
            [("PLG-CONTEXT-INVALID", "series.meetings")],
        ),
        (
            {
                "series": {
                    "usd": {"last": "2026-06-02", "count": 10},
                    "meetings": {"last": None, "count": 0},
                }
            },
            [("PLG-CONTEXT-INVALID", "series.usd.last")],
        ),
        (
            {
                "series": {
                    "usd": {"last": None, "count": -1},
                    "meetings": {"last": None, "count": 0},
                }
            },
            [("PLG-CONTEXT-INVALID", "series.usd.count")],
        ),
        (
            {
                "series": {
                    "usd": {"last": "2026-05-01", "count": 0},
                    "meetings": {"last": None, "count": 0},
                    "gone": {"last": None, "count": 0},
                }
            },
            [("PLG-CONTEXT-INVALID", "series.gone"), ("PLG-CONTEXT-INVALID", "series.usd")],
        ),
    ],
)
def test_run_context_faults(good, change: dict, expected: list) -> None:
    ctx, m = good
    assert ctx["today"] == "2026-06-01"
    ctx.update(change)
    assert codes(check_run_context(ctx, m)) == expected


def test_missing_keys_and_non_objects(good) -> None:
    ctx, m = good
    del ctx["today"], ctx["series"]
    assert codes(check_run_context(ctx, m)) == [
        ("PLG-CONTEXT-INVALID", "series"),
        ("PLG-RECORD-TODAY", "today"),
    ]
    assert codes(check_run_context([ctx], m)) == [("PLG-CONTEXT-INVALID", None)]
    # backfillFrom is optional
    ctx, m = good
    ctx = build_run_context(m, now=datetime(2026, 6, 1, 22, tzinfo=UTC), series_state={})
    del ctx["backfillFrom"]
    assert check_run_context(ctx, m) == []


def test_fixture_context_rules() -> None:
    m = manifest()
    assert check_fixture_context({"now": "2026-06-02T01:00:00Z", "today": "2026-06-01"}, m) == []
    assert (
        check_fixture_context(
            '{"now": "2026-06-01T21:00:00-04:00", "today": "2026-06-01", "backfill": false,'
            ' "series": {"usd": {"last": "2026-05-29", "count": 3}}}',
            m,
        )
        == []
    )
    bad = [
        ({"now": "2026-06-02T01:00:00Z", "today": "2026-06-02"}, "today"),
        ({"now": "2026-06-02", "today": "2026-06-01"}, "now"),
        ({"today": "2026-06-01"}, "now"),
        ({"now": "2026-06-02T01:00:00Z"}, "today"),
        ({"now": "2026-06-02T01:00:00Z", "today": "2026-06-01", "sources": {}}, "sources"),
        (
            {
                "now": "2026-06-02T01:00:00Z",
                "today": "2026-06-01",
                "series": {"eur": {"last": None, "count": 0}},
            },
            "series.eur",
        ),
        (
            {
                "now": "2026-06-02T01:00:00Z",
                "today": "2026-06-01",
                "series": {"usd": {"last": "2026-06-05", "count": 1}},
            },
            "series.usd.last",
        ),
    ]
    for fixture, path in bad:
        assert codes(check_fixture_context(fixture, m)) == [("PLG-FIXTURE-CONTEXT-INVALID", path)]
    assert codes(check_fixture_context(b"{not json", m)) == [("PLG-FIXTURE-CONTEXT-INVALID", None)]
    assert codes(check_fixture_context("[]", m)) == [("PLG-FIXTURE-CONTEXT-INVALID", None)]


def test_run_context_from_fixture_is_a_valid_run_context() -> None:
    m = manifest()
    fixture = {
        "now": "2026-06-01T21:00:00-04:00",
        "today": "2026-06-01",
        "series": {"usd": {"last": "2026-05-29", "count": 3}},
    }
    ctx = run_context_from_fixture(fixture, m)
    assert ctx["now"] == "2026-06-02T01:00:00Z"
    assert ctx["today"] == "2026-06-01"
    assert ctx["backfill"] is False
    assert check_run_context(ctx, m) == []


def test_today_follows_the_zone_across_a_clock_change() -> None:
    m = manifest(timezone="Europe/Berlin")
    before = datetime(2026, 10, 24, 22, 30, tzinfo=UTC)  # 00:30 CEST on the 25th
    assert build_run_context(m, now=before, series_state={})["today"] == "2026-10-25"
    after = datetime(2026, 10, 25, 22, 30, tzinfo=timezone(timedelta(0)))  # 23:30 CET
    assert build_run_context(m, now=after, series_state={})["today"] == "2026-10-25"


def test_series_state_of_the_records_before_a_case_is_what_its_context_says() -> None:
    # Each example's later-run case states the series of the fixture records before it; the
    # state read from those records (as `almanac room run --records` reads it) is the same.
    from almanac.platform.contract.context import series_state_of_records
    from tests.conftest import REPO

    checked = 0
    for case in sorted((REPO / "examples").glob("*/fixtures/runs/*/context.json")):
        folder = case.parents[3]
        stated = json.loads(case.read_text()).get("series")
        if not stated:
            continue
        m = parse_manifest((folder / "plugin.json").read_bytes()).manifest
        assert m is not None
        lines = (folder / "fixtures" / "records.jsonl").read_text().splitlines()
        today = date.fromisoformat(json.loads(case.read_text())["today"])
        state = series_state_of_records(m, (json.loads(line) for line in lines), today)
        as_json = {
            k: {"last": last.isoformat() if last else None, "count": n}
            for k, (last, n) in state.items()
        }
        assert as_json == stated, case
        checked += 1
    assert checked >= 3
