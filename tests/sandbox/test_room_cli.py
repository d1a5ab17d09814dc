"""`almanac room run`: the operator's command runs a real example plug-in in the locked room."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

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
