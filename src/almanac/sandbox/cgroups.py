"""One control group per locked-room run: memory and task limits, the OOM count, and a kill
that leaves nothing running.

Two hosts are supported:
- cgroup v1 with the `memory` and `pids` controllers mounted (the group is made under the
  service's own group in each hierarchy, so the host's limits on the service still apply);
- a delegated cgroup v2 subtree whose `cgroup.subtree_control` enables `memory` and `pids`
  (given explicitly, or the service's own group when it already delegates them).
Where neither is available the room runs on its rlimits and reports the layer as inactive.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import signal
import time
from dataclasses import dataclass
from pathlib import Path

from almanac.sandbox.limits import RoomLimits
from almanac.sandbox.stale import run_prefix, stale_entries


def _mounts() -> list[tuple[str, Path, set[str]]]:
    """(filesystem type, mount point, super options) of every cgroup mount."""
    found = []
    for line in Path("/proc/self/mountinfo").read_text().splitlines():
        left, _, right = line.partition(" - ")
        fields, tail = left.split(), right.split()
        if not tail or tail[0] not in ("cgroup", "cgroup2"):
            continue
        options = set(tail[2].split(",")) if len(tail) > 2 else set()
        found.append((tail[0], Path(fields[4]), options))
    return found


def _own_groups() -> dict[str, str]:
    """Controller name (or '' for v2) -> this process's group path, from /proc/self/cgroup."""
    groups = {}
    for line in Path("/proc/self/cgroup").read_text().splitlines():
        _, controllers, path = line.split(":", 2)
        for name in controllers.split(",") if controllers else [""]:
            groups[name] = path
    return groups


def _write(path: Path, value: str) -> None:
    with open(path, "w") as handle:
        handle.write(value)


def _read_counter(path: Path, key: str) -> int:
    with contextlib.suppress(OSError):
        for line in path.read_text().splitlines():
            name, _, value = line.partition(" ")
            if name == key:
                return int(value)
    return 0


@dataclass
class RunCgroup:
    """The groups of one run. `directories` are the leaf groups the room's processes join."""

    version: int
    memory_dir: Path | None
    pids_dir: Path | None

    @property
    def directories(self) -> list[Path]:
        unique = []
        for path in (self.memory_dir, self.pids_dir):
            if path is not None and path not in unique:
                unique.append(path)
        return unique

    def attach(self, pid: int) -> None:
        """Move one process into every group of the run (before it can fork)."""
        for directory in self.directories:
            _write(directory / "cgroup.procs", str(pid))

    def pids(self) -> set[int]:
        found: set[int] = set()
        for directory in self.directories:
            with contextlib.suppress(OSError):
                found.update(int(p) for p in (directory / "cgroup.procs").read_text().split())
        return found

    def oom_kills(self) -> int:
        if self.memory_dir is None:
            return 0
        if self.version == 1:
            return _read_counter(self.memory_dir / "memory.oom_control", "oom_kill")
        return _read_counter(self.memory_dir / "memory.events", "oom_kill")

    def memory_hit_limit(self) -> bool:
        """Whether the run's memory ever reached the limit (charges refused or reclaimed)."""
        if self.memory_dir is None:
            return False
        if self.version == 1:
            with contextlib.suppress(OSError, ValueError):
                return int((self.memory_dir / "memory.failcnt").read_text()) > 0
            return False
        return _read_counter(self.memory_dir / "memory.events", "max") > 0

    def task_limit_hits(self) -> int:
        if self.pids_dir is None:
            return 0
        return _read_counter(self.pids_dir / "pids.events", "max")

    def kill(self, spare: int | None = None, deadline_seconds: float = 5.0) -> bool:
        """SIGKILL every process in the run's groups but `spare` until none is left; True when
        only `spare` (or nothing) remains. Sparing bubblewrap lets it reap its own init, so no
        zombie is handed to the host's init."""
        if self.version == 2 and spare is None and self.pids_dir is not None:
            with contextlib.suppress(OSError):
                _write(self.pids_dir / "cgroup.kill", "1")
        give_up = time.monotonic() + deadline_seconds
        while True:
            remaining = self.pids() - {spare}
            if not remaining:
                return True
            for pid in remaining:
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.kill(pid, signal.SIGKILL)
            if time.monotonic() > give_up:
                return False
            time.sleep(0.002)

    def remove(self) -> None:
        """Remove the emptied groups (a v1 group stays busy a moment while zombies are reaped)."""
        for directory in self.directories:
            for _ in range(200):
                try:
                    directory.rmdir()
                    break
                except FileNotFoundError:
                    break
                except OSError:
                    time.sleep(0.005)


def _sweep_stale(parent: Path) -> None:
    # A group still holding tasks refuses rmdir and stays.
    for child in stale_entries(parent):
        with contextlib.suppress(OSError):
            child.rmdir()


def _make(directory: Path) -> Path:
    _sweep_stale(directory.parent)
    directory.mkdir(mode=0o755)
    return directory


def create_run_cgroup(limits: RoomLimits, delegated: Path | None = None) -> RunCgroup | None:
    """A fresh group for one run with `limits` applied, or None when the host offers none.

    The memory limit covers Node, its buffers and the temporary folder's pages; swap is capped
    too where the host accounts it. The task limit counts every thread of the room, bubblewrap's
    two processes included.
    """
    name = f"{run_prefix()}{secrets.token_hex(4)}"
    if delegated is not None:
        return _create_v2(delegated, name, limits)
    mounts = _mounts()
    own = _own_groups()
    v1 = {opt: point for kind, point, opts in mounts if kind == "cgroup" for opt in opts}
    if "memory" in v1 or "pids" in v1:
        return _create_v1(v1, own, name, limits)
    for kind, point, _ in mounts:
        if kind == "cgroup2":
            parent = point / own.get("", "/").lstrip("/")
            controls = (parent / "cgroup.subtree_control").read_text().split()
            if {"memory", "pids"} <= set(controls):
                return _create_v2(parent, name, limits)
    return None


def _create_v1(
    mounts: dict[str, Path], own: dict[str, str], name: str, limits: RoomLimits
) -> RunCgroup | None:
    memory_dir = pids_dir = None
    try:
        if "memory" in mounts:
            memory_dir = _make(mounts["memory"] / own.get("memory", "/").lstrip("/") / name)
            _write(memory_dir / "memory.limit_in_bytes", str(limits.memory_bytes))
            with contextlib.suppress(OSError):  # only where swap accounting is on
                _write(memory_dir / "memory.memsw.limit_in_bytes", str(limits.memory_bytes))
        if "pids" in mounts:
            pids_dir = _make(mounts["pids"] / own.get("pids", "/").lstrip("/") / name)
            _write(pids_dir / "pids.max", str(limits.tasks))
    except OSError:
        RunCgroup(1, memory_dir, pids_dir).remove()
        return None
    return RunCgroup(1, memory_dir, pids_dir)


def _create_v2(parent: Path, name: str, limits: RoomLimits) -> RunCgroup | None:
    try:
        directory = _make(parent / name)
    except OSError:
        return None
    group = RunCgroup(2, directory, directory)
    try:
        _write(directory / "memory.max", str(limits.memory_bytes))
        with contextlib.suppress(OSError):
            _write(directory / "memory.swap.max", "0")
        _write(directory / "pids.max", str(limits.tasks))
    except OSError:
        group.remove()
        return None
    return group
