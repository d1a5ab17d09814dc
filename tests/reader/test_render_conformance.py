"""Every shared rendering case in tests/conformance/days/ against `render_days`, and every
rendering against the row schema (the node suite checks the tool's `renderDays` the same way)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from jsonschema import Draft202012Validator

from almanac.platform.contract.manifest import Manifest, parse_manifest
from almanac.platform.reader import render_days
from tests.conftest import CONFORMANCE

DAYS = CONFORMANCE / "days"
CASES = sorted(p for p in DAYS.glob("*.json") if p.name != "schema.json")
SCHEMA = json.loads((DAYS / "schema.json").read_text(encoding="utf-8"))
VALIDATOR = Draft202012Validator(SCHEMA)


def case_manifest(doc: dict[str, Any]) -> Manifest:
    result = parse_manifest(doc["manifest"], folder_name=doc["manifest"]["id"])
    assert result.ok, [p.message for p in result.problems]
    assert result.manifest is not None
    return result.manifest


def render_case(doc: dict[str, Any]) -> list[Any]:
    return render_days(
        case_manifest(doc),
        doc["records"],
        from_date=doc["from"],
        to_date=doc["to"],
        today=doc["today"],
        language=doc["language"],
        status=doc["status"],
    )


def schema_errors(days: Any) -> list[str]:
    return [
        f"{'/'.join(map(str, e.absolute_path))}: {e.message}" for e in VALIDATOR.iter_errors(days)
    ]


def test_every_rule_group_has_its_case() -> None:
    names = {p.stem for p in CASES}
    assert len(CASES) >= 16
    for expected in ("value-in-force-and-last-rate", "event-states", "rounding-and-signs"):
        assert expected in names


@pytest.mark.parametrize("path", CASES, ids=[p.stem for p in CASES])
def test_case_renders_exactly_the_expected_days(path: Path) -> None:
    doc = json.loads(path.read_text(encoding="utf-8"))
    days = render_case(doc)
    assert schema_errors(days) == []
    for got, want in zip(days, doc["expect"], strict=True):
        assert got == want, f"{path.stem} {want['date']}"
    # Same JSON text, key order included, as the reader API will send it.
    assert json.dumps(days, ensure_ascii=False) == json.dumps(doc["expect"], ensure_ascii=False)


def test_the_schema_refuses_a_row_that_breaks_it() -> None:
    doc = json.loads((DAYS / "value-in-force-and-last-rate.json").read_text(encoding="utf-8"))
    days = render_case(doc)
    row = next(d for d in days if d["sections"])["sections"][0]["rows"][0]
    row["figures"][0]["text"] = "58.1"
    assert schema_errors(days) != []
