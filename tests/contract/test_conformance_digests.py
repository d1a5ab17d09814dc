"""Runs every shared digest case in tests/conformance/digests/ (DECISIONS sections 3 and 4)."""

from __future__ import annotations

import base64
import json
import os
from pathlib import Path

import pytest

from almanac.platform.contract.digest import folder_digest
from tests.conftest import CONFORMANCE

CASES = sorted((CONFORMANCE / "digests").glob("*.json"))


def materialize(case: dict, root: Path) -> None:
    """Write a case's files and symbolic links into an empty folder."""
    for rel, content in case["files"].items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, dict):
            path.write_bytes(base64.b64decode(content["base64"], validate=True))
        else:
            path.write_bytes(content.encode("utf-8"))
    for rel, target in case.get("symlinks", {}).items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        os.symlink(target, root / rel)


def test_there_are_cases() -> None:
    assert len(CASES) >= 5


@pytest.mark.parametrize("case_file", CASES, ids=lambda p: p.stem)
def test_digest_case(case_file: Path, tmp_path: Path) -> None:
    case = json.loads(case_file.read_text(encoding="utf-8"))
    folder = tmp_path / "plugin"
    folder.mkdir()
    materialize(case, folder)
    result = folder_digest(folder)
    expect = case["expect"]
    found = sorted(
        ({"code": p.code, "path": p.path} for p in result.problems),
        key=lambda p: (p["path"], p["code"]),
    )
    if "codes" in expect:
        assert found == sorted(expect["codes"], key=lambda p: (p["path"], p["code"]))
    else:
        assert found == []
        assert result.files == expect["files"]
        assert result.digest == expect["digest"]
