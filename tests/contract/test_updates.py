"""Versioning rule 4 beyond the shared cases: severities, messages and symmetry."""

from __future__ import annotations

import json

from almanac.platform.contract.manifest import parse_manifest
from almanac.platform.contract.updates import compare_manifests
from tests.conftest import CONFORMANCE


def load(case: str) -> tuple:
    doc = json.loads((CONFORMANCE / "updates" / f"{case}.json").read_text())
    return parse_manifest(doc["published"]).manifest, parse_manifest(doc["candidate"]).manifest


def test_refusals_are_errors_and_allowed_changes_warnings() -> None:
    published, candidate = load("several")
    severities = {p.code: p.severity for p in compare_manifests(published, candidate)}
    assert severities == {
        "PLG-UPDATE-TIMEZONE": "error",
        "PLG-UPDATE-SERIES-KIND": "error",
        "PLG-UPDATE-SERIES-UNIT": "error",
        "PLG-UPDATE-SERIES-REMOVED": "warning",
    }
    for case in ("field-removed", "source-host-added", "series-removed"):
        assert {p.severity for p in compare_manifests(*load(case))} == {"warning"}


def test_messages_name_the_series_field_and_host() -> None:
    messages = [p.message for p in compare_manifests(*load("field-removed"))]
    assert messages == ["series[0].fields: series usd no longer has field inverse"]
    messages = [p.message for p in compare_manifests(*load("source-host-added"))]
    assert "data.ecb.europa.eu" in messages[0]
    messages = [p.message for p in compare_manifests(*load("series-removed"))]
    assert "meetings" in messages[0]
    messages = [p.message for p in compare_manifests(*load("series-unit-removed"))]
    assert messages == ["series[0].unit: series usd changes unit from 'USD' to none"]


def test_the_same_manifest_is_no_update_problem() -> None:
    published, candidate = load("several")
    assert compare_manifests(published, published) == []
    assert compare_manifests(candidate, candidate) == []


def test_going_back_reports_the_reverse_changes() -> None:
    published, candidate = load("series-removed")
    assert compare_manifests(candidate, published) == []  # adding a series back is silent
    published, candidate = load("source-host-added")
    assert compare_manifests(candidate, published) == []  # dropping a host is silent
