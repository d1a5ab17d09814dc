"""`almanac up`'s parts kept running (issue 31): a part that ends is started again after a
back-off that doubles, its state is kept for `/health`, and a part that keeps crashing stops
the service. Real processes; the supervisor's clock is its argument."""

from __future__ import annotations

import os
import sys
from pathlib import Path

from almanac.supervisor import (
    CRASHES_ALLOWED,
    MAX_BACKOFF_SECONDS,
    Supervisor,
    backoff,
    read_parts,
)

CRASHING = [sys.executable, "-c", "import sys; sys.exit(3)"]
SLEEPING = [sys.executable, "-c", "import time; time.sleep(120)"]


def _ended(supervisor: Supervisor, name: str) -> None:
    process = supervisor.parts[name].process
    assert process is not None
    process.wait(timeout=30)


def test_a_crashed_part_starts_again_after_a_doubling_backoff_while_others_run(
    tmp_path: Path,
) -> None:
    lines: list[str] = []
    supervisor = Supervisor(os.environ, tmp_path / "parts.json", lines.append)
    try:
        supervisor.start("api", SLEEPING)
        supervisor.start("dagster-daemon", CRASHING)
        api = supervisor.parts["api"].process
        now = 1000.0
        waits = []
        for crash in range(1, CRASHES_ALLOWED + 1):
            _ended(supervisor, "dagster-daemon")
            assert supervisor.poll(now) is None
            assert read_parts(tmp_path) == {"api": "running", "dagster-daemon": "restarting"}
            wait = supervisor.parts["dagster-daemon"].restart_at - now  # type: ignore[operator]
            waits.append(wait)
            assert supervisor.poll(now + wait - 0.1) is None
            assert supervisor.parts["dagster-daemon"].process is None, "started too soon"
            assert supervisor.poll(now + wait) is None
            assert supervisor.parts["dagster-daemon"].restarts == crash
            now += wait
        assert waits == [1.0, 2.0, 4.0, 8.0, 16.0]
        assert any("dagster-daemon ended with status 3; starting it in 1 s" in x for x in lines)
        assert api is supervisor.parts["api"].process and api.poll() is None, "the API ran on"
        # One crash more within ten minutes: it keeps crashing, and the service stops.
        _ended(supervisor, "dagster-daemon")
        why = supervisor.poll(now)
        assert why is not None and why.startswith("dagster-daemon ended 6 times in 10 minutes")
    finally:
        supervisor.stop_all()
    assert read_parts(tmp_path) is None, "the state goes with the service"


def test_parts_named_before_they_start_are_starting_until_they_start(tmp_path: Path) -> None:
    supervisor = Supervisor(os.environ, tmp_path / "parts.json", lambda line: None)
    try:
        supervisor.expect(["code-server", "api", "dagster-daemon"])
        assert read_parts(tmp_path) == dict.fromkeys(
            ["code-server", "api", "dagster-daemon"], "starting"
        )
        supervisor.start("api", SLEEPING)
        assert supervisor.poll(0.0) is None, "a part not started yet is no crash"
        assert read_parts(tmp_path) == {
            "code-server": "starting",
            "api": "running",
            "dagster-daemon": "starting",
        }
        assert supervisor.parts["code-server"].process is None
    finally:
        supervisor.stop_all()


def test_crashes_outside_the_window_are_forgotten(tmp_path: Path) -> None:
    supervisor = Supervisor(os.environ, tmp_path / "parts.json", lambda line: None)
    try:
        supervisor.start("dagster-webserver", CRASHING)
        now = 0.0
        for _ in range(CRASHES_ALLOWED * 2):
            _ended(supervisor, "dagster-webserver")
            assert supervisor.poll(now) is None
            now += 601.0  # each crash alone in its ten minutes
            assert supervisor.poll(now) is None
        assert supervisor.parts["dagster-webserver"].restarts == CRASHES_ALLOWED * 2
    finally:
        supervisor.stop_all()


def test_the_backoff_is_capped() -> None:
    assert [backoff(n) for n in (1, 2, 3, 7, 8, 20)] == [1, 2, 4, 60, 60, 60]
    assert MAX_BACKOFF_SECONDS == 60


def test_a_parts_file_of_a_supervisor_that_is_gone_is_not_read(tmp_path: Path) -> None:
    supervisor = Supervisor(os.environ, tmp_path / "parts.json", lambda line: None)
    supervisor.start("api", SLEEPING)
    try:
        assert read_parts(tmp_path) == {"api": "running"}
        kept = (tmp_path / "parts.json").read_text()
    finally:
        supervisor.stop_all()
    gone = os.fork()
    if gone == 0:
        os._exit(0)
    os.waitpid(gone, 0)
    (tmp_path / "parts.json").write_text(kept.replace(str(os.getpid()), str(gone)))
    assert read_parts(tmp_path) is None
