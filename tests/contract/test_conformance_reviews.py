"""Runs every shared review.json case in tests/conformance/reviews/ ("Review information"):
the shape and the example days, as the tool's `check` judges them (tests/tool/conformance.test.mjs
runs the same cases against the tool)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from almanac.platform.contract.manifest import parse_manifest
from almanac.platform.contract.review import review_example_problems, review_problems
from tests.conftest import CONFORMANCE

CASES = sorted((CONFORMANCE / "reviews").glob("*.json"))


def test_there_are_cases() -> None:
    assert len(CASES) >= 10


@pytest.mark.parametrize("case_file", CASES, ids=lambda p: p.stem)
def test_review_case(case_file: Path) -> None:
    case = json.loads(case_file.read_text(encoding="utf-8"))
    manifest = parse_manifest(case["manifest"]).manifest
    assert manifest is not None
    raw = case["raw"].encode() if "raw" in case else json.dumps(case["review"]).encode()
    parsed = None if "raw" in case else case["review"]
    problems = [
        *review_problems(raw, manifest),
        *review_example_problems(parsed, case["records"]),
    ]
    assert {(p.code, p.path) for p in problems} == {(e["code"], e["path"]) for e in case["expect"]}
