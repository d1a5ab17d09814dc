"""Differential test: random small plug-ins (fixed seed) drawn by `render_days` and by the
tool's `renderDays` under real Node 24 must give the same rows, key order included.

The generator leans on the hard parts: half-way figures (1.005, 2.675, 0.125, x.xx5), tiny
negatives, zero bases, equal values (0 bp, Held), several periods a day, moved and titleless
events, names missing in the reader's language, a field named like an Object property
(`constructor`), dates around the reader's today, every status.
"""

from __future__ import annotations

import json
import random
from datetime import date, timedelta
from pathlib import Path
from typing import Any

from jsonschema import Draft202012Validator

from almanac.platform.contract.manifest import parse_manifest
from almanac.platform.reader import STATUSES, render_days
from tests.conftest import CONFORMANCE
from tests.reader.tool import call_tool

SEED = 20260605
CASES = 400
VALIDATOR = Draft202012Validator(
    json.loads((CONFORMANCE / "days" / "schema.json").read_text(encoding="utf-8"))
)
BASE = date(2026, 3, 1)
LANGUAGES = ["en", "es", "fr", "pt", "de"]
UNITS = [None, "%", "%", "USD", "DOP", "EUR", "index", "kg"]
FIELDS = ["buy", "sell", "mid", "constructor", "rate"]
HALF_WAYS = [1.005, 2.675, 0.125, 0.375, -0.125, 1.115, 8.345, 10.005, -2.675, 0.005, 0.015]


def day(offset: int) -> str:
    return (BASE + timedelta(days=offset)).isoformat()


def names(rng: random.Random, label: str) -> dict[str, str]:
    chosen = rng.sample(LANGUAGES, rng.randint(1, 3))
    return {lang: f"{label} ({lang})" for lang in chosen}


def number(rng: random.Random, unit: str | None, previous: float | None) -> float | int:
    pick = rng.random()
    if previous is not None and pick < 0.15:
        return previous
    if pick < 0.3:
        return rng.choice(HALF_WAYS)
    if pick < 0.4:
        return rng.choice([0, 0.0, -0.001, 0.004, -0.004, 0.0049999])
    if pick < 0.5:
        return rng.randint(-5, 2000)
    if unit == "%" or pick < 0.7:
        return rng.choice([4.0, 4.25, 5.5, 5.75, 6.1, 0.3]) + rng.choice([0, 0.01, -0.005, 0.1])
    if pick < 0.8:
        return round(rng.uniform(-1e9, 1e12), rng.randint(0, 3))
    return round(rng.uniform(-1000, 1000), 3)


def series_doc(rng: random.Random, index: int) -> dict[str, Any]:
    kind = rng.choice(["value", "value", "event", "item"])
    doc: dict[str, Any] = {
        "key": f"s{index}",
        "kind": kind,
        "cadence": "daily",
        "dates": "observation" if kind == "event" else rng.choice(["observation", "publication"]),
        "name": names(rng, f"Series {index}"),
    }
    unit = rng.choice(UNITS)
    if unit is not None:
        doc["unit"] = unit
    if kind == "value":
        fields = rng.sample(FIELDS, rng.randint(1, 3))
        doc["fields"] = fields
        named = [f for f in fields if rng.random() < 0.6]
        if named:
            doc["fieldNames"] = {f: names(rng, f.title()) for f in named}
        if rng.random() < 0.5:
            doc["change"] = rng.choice(fields)
    return doc


def manifest_doc(rng: random.Random) -> dict[str, Any]:
    licence: dict[str, Any] = {"holder": "Statistics Office", "terms": None, "retain": "yes"}
    if rng.random() < 0.5:
        licence["attribution"] = "STAT"
    return {
        "contract": 1,
        "id": "diff-plugin",
        "name": names(rng, "Plug-in"),
        "version": "1.0.0",
        "timezone": "America/Santo_Domingo",
        "audience": "public",
        "schedule": "0 18 * * *",
        "backfill": "all",
        "sources": [{"name": "feed", "url": "https://data.example.org/feed.csv"}],
        "series": [series_doc(rng, i) for i in range(rng.randint(1, 4))],
        "licence": licence,
    }


def value_records(rng: random.Random, series: dict[str, Any]) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    previous: float | None = None
    for offset in sorted(rng.sample(range(0, 30), rng.randint(0, 8))):
        periods = [None]
        if series["dates"] == "publication":
            periods = rng.sample(["2026-01", "2026-02", "Q1", "2025-12"], rng.randint(1, 2))
        for period in periods:
            fields = {}
            for field in rng.sample(series["fields"], rng.randint(1, len(series["fields"]))):
                fields[field] = number(rng, series.get("unit"), previous)
                previous = fields[field]
            record = {"kind": "value", "series": series["key"], "date": day(offset)}
            if period is not None:
                record["period"] = period
            record["fields"] = fields
            out.append(record)
    return out


def event_records(rng: random.Random, series: dict[str, Any]) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    previous: float | None = None
    for n in range(rng.randint(0, 7)):
        event_id = f"e{rng.randint(0, 99)}-{n}"
        offset = rng.randint(0, 34)
        record: dict[str, Any] = {
            "kind": "event",
            "series": series["key"],
            "id": event_id,
            "date": day(offset),
            "state": rng.choice(["scheduled", "happened", "happened", "happened", "cancelled"]),
        }
        if record["state"] == "happened" and rng.random() < 0.7:
            record["value"] = number(rng, series.get("unit"), previous)
            previous = record["value"]
        title = rng.choice([None, "", "Decision", "Meeting é", "Zeta"])
        if title is not None:
            record["title"] = title
        if rng.random() < 0.2:
            later = day(offset + rng.randint(1, 5))
            out.append({**record, "state": "scheduled", "movedTo": later})
            record = {**record, "date": later}
        out.append(record)
    return out


def item_records(rng: random.Random, series: dict[str, Any]) -> list[dict[str, Any]]:
    return [
        {
            "kind": "item",
            "series": series["key"],
            "id": f"n{n}-{rng.choice('abcXYZ')}",
            "date": day(rng.randint(0, 32)),
            "title": f"Notice {n}",
            "url": f"https://data.example.org/n/{n}",
        }
        for n in range(rng.randint(0, 5))
    ]


def random_case(rng: random.Random) -> dict[str, Any]:
    manifest = manifest_doc(rng)
    records: list[dict[str, Any]] = []
    makers = {"value": value_records, "event": event_records, "item": item_records}
    for series in manifest["series"]:
        records.extend(makers[series["kind"]](rng, series))
    if rng.random() < 0.1:
        gone = {"kind": "item", "series": "gone", "id": "x", "date": day(3)}
        records.append({**gone, "title": "A removed series", "url": "https://x.example/x"})
    rng.shuffle(records)
    start = rng.randint(-5, 30)
    return {
        "manifest": manifest,
        "records": records,
        "from": day(start),
        "to": day(start + rng.randint(0, 20)),
        "today": day(rng.randint(-3, 36)),
        "language": rng.choice(["en", "es", "es-DO", "fr", "pt_BR", "de", "", "EN", "it"]),
        "status": rng.choice(STATUSES),
    }


def tool_arguments(case: dict[str, Any]) -> list[Any]:
    """`renderDays(manifest, records, {from, to, today, language, status})`."""
    options = {key: case[key] for key in ("from", "to", "today", "language", "status")}
    return [case["manifest"], case["records"], options]


def same(got: Any, want: Any, at: str = "$") -> None:
    """Equal JSON values, object keys in the same order (the API's text equals the tool's)."""
    if isinstance(want, dict):
        assert isinstance(got, dict), at
        assert list(got) == list(want), f"{at}: keys {list(got)} != {list(want)}"
        for key in want:
            same(got[key], want[key], f"{at}.{key}")
    elif isinstance(want, list):
        assert isinstance(got, list) and len(got) == len(want), at
        for i, (g, w) in enumerate(zip(got, want, strict=True)):
            same(g, w, f"{at}[{i}]")
    else:
        assert type(got) is type(want) or {type(got), type(want)} <= {int, float}, at
        assert got == want, f"{at}: {got!r} != {want!r}"


def test_render_days_equals_the_tools_render_days(node: Path) -> None:
    rng = random.Random(SEED)
    cases = [random_case(rng) for _ in range(CASES)]
    tool_days = call_tool(node, "renderDays", [tool_arguments(case) for case in cases])
    drawn_rows = 0
    kinds: set[str] = set()
    for n, (case, want) in enumerate(zip(cases, tool_days, strict=True)):
        result = parse_manifest(case["manifest"])
        assert result.manifest is not None, [p.message for p in result.problems]
        got = render_days(
            result.manifest,
            case["records"],
            from_date=case["from"],
            to_date=case["to"],
            today=case["today"],
            language=case["language"],
            status=case["status"],
        )
        same(got, want, f"case {n}")
        if n % 8 == 0:  # jsonschema is slow; the conformance test validates every case
            assert list(VALIDATOR.iter_errors(got)) == [], f"case {n}"
        for d in got:
            for section in d["sections"]:
                drawn_rows += len(section["rows"])
                kinds.update(
                    row.get("style") or row.get("state") or row["type"] for row in section["rows"]
                )
    # The generator really reaches every kind of row, not just empty days.
    assert drawn_rows > 2000
    assert kinds >= {"normal", "in-force", "last", "scheduled", "happened", "moved",
                     "cancelled", "item", "status"}  # fmt: skip
