"""Runs every shared folder case in tests/conformance/folders/ (DECISIONS section 3).

Each case is a plug-in folder with an `expected.json` beside its files. The folder (without
`expected.json`) is copied to a temporary folder named `folder`, and the set of (code, path)
the Python folder checks report (`pack.folder_problems`: the rules that need no Node) must equal
`expect`. The Node suite runs the tool's `check --json` on the same cases
(tests/tool/folders.test.mjs).
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from almanac.platform.contract.pack import folder_problems
from almanac.platform.contract.rules import ID_PATTERN
from tests.conftest import CONFORMANCE

FOLDERS = CONFORMANCE / "folders"
CASES = sorted(p for p in FOLDERS.iterdir() if p.is_dir())
EXPECTED = "expected.json"


def load(case: Path) -> dict:
    return json.loads((case / EXPECTED).read_text(encoding="utf-8"))


def materialize(case: Path, parent: Path) -> Path:
    """The case's plug-in folder as the checks see it: named `folder`, without expected.json."""
    spec = load(case)
    target = parent / spec["folder"]
    shutil.copytree(case, target, ignore=shutil.ignore_patterns(EXPECTED))
    return target


def test_there_are_cases_for_each_folder_rule() -> None:
    assert len(CASES) >= 6
    expected = {e["code"] for case in CASES for e in load(case)["expect"]}
    assert expected >= {
        "PLG-FOLDER-ID",
        "PLG-FETCH-MISSING",
        "PLG-FIXTURE-SOURCE-MISSING",
        "PLG-FIXTURE-RECORDS-MISSING",
        "PLG-FIXTURE-CONTEXT-INVALID",
    }
    assert any(load(case)["expect"] == [] for case in CASES), "a case that passes"
    assert not [p for p in FOLDERS.iterdir() if not p.is_dir()], "only case folders here"


@pytest.mark.parametrize("case", CASES, ids=lambda p: p.name)
def test_folder_case(case: Path, tmp_path: Path) -> None:
    spec = load(case)
    assert set(spec) == {"description", "folder", "expect"}
    assert ID_PATTERN.fullmatch(spec["folder"]), "the folder is named like a plug-in id"
    folder = materialize(case, tmp_path)
    problems = folder_problems(folder)
    found = {(p.code, p.path) for p in problems}
    expected = {(e["code"], e["path"]) for e in spec["expect"]}
    assert found == expected, spec["description"]
    for problem in problems:
        assert problem.fix and problem.message
