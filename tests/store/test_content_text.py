"""The write's direct text of a value record's content is exactly the canonical text."""

from __future__ import annotations

import random
import sys

import pytest

from almanac.platform.contract.identity import record_content
from almanac.platform.store.types import canonical_content, content_text

FIGURES = [
    0,
    -0.0,
    1,
    1.0,
    -1.5,
    0.1,
    1e-05,
    1e16,
    1.5e300,
    123456789012345678,
    -(2**53) - 1,
    sys.float_info.max,
    sys.float_info.min,
    5e-324,
]


def _value(fields: dict, revises: str | None = None) -> dict:
    record = {"kind": "value", "series": "rates", "date": "2026-01-02", "fields": fields}
    if revises is not None:
        record["revises"] = revises
    return record


@pytest.mark.parametrize("figure", FIGURES, ids=repr)
def test_each_edge_figure_gives_the_canonical_text(figure):
    record = _value({"rate": figure, "a_b-c": figure}, revises="2025-12-31")
    assert content_text(record) == canonical_content(record_content(record))


def test_random_value_records_give_the_canonical_text():
    rng = random.Random(20261123)
    keys = [f"f{i}" for i in range(16)] + ["buy", "sell", "rate_x", "z-9"]
    for _ in range(5000):
        fields = {}
        for key in rng.sample(keys, rng.randint(1, 16)):
            pick = rng.random()
            if pick < 0.3:
                fields[key] = rng.randint(-(10**20), 10**20)
            elif pick < 0.5:
                fields[key] = float(rng.randint(-1000, 1000))
            else:
                fields[key] = rng.uniform(-1e6, 1e6) * 10 ** rng.randint(-12, 12)
        record = _value(fields, revises=rng.choice([None, "2026-01-01"]))
        assert content_text(record) == canonical_content(record_content(record))


def test_events_and_items_take_the_general_path():
    event = {
        "kind": "event",
        "series": "meetings",
        "id": "m-1",
        "date": "2026-01-02",
        "state": "happened",
        "value": 4.0,
        "title": 'Rate "decision"\n\\ é',
    }
    item = {
        "kind": "item",
        "series": "news",
        "id": "n-1",
        "date": "2026-01-02",
        "title": "Tab\there",
        "url": "https://example.org/a?b=c",
    }
    for record in (event, item):
        assert content_text(record) == canonical_content(record_content(record))
    assert (
        content_text(event)
        == '{"state":"happened","title":"Rate \\"decision\\"\\n\\\\ é","value":4}'
    )
