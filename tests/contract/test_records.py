"""The record-batch check (spec "Records": Value, Event, Item tables and Batch rules)."""

from __future__ import annotations

import json
from datetime import date, datetime
from pathlib import Path

import pytest

from almanac.platform.contract.manifest import Manifest, parse_manifest
from almanac.platform.contract.records import MAX_RECORDS, check_batch
from tests.conftest import CONFORMANCE, REPO

TODAY = date(2024, 5, 10)


@pytest.fixture(scope="module")
def manifest() -> Manifest:
    case = json.loads((CONFORMANCE / "records" / "valid-mixed.json").read_text("utf-8"))
    result = parse_manifest(case["manifest"])
    assert result.manifest is not None
    return result.manifest


def value(day: str = "2024-05-08", rate: object = 1.0765, **extra: object) -> str:
    record = {"kind": "value", "series": "usd", "date": day, "fields": {"rate": rate}, **extra}
    return json.dumps(record)


FIXTURE_RUNS = sorted(
    path.parent
    for path in (REPO / "examples").glob("*/fixtures/**/records.jsonl")
    if (path.parent / "context.json").exists()
)


@pytest.mark.parametrize(
    "fixtures", FIXTURE_RUNS, ids=lambda p: str(p.relative_to(REPO / "examples"))
)
def test_example_fixture_records_pass(fixtures: Path) -> None:
    """Real records, made by the example fetchers from real public files, pass the check."""
    plugin = next(p for p in fixtures.parents if (p / "plugin.json").exists())
    manifest = parse_manifest((plugin / "plugin.json").read_bytes()).manifest
    assert manifest is not None
    today = json.loads((fixtures / "context.json").read_text("utf-8"))["today"]
    text = (fixtures / "records.jsonl").read_text("utf-8")
    result = check_batch(text.split("\n"), manifest, today)
    assert result.problems == []
    assert len(result.records) == text.count("\n") > 0


def test_messages_name_line_and_field(manifest: Manifest) -> None:
    lines = [value(), value("2024-05-09", "1.07"), value("2024-05-31")]
    result = check_batch(lines, manifest, TODAY)
    assert not result.ok and result.records == []
    assert [(p.code, p.line, p.path, p.message) for p in result.problems] == [
        (
            "PLG-RECORD-INVALID",
            2,
            "fields.rate",
            'line 2: fields.rate: "1.07" is not a finite number',
        ),
        (
            "PLG-RECORD-AFTER-TODAY",
            3,
            "date",
            "line 3: date: 2024-05-31 is after today (2024-05-10); a value is never dated "
            "after today",
        ),
    ]
    assert result.problems[0].fix.startswith("Print each record as one JSON object")


def test_nan_and_infinity_are_refused_although_python_reads_them(manifest: Manifest) -> None:
    assert json.loads('{"a": NaN}')  # the reason the check passes its own parse_constant
    for literal in ("NaN", "Infinity", "-Infinity"):
        line = (
            f'{{"kind":"value","series":"usd","date":"2024-05-08","fields":{{"rate":{literal}}}}}'
        )
        result = check_batch([line], manifest, TODAY)
        assert [(p.code, p.line) for p in result.problems] == [("PLG-RECORD-INVALID", 1)]
        assert literal in result.problems[0].message


def test_bytes_generators_and_file_lines(manifest: Manifest, tmp_path: Path) -> None:
    lines = [value("2024-05-08"), value("2024-05-09"), value("2024-05-10")]
    path = tmp_path / "records.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    with path.open("rb") as handle:
        from_file = check_batch(handle, manifest, TODAY)
    from_bytes = check_batch((line.encode() for line in lines), manifest, TODAY)
    from_split = check_batch(path.read_text().split("\n"), manifest, TODAY)
    for result in (from_file, from_bytes, from_split):
        assert result.ok
        assert [r["date"] for r in result.records] == ["2024-05-08", "2024-05-09", "2024-05-10"]


def test_invalid_utf8_is_refused(manifest: Manifest) -> None:
    result = check_batch([value().encode(), b'{"kind":"\xff"}'], manifest, TODAY)
    assert [(p.code, p.line) for p in result.problems] == [("PLG-RECORD-INVALID", 2)]
    assert "UTF-8" in result.problems[0].message


def test_today_as_date_or_text(manifest: Manifest) -> None:
    assert check_batch([value()], manifest, "2024-05-10").ok
    assert check_batch([value()], manifest, TODAY).ok
    for bad in (None, "2024-02-30", datetime(2024, 5, 10, 12, 0), "", 20240510):
        result = check_batch([value()], manifest, bad)  # type: ignore[arg-type]
        assert [(p.code, p.line) for p in result.problems] == [("PLG-RECORD-TODAY", None)]


def test_the_most_records_pass_and_one_more_refuses(manifest: Manifest) -> None:
    template = (
        '{"kind":"value","series":"hicp","date":"2024-05-02","period":"P%d","fields":{"yoy":2}}'
    )
    lines = [template % n for n in range(MAX_RECORDS)]
    result = check_batch([*lines, ""], manifest, TODAY)
    assert result.ok and len(result.records) == MAX_RECORDS
    lines.append(lines[0])
    result = check_batch(lines, manifest, TODAY)
    assert [(p.code, p.line) for p in result.problems] == [("PLG-RECORD-TOO-MANY", None)]
    assert "250001 records" in result.problems[0].message


def test_every_bad_line_of_a_large_batch_is_reported(manifest: Manifest) -> None:
    lines = [value(f"2024-{m:02d}-{d:02d}") for m in range(1, 5) for d in range(1, 29)]
    lines[10] = lines[10].replace('"usd"', '"eur"')
    lines[50] = lines[50].replace("1.0765", "1e999")
    lines.append(lines[0])
    result = check_batch(lines, manifest, TODAY)
    assert [(p.code, p.line, p.path) for p in result.problems] == [
        ("PLG-RECORD-SERIES", 11, "series"),
        ("PLG-RECORD-INVALID", 51, "fields.rate"),
        ("PLG-RECORD-REPEATED", len(lines), None),
    ]
    assert (result.problems[1].message) == "line 51: fields.rate: Infinity is not a finite number"


def test_an_event_id_twice_is_a_repeat_whatever_the_dates(manifest: Manifest) -> None:
    first = {"kind": "event", "series": "meetings", "id": "mp-1", "state": "scheduled"}
    lines = [
        json.dumps({**first, "date": "2024-06-06"}),
        json.dumps({**first, "date": "2024-06-13"}),
    ]
    result = check_batch(lines, manifest, TODAY)
    assert [(p.code, p.line) for p in result.problems] == [("PLG-RECORD-REPEATED", 2)]
    assert "mp-1" in result.problems[0].message


def test_reason_names_the_first_rule_and_line(manifest: Manifest) -> None:
    assert check_batch([value()], manifest, TODAY).reason() is None
    long_field = json.dumps({"kind": "value", "series": "usd", "date": "2024-05-09",
                             "fields": {"x" * 400: 1}})  # fmt: skip
    lines = [value(), long_field, value("2024-05-31")]
    reason = check_batch(lines, manifest, TODAY).reason()
    assert reason is not None and len(reason) == 300 and reason.endswith("...")
    assert reason.startswith("PLG-RECORD-INVALID line 2: fields.xxx")
    two = check_batch([value("2024-05-11"), value("2024-05-12")], manifest, TODAY).reason()
    assert two is not None and two.endswith("(and 1 more problem)")
    short = check_batch([value(), value()], manifest, TODAY).reason()
    assert short == (
        'PLG-RECORD-REPEATED line 2: the value of series "usd" on 2024-05-08 was printed '
        "before in this run"
    )
