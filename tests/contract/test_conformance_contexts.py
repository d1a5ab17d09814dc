"""Runs every shared run-context case in tests/conformance/contexts/ (DECISIONS section 3).

A case has a `manifest` and one of: `build` (`now`, `series` of key to {last, count}, optional
`backfill`) with `expect.context`; `context` (a run context to check) or `fixture` (a
fixtures/context.json to check) with `expect.codes`.
"""

from __future__ import annotations

import json
from datetime import date
from pathlib import Path

import pytest

from almanac.platform.contract.context import (
    build_run_context,
    check_fixture_context,
    check_run_context,
    parse_instant,
)
from almanac.platform.contract.manifest import parse_manifest
from tests.conftest import CONFORMANCE

CASES = sorted((CONFORMANCE / "contexts").glob("*.json"))


def test_there_are_cases_of_every_kind() -> None:
    kinds = {
        next(k for k in ("build", "context", "fixture") if k in json.loads(p.read_text()))
        for p in CASES
    }
    assert kinds == {"build", "context", "fixture"}


@pytest.mark.parametrize("case_file", CASES, ids=lambda p: p.stem)
def test_context_case(case_file: Path) -> None:
    case = json.loads(case_file.read_text(encoding="utf-8"))
    result = parse_manifest(case["manifest"])
    assert result.manifest is not None, result.problems
    manifest = result.manifest
    if "build" in case:
        build = case["build"]
        now = parse_instant(build["now"], utc_only=False)
        assert now is not None
        state = {
            key: (date.fromisoformat(s["last"]) if s["last"] else None, s["count"])
            for key, s in build["series"].items()
        }
        ctx = build_run_context(
            manifest, now=now, series_state=state, backfill=build.get("backfill")
        )
        assert ctx == case["expect"]["context"]
        assert check_run_context(ctx, manifest) == []
        return
    if "context" in case:
        problems = check_run_context(case["context"], manifest)
    else:
        problems = check_fixture_context(case["fixture"], manifest)
    found = sorted((p.code, p.path) for p in problems)
    assert found == sorted((c["code"], c["path"]) for c in case["expect"]["codes"])
