"""Runs every shared update case in tests/conformance/updates/ (Versioning rule 4)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from almanac.platform.contract.manifest import parse_manifest
from almanac.platform.contract.updates import compare_manifests
from tests.conftest import CONFORMANCE

CASES = sorted((CONFORMANCE / "updates").glob("*.json"))


def test_there_are_cases() -> None:
    assert len(CASES) >= 10


@pytest.mark.parametrize("case_file", CASES, ids=lambda p: p.stem)
def test_update_case(case_file: Path) -> None:
    case = json.loads(case_file.read_text(encoding="utf-8"))
    published = parse_manifest(case["published"])
    candidate = parse_manifest(case["candidate"])
    assert published.manifest is not None, published.problems
    assert candidate.manifest is not None, candidate.problems
    problems = compare_manifests(published.manifest, candidate.manifest)
    found = {(p.code, p.path) for p in problems}
    assert found == {(e["code"], e["path"]) for e in case["expect"]}
