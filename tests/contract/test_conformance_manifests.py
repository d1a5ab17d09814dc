"""Runs every shared manifest case in tests/conformance/manifests/ (DECISIONS section 3).

Each case's expected (code, path) set must equal the set the manifest check reports; the Node
tool's suite runs the same files.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from almanac.platform.contract.manifest import parse_manifest
from tests.conftest import CONFORMANCE

CASES = sorted((CONFORMANCE / "manifests").glob("*.json"))


def load(case_file: Path) -> dict:
    return json.loads(case_file.read_text(encoding="utf-8"))


def test_there_are_cases() -> None:
    assert len(CASES) >= 50


@pytest.mark.parametrize("case_file", CASES, ids=lambda p: p.stem)
def test_manifest_case(case_file: Path) -> None:
    case = load(case_file)
    assert set(case) <= {"description", "folder", "manifest", "raw", "expect"}
    assert ("manifest" in case) != ("raw" in case), "a case has exactly one of manifest, raw"
    source = case["raw"] if "raw" in case else case["manifest"]
    if "manifest" in case and not isinstance(source, dict):
        # A parsed value that is not an object reaches the check as its JSON text.
        source = json.dumps(source)
    result = parse_manifest(source, folder_name=case["folder"])
    found = {(p.code, p.path) for p in result.problems}
    expected = {(e["code"], e["path"]) for e in case["expect"]}
    assert found == expected, case["description"]
    assert result.ok == (not expected)
    assert (result.manifest is not None) == (not expected)
    for problem in result.problems:
        if problem.path is not None:
            assert problem.path in problem.message
        assert problem.fix
