"""The parts `almanac up` runs, kept running (issue 31): a part that ends on its own is started
again after a back-off and the crash is printed; the others, the API first, go on answering.

The rule: a part's restarts wait 1, 2, 4, ... seconds, at most `MAX_BACKOFF_SECONDS`, doubling
with each crash in the last `CRASH_WINDOW_SECONDS`; a part that crashes more than
`CRASHES_ALLOWED` times in that window keeps crashing, and `almanac up` then stops everything
and exits 1 (a broken installation or configuration, which restarts would only hide). Ctrl-C
or SIGTERM stops everything at any time.

What each part is doing (starting, running, restarting) is kept in `PARTS_FILE` in the
service's home, rewritten at each change, so that `/health` can say which part is down
(`read_parts`): the API workers are processes of their own and know nothing else of their
siblings.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import time
from collections import deque
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

PARTS_FILE = "parts.json"
CRASH_WINDOW_SECONDS = 600.0
CRASHES_ALLOWED = 5
MAX_BACKOFF_SECONDS = 60.0
STOP_SECONDS = 20

RUNNING = "running"
RESTARTING = "restarting"
STARTING = "starting"


@dataclass
class Part:
    """One process of the service, with its crashes in the window and its next start."""

    name: str
    command: list[str]
    process: subprocess.Popen[bytes] | None = None
    crashes: deque[float] = field(default_factory=deque)
    restart_at: float | None = None
    restarts: int = 0


def backoff(crashes_in_window: int) -> float:
    """Seconds before a crashed part starts again, after its n-th crash in the window."""
    return float(min(MAX_BACKOFF_SECONDS, 2 ** max(0, crashes_in_window - 1)))


class Supervisor:
    """Starts the parts, restarts crashed ones, stops them all; see the module."""

    def __init__(
        self,
        env: Mapping[str, str],
        parts_file: Path,
        log: Callable[[str], None],
        start: Callable[[list[str], Mapping[str, str]], subprocess.Popen[bytes]] | None = None,
    ) -> None:
        self._env = dict(env)
        self._parts_file = parts_file
        self._log = log
        self._start = start or _start_in_own_group
        self.parts: dict[str, Part] = {}

    def expect(self, names: list[str]) -> None:
        """Name the parts before they start: the parts file shows those not started yet as
        starting."""
        for name in names:
            self.parts.setdefault(name, Part(name, []))
        self._write_parts()

    def start(self, name: str, command: list[str]) -> subprocess.Popen[bytes]:
        part = self.parts.setdefault(name, Part(name, command))
        part.command = command
        part.process = self._start(part.command, self._env)
        part.restart_at = None
        self._write_parts()
        return part.process

    def poll(self, now: float) -> str | None:
        """One look at every part: note crashes, start the due restarts. Returns why the
        service must stop (a part that keeps crashing), or None."""
        for part in self.parts.values():
            if part.process is not None and part.process.poll() is not None:
                why = self._crashed(part, now)
                if why is not None:
                    return why
            if part.restart_at is not None and now >= part.restart_at:
                part.restarts += 1
                self.start(part.name, part.command)
                self._log(f"almanac: {part.name} started again (restart {part.restarts})")
        return None

    def _crashed(self, part: Part, now: float) -> str | None:
        assert part.process is not None
        status = part.process.returncode
        part.process = None
        part.crashes.append(now)
        while part.crashes and part.crashes[0] < now - CRASH_WINDOW_SECONDS:
            part.crashes.popleft()
        if len(part.crashes) > CRASHES_ALLOWED:
            return (
                f"{part.name} ended {len(part.crashes)} times in "
                f"{CRASH_WINDOW_SECONDS / 60:.0f} minutes (last status {status})"
            )
        wait = backoff(len(part.crashes))
        part.restart_at = now + wait
        self._log(f"almanac: {part.name} ended with status {status}; starting it in {wait:.0f} s")
        self._write_parts()
        return None

    def stop_all(self) -> None:
        """SIGTERM to each part's process group, then SIGKILL to what is left after a while."""
        running = [p.process for p in self.parts.values() if p.process is not None]
        for process in running:
            if process.poll() is None:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(process.pid, signal.SIGTERM)
        deadline = time.monotonic() + STOP_SECONDS
        for process in running:
            with contextlib.suppress(subprocess.TimeoutExpired):
                process.wait(timeout=max(0.1, deadline - time.monotonic()))
            with contextlib.suppress(ProcessLookupError):
                os.killpg(process.pid, signal.SIGKILL)
            process.wait()
        with contextlib.suppress(FileNotFoundError):
            self._parts_file.unlink()

    def _write_parts(self) -> None:
        state = {
            "supervisor": os.getpid(),
            "parts": {
                name: {"state": _state(part), "restarts": part.restarts}
                for name, part in self.parts.items()
            },
        }
        partial = self._parts_file.with_suffix(f".{os.getpid()}.tmp")
        partial.write_text(json.dumps(state, sort_keys=True))
        partial.replace(self._parts_file)


def _state(part: Part) -> str:
    if part.process is not None:
        return RUNNING
    return RESTARTING if part.restart_at is not None else STARTING


def _start_in_own_group(command: list[str], env: Mapping[str, str]) -> subprocess.Popen[bytes]:
    # Own process group each, so one signal reaches a part's own children too.
    return subprocess.Popen(command, env=dict(env), start_new_session=True)


def read_parts(home: Path) -> dict[str, str] | None:
    """Each part's state as `almanac up` last wrote it ("starting", "running" or
    "restarting"), or None when no live `almanac up` keeps this home (the API started some
    other way, or a supervisor that was killed)."""
    try:
        kept = json.loads((home / PARTS_FILE).read_text())
        supervisor = int(kept["supervisor"])
        os.kill(supervisor, 0)
    except (OSError, ValueError, KeyError, TypeError):
        return None
    return {name: str(part["state"]) for name, part in kept["parts"].items()}
