"""Benchmark: the record-batch check against plain `json.loads` of the same lines.

Builds 250,000 mixed lines (value records with 1 to 16 fields, events, items) for a manifest
with several series, times `check_batch` and a plain `json.loads` of every line in the same run
(best of 3 each, interleaved) and prints both and their ratio. Goal: the check within 4x of
json.loads.

Run: .venv/bin/python tests/benchmarks/bench_records.py
"""

from __future__ import annotations

import json
import random
import time
from datetime import date, timedelta

from almanac.platform.contract.manifest import parse_manifest
from almanac.platform.contract.records import MAX_RECORDS, check_batch

TODAY = date(2026, 11, 20)


def manifest_document() -> dict:
    series = []
    for width in (1, 2, 4, 8, 16):
        series.append(
            {
                "key": f"rates-{width}",
                "kind": "value",
                "cadence": "business-day",
                "dates": "observation",
                "name": {"en": f"Rates {width}"},
                "fields": [f"f{index}" for index in range(width)],
            }
        )
    series.append(
        {
            "key": "cpi",
            "kind": "value",
            "cadence": "monthly",
            "dates": "publication",
            "name": {"en": "Consumer prices"},
            "fields": ["index", "yoy"],
        }
    )
    series.append(
        {
            "key": "meetings",
            "kind": "event",
            "cadence": "irregular",
            "dates": "observation",
            "name": {"en": "Meetings"},
            "unit": "%",
        }
    )
    series.append(
        {
            "key": "press",
            "kind": "item",
            "cadence": "irregular",
            "dates": "publication",
            "name": {"en": "Press releases"},
        }
    )
    return {
        "contract": 1,
        "id": "bench-plugin",
        "name": {"en": "Benchmark"},
        "version": "1.0.0",
        "timezone": "Europe/Berlin",
        "audience": "public",
        "schedule": "0 16 * * 1-5",
        "backfill": "all",
        "sources": [{"name": "data", "url": "https://data.example.org/all.csv"}],
        "series": series,
        "links": {"hosts": ["www.example.org"]},
        "licence": {"holder": "Example bank", "terms": None, "retain": "yes"},
    }


def build_lines(count: int) -> list[str]:
    rng = random.Random(7)
    lines: list[str] = []
    day_zero = TODAY - timedelta(days=count)
    for index in range(count):
        day = (day_zero + timedelta(days=index)).isoformat()
        roll = index % 10
        if roll < 7:
            width = (1, 2, 4, 8, 16)[index % 5]
            record = {
                "kind": "value",
                "series": f"rates-{width}",
                "date": day,
                "fields": {f"f{n}": round(rng.uniform(0.5, 200), 4) for n in range(width)},
            }
        elif roll == 7:
            record = {
                "kind": "value",
                "series": "cpi",
                "date": day,
                "period": f"P{index}",
                "fields": {"index": round(rng.uniform(90, 130), 2), "yoy": 2.1},
            }
        elif roll == 8:
            record = {
                "kind": "event",
                "series": "meetings",
                "id": f"meeting-{index}",
                "date": day,
                "state": "happened",
                "value": 4.25,
                "title": "Monetary policy meeting",
            }
        else:
            record = {
                "kind": "item",
                "series": "press",
                "date": day,
                "id": f"pr-{index}",
                "title": f"Press release {index}: rates unchanged",
                "url": f"https://www.example.org/press/{index}.html",
            }
        lines.append(json.dumps(record))
    return lines


def timed(action) -> float:
    start = time.perf_counter()
    action()
    return time.perf_counter() - start


def main() -> None:
    result = parse_manifest(manifest_document())
    assert result.manifest is not None, result.problems
    manifest = result.manifest
    lines = build_lines(MAX_RECORDS)
    check = check_batch(lines, manifest, TODAY)
    assert check.ok, check.problems[:5]
    assert len(check.records) == MAX_RECORDS

    loads = json.loads
    # Interleaved, so both see the same load from whatever else runs on the machine.
    baseline = checked = float("inf")
    for _ in range(3):
        baseline = min(baseline, timed(lambda: [loads(line) for line in lines]))
        checked = min(checked, timed(lambda: check_batch(lines, manifest, TODAY)))
    size = sum(len(line) for line in lines) / 1e6
    print(f"lines: {len(lines):,} ({size:.1f} MB)")
    print(f"json.loads of each line (best of 3): {baseline:.3f} s")
    print(f"check_batch (best of 3):             {checked:.3f} s")
    print(f"ratio: {checked / baseline:.2f}x (goal: at most 4x)")


if __name__ == "__main__":
    main()
