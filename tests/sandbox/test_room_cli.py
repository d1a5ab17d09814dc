"""`almanac room run`: the operator's command runs a real example plug-in in the locked room."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import REPO

EXAMPLE = REPO / "examples" / "ecb-reference-rates"


def _almanac(*args: str | Path) -> subprocess.CompletedProcess[bytes]:
    command = [sys.executable, "-m", "almanac.cli", "room", "run", *map(str, args)]
    return subprocess.run(command, capture_output=True, timeout=60)


def test_room_run_prints_the_example_records_and_a_summary() -> None:
    done = _almanac(
        EXAMPLE,
        "--sources",
        EXAMPLE / "fixtures" / "sources",
        "--context",
        EXAMPLE / "fixtures" / "context.json",
    )
    assert done.returncode == 0, done.stderr.decode()
    assert done.stdout == (EXAMPLE / "fixtures" / "records.jsonl").read_bytes()
    summary = json.loads(done.stderr)
    assert summary["ok"] is True and summary["reason"] is None
    assert summary["node_version"].startswith("v24.")
    assert summary["digest"].startswith("sha256:")
    assert summary["layers"]["seccomp"] and summary["layers"]["network_namespace"]


def test_room_run_reports_a_failed_run_with_its_reason() -> None:
    case = EXAMPLE / "fixtures" / "runs" / "csv-instead-of-xml"
    done = _almanac(
        EXAMPLE, "--sources", case / "sources", "--context", EXAMPLE / "fixtures" / "context.json"
    )
    assert done.returncode == 1
    summary = json.loads(done.stderr)
    assert summary["exit_code"] == 2
    assert "not the ECB reference-rate XML" in summary["reason"]


def test_room_run_refuses_a_symbolic_link_among_the_sources(tmp_path: Path) -> None:
    sources = tmp_path / "sources"
    sources.mkdir()
    (sources / "ecb-90d").symlink_to("/etc/passwd")
    done = _almanac(EXAMPLE, "--sources", sources)
    assert done.returncode == 2
    assert b"symbolic link" in done.stderr


# The run context the fetcher reads ("Run context" table), built as a scheduled run and check
# build it -------------------------------------------------------------------------------------

BCRD = REPO / "examples" / "bcrd-reference-dollar"
ECHO_MANIFEST = {
    "contract": 1,
    "id": "echo-context",
    "name": {"en": "Echo"},
    "version": "1.0.0",
    "timezone": "America/Santo_Domingo",
    "audience": "public",
    "schedule": "0 18 * * 1-5",
    "backfill": "2y",
    "sources": [{"name": "rates", "url": "https://example.org/rates.json"}],
    "series": [
        {
            "key": "usd",
            "kind": "value",
            "cadence": "daily",
            "dates": "observation",
            "name": {"en": "USD"},
            "fields": ["rate"],
        },
        {
            "key": "meetings",
            "kind": "event",
            "cadence": "irregular",
            "dates": "observation",
            "name": {"en": "Meetings"},
        },
    ],
    "licence": {"holder": "Example", "terms": None, "retain": "yes"},
}
# Prints its stdin back, so the test reads exactly the context the fetcher was given.
ECHO_FETCHER = b"""import { readFileSync } from 'node:fs';
process.stdout.write(readFileSync(0, 'utf8'));
"""


@pytest.fixture
def echo(tmp_path: Path) -> Path:
    folder = tmp_path / "echo-context"
    folder.mkdir()
    (folder / "plugin.json").write_text(json.dumps(ECHO_MANIFEST))
    (folder / "fetch.mjs").write_bytes(ECHO_FETCHER)
    sources = tmp_path / "sources"
    sources.mkdir()
    (sources / "rates").write_text("{}")
    return folder


def _file(tmp_path: Path, name: str, content: object) -> Path:
    path = tmp_path / name
    path.write_text(json.dumps(content) if not isinstance(content, str) else content)
    return path


def _echoed(done: subprocess.CompletedProcess[bytes]) -> dict:
    assert done.returncode == 0, done.stderr.decode()
    return json.loads(done.stdout)


def test_a_fixture_context_reaches_the_fetcher_as_the_full_run_context(
    echo: Path, tmp_path: Path
) -> None:
    fixture = _file(
        tmp_path, "context.json", {"now": "2026-06-01T21:00:00-04:00", "today": "2026-06-01"}
    )
    done = _almanac(echo, "--sources", tmp_path / "sources", "--context", fixture)
    assert _echoed(done) == {
        "contract": 1,
        "plugin": "echo-context",
        "now": "2026-06-02T01:00:00Z",
        "today": "2026-06-01",
        "backfill": True,
        "backfillFrom": "2024-06-01",
        "sources": {"rates": "/sources/rates"},
        "series": {"usd": {"last": None, "count": 0}, "meetings": {"last": None, "count": 0}},
    }
    assert json.loads(done.stderr)["context"] == json.loads(done.stdout)


def test_records_before_the_run_give_the_series_state_as_check_does_for_a_case(
    echo: Path, tmp_path: Path
) -> None:
    fixture = _file(
        tmp_path, "context.json", {"now": "2026-06-01T22:00:00Z", "today": "2026-06-01"}
    )
    before = [
        {"kind": "value", "series": "usd", "date": "2026-05-28", "fields": {"rate": 1}},
        {"kind": "value", "series": "usd", "date": "2026-05-29", "fields": {"rate": 1}},
        {
            "kind": "event",
            "series": "meetings",
            "id": "m",
            "date": "2026-07-01",
            "state": "scheduled",
        },
        {"kind": "value", "series": "gone", "date": "2026-05-29", "fields": {"rate": 1}},
    ]
    records = _file(tmp_path, "records.jsonl", "".join(json.dumps(r) + "\n" for r in before))
    done = _almanac(
        echo, "--sources", tmp_path / "sources", "--context", fixture, "--records", records
    )
    ctx = _echoed(done)
    assert ctx["backfill"] is False
    assert ctx["series"] == {
        "usd": {"last": "2026-05-29", "count": 2},
        "meetings": {"last": None, "count": 1},  # only a scheduled event after today
    }
    bad = _file(tmp_path, "bad.jsonl", '{"series": "usd", "date": "2026-02-30"}\n')
    refused = _almanac(
        echo, "--sources", tmp_path / "sources", "--context", fixture, "--records", bad
    )
    assert refused.returncode == 2 and b"2026-02-30" in refused.stderr and refused.stdout == b""


def test_a_later_run_case_prints_what_check_computes() -> None:
    # fixtures/runs/next-day with the base records before it: the snapshot window, not the
    # whole 8,000-day history the fetcher prints when it is not told what is stored.
    case = BCRD / "fixtures" / "runs" / "next-day"
    done = _almanac(
        BCRD,
        "--sources",
        BCRD / "fixtures" / "sources",
        "--context",
        case / "context.json",
        "--records",
        BCRD / "fixtures" / "records.jsonl",
    )
    assert done.returncode == 0, done.stderr.decode()
    assert done.stdout == (case / "records.jsonl").read_bytes()


def test_a_case_context_without_series_takes_them_from_the_records(tmp_path: Path) -> None:
    case = BCRD / "fixtures" / "runs" / "next-day"
    moment = json.loads((case / "context.json").read_text())
    bare = _file(tmp_path, "context.json", {"now": moment["now"], "today": moment["today"]})
    done = _almanac(
        BCRD,
        "--sources",
        BCRD / "fixtures" / "sources",
        "--context",
        bare,
        "--records",
        BCRD / "fixtures" / "records.jsonl",
    )
    assert done.returncode == 0, done.stderr.decode()
    assert done.stdout == (case / "records.jsonl").read_bytes()
    assert json.loads(done.stderr)["context"]["series"] == moment["series"]


def test_a_context_naming_another_plugin_is_refused_and_nothing_runs(
    echo: Path, tmp_path: Path
) -> None:
    other = _file(
        tmp_path,
        "context.json",
        {"now": "2026-06-01T22:00:00Z", "today": "2026-06-01", "plugin": "ecb-reference-rates"},
    )
    done = _almanac(echo, "--sources", tmp_path / "sources", "--context", other)
    assert done.returncode == 2
    assert done.stdout == b""
    assert b"PLG-FIXTURE-CONTEXT-INVALID" in done.stderr and b"plugin" in done.stderr


def test_a_full_run_context_is_used_only_when_valid_for_the_plugin(
    echo: Path, tmp_path: Path
) -> None:
    full = {
        "contract": 1,
        "plugin": "echo-context",
        "now": "2026-06-01T22:00:00Z",
        "today": "2026-06-01",
        "backfill": False,
        "backfillFrom": "2024-06-01",
        "sources": {"rates": "/sources/rates"},
        "series": {
            "usd": {"last": "2026-05-29", "count": 10},
            "meetings": {"last": None, "count": 0},
        },
    }
    sources = tmp_path / "sources"
    assert (
        _echoed(_almanac(echo, "--sources", sources, "--context", _file(tmp_path, "f.json", full)))
        == full
    )
    broken = {
        "plugin": ({**full, "plugin": "other-plugin"}, b"PLG-CONTEXT-INVALID run context plugin"),
        "series": (
            {**full, "series": {"usd": {"last": None, "count": 0}}},
            b"PLG-CONTEXT-INVALID run context series.meetings",
        ),
        "sources": (
            {**full, "sources": {"rates": "/etc/passwd"}},
            b"PLG-CONTEXT-INVALID run context sources",
        ),
        "today": ({**full, "today": "2026-06-02"}, b"PLG-RECORD-TODAY run context today"),
        "missing": (
            {k: v for k, v in full.items() if k != "contract"},
            b"PLG-CONTEXT-INVALID run context contract",
        ),
    }
    for name, (ctx, rule) in broken.items():
        done = _almanac(
            echo, "--sources", sources, "--context", _file(tmp_path, f"{name}.json", ctx)
        )
        assert done.returncode == 2, name
        assert rule in done.stderr, (name, done.stderr)
        assert done.stdout == b""
    with_records = _almanac(
        echo,
        "--sources",
        sources,
        "--context",
        _file(tmp_path, "f.json", full),
        "--records",
        _file(tmp_path, "r.jsonl", ""),
    )
    assert with_records.returncode == 2 and b"--records" in with_records.stderr


def test_every_declared_source_needs_a_file_and_only_those_reach_the_room(
    echo: Path, tmp_path: Path
) -> None:
    empty = tmp_path / "empty"
    empty.mkdir()
    missing = _almanac(echo, "--sources", empty)
    assert missing.returncode == 2 and b"rates" in missing.stderr
    later = tmp_path / "later"
    later.mkdir()
    (later / "rates").write_text("[]")
    (later / "undeclared").write_text("x")
    done = _almanac(echo, "--sources", tmp_path / "sources", "--sources", later)
    assert _echoed(done)["sources"] == {"rates": "/sources/rates"}


def test_the_help_documents_the_context_rules() -> None:
    command = [sys.executable, "-m", "almanac.cli", "room", "run", "--help"]
    shown = subprocess.run(command, capture_output=True, text=True, timeout=60, check=True).stdout
    for words in ("--records", "full run context", "PLG-FIXTURE-CONTEXT-INVALID", "backfill"):
        assert words in shown
