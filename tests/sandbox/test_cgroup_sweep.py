"""Run folders and groups left by a service that died mid-run are cleared by the next run;
those of a live process are left alone."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from almanac.sandbox.cgroups import create_run_cgroup
from almanac.sandbox.limits import RoomLimits


def _dead_pid() -> int:
    pid = 4_000_000
    while Path(f"/proc/{pid}").exists():
        pid -= 1
    return pid


def test_the_next_run_clears_empty_groups_of_dead_processes() -> None:
    probe = create_run_cgroup(RoomLimits())
    if probe is None or os.geteuid() != 0:
        pytest.fail("the locked room's tests run as root on a host with cgroups")
    parents = {d.parent for d in probe.directories}
    probe.remove()
    stale = [parent / f"almanac-room-{_dead_pid()}-deadbeef" for parent in parents]
    live = [parent / f"almanac-room-{os.getpid()}-0badcafe" for parent in parents]
    for directory in (*stale, *live):
        directory.mkdir()
    try:
        group = create_run_cgroup(RoomLimits())
        assert group is not None
        group.remove()
        assert [d for d in stale if d.exists()] == []
        assert all(d.is_dir() for d in live)
    finally:
        for directory in (*stale, *live):
            if directory.exists():
                directory.rmdir()


def test_the_next_run_clears_run_folders_of_dead_processes() -> None:
    import shutil
    import tempfile

    from almanac.sandbox.room import LockedRoom

    # The room's user must reach its run folder: pytest's own temporary folders are private.
    tmp_path = Path(tempfile.mkdtemp(prefix="sweep-test-", dir="/tmp"))
    tmp_path.chmod(0o755)
    try:
        _run_beside_leftovers(tmp_path, LockedRoom)
    finally:
        shutil.rmtree(tmp_path, ignore_errors=True)


def _run_beside_leftovers(tmp_path: Path, room_type: type) -> None:

    stale = tmp_path / f"almanac-room-{_dead_pid()}-abc123"
    (stale / "plugin").mkdir(parents=True)
    (stale / "plugin" / "fetch.mjs").write_text("")
    live = tmp_path / f"almanac-room-{os.getpid()}-def456"
    live.mkdir()
    result = room_type(work_dir=tmp_path).run(
        {"fetch.mjs": b"process.stdout.write('')\n"},
        {},
        {"contract": 1, "plugin": "sweep", "now": "2026-01-01T00:00:00Z", "today": "2026-01-01"},
    )
    assert result.ok, result.reason
    assert not stale.exists()
    assert live.is_dir()
