"""Runs every shared record-batch case in tests/conformance/records/ (DECISIONS section 3).

Each case's expected (code, line) set must equal the set the batch check reports; the Node
tool's suite runs the same files.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from almanac.platform.contract.manifest import parse_manifest
from almanac.platform.contract.records import check_batch
from tests.conftest import CONFORMANCE

CASES = sorted((CONFORMANCE / "records").glob("*.json"))


def test_there_are_cases() -> None:
    assert len(CASES) >= 30


@pytest.mark.parametrize("case_file", CASES, ids=lambda p: p.stem)
def test_record_case(case_file: Path) -> None:
    case = json.loads(case_file.read_text(encoding="utf-8"))
    assert set(case) <= {"description", "manifest", "today", "lines", "repeat", "expect"}
    manifest = parse_manifest(case["manifest"])
    assert manifest.manifest is not None, manifest.problems
    lines = list(case["lines"])
    if "repeat" in case:
        lines += [case["repeat"]["line"]] * case["repeat"]["times"]
    result = check_batch(lines, manifest.manifest, case["today"])
    found = {(p.code, p.line) for p in result.problems}
    expected = {(e["code"], e["line"]) for e in case["expect"]}
    assert found == expected, case["description"]
    assert result.ok == (not expected)
    if result.ok:
        records = [line for line in lines if line.strip()]
        assert len(result.records) == len(records)
    else:
        assert result.records == []
    for problem in result.problems:
        if problem.line is not None:
            assert f"line {problem.line}" in problem.message
        if problem.path is not None:
            assert problem.path in problem.message
