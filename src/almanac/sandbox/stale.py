"""Leftovers of runs whose process died mid-run (a service killed, a power cut): the folders
and control groups of a run are named `almanac-room-<pid>-...` after the process that made
them, so the next run can tell which belong to a process that is gone."""

from __future__ import annotations

import contextlib
import os
import re
from pathlib import Path

PREFIX = "almanac-room-"
_NAME = re.compile(re.escape(PREFIX) + r"(\d+)-.+")


def run_prefix() -> str:
    """The name prefix of this process's run folders and groups."""
    return f"{PREFIX}{os.getpid()}-"


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # alive, owned by another user
        return True
    return True


def stale_entries(parent: Path) -> list[Path]:
    """The run folders or groups under `parent` made by a process no longer alive."""
    found: list[Path] = []
    with contextlib.suppress(OSError):
        for child in parent.iterdir():
            owner = _NAME.fullmatch(child.name)
            if owner and not _alive(int(owner.group(1))):
                found.append(child)
    return found
