"""The review desk's tables at their edges (pure functions; the desk page and its API are
tested in test_review_and_store.py and tests/pages/test_publishing_pages.py): each kind of
record content in words, a diff that shows fewer records than it counts, a diff kept before
contents were objects, and review information not of review.json's shape."""

from __future__ import annotations

import json

from almanac.platform.contract.review import review_sheet
from almanac.platform.publishing.uploads.diff import content_words, diff_table, structured


def test_each_kind_of_record_in_words() -> None:
    value = {"fields": {"rate": 58.95, "low": 58.0}, "revises": "2026-01-02"}
    assert content_words(value) == "rate 58.95, low 58 (revises 2026-01-02)"
    assert content_words({"fields": {"rate": 1.5}, "revises": None}) == "rate 1.5"
    event = {"state": "happened", "title": "Rate decision", "value": 4.25}
    assert content_words(event) == "happened: Rate decision, value 4.25"
    item = {"title": "Bulletin 12", "url": "https://example.org/b12"}
    assert content_words(item) == "Bulletin 12 <https://example.org/b12>"


def test_a_diff_kept_as_text_reads_as_objects_and_says_what_it_does_not_show() -> None:
    old = {"fields": {"rate": 1.0}, "revises": None}
    kept = {
        "today": "2026-03-02",
        "series": {
            "usd": {
                "new": 60,
                "revised": 1,
                "moved": 0,
                "missing": 0,
                "new_records": [{"date": "2026-03-02", "key": "", "content": json.dumps(old)}],
                "revised_records": [
                    {
                        "date": "2026-03-01",
                        "key": "",
                        "old": json.dumps(old),
                        "new": json.dumps({"fields": {"rate": 1.1}, "revises": None}),
                    }
                ],
                "moved_records": [],
                "missing_records": [],
            }
        },
    }
    made = structured(kept)
    assert made is not None and made["removed_series"] == []
    assert made["series"]["usd"]["revised_records"][0]["old"] == old
    table = diff_table(kept)
    assert [(r.change, r.before, r.after) for r in table.rows] == [
        ("new", "", "rate 1"),
        ("revised", "rate 1", "rate 1.1"),
    ]
    assert table.left_out == (("usd", "new", 59),)
    assert table.removed == ()


def test_review_information_of_another_shape_is_still_labelled() -> None:
    sheet = review_sheet({"notes": "n", "sources": "all of them", "extra": [1, 2]})
    assert sheet is not None and sheet.notes == "n" and sheet.sources == ()
    assert dict(sheet.other) == {"extra": "[1, 2]", "sources": "all of them"}
    assert review_sheet(None) is None
    assert review_sheet(["not", "an", "object"]).other == (  # type: ignore[union-attr]
        ("review information", '["not", "an", "object"]'),
    )
