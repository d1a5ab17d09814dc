"""Peak resident memory of one piece of work, measured in a fresh Python process of its own.

A test runs a module as a child (`run_child`); the child sets up, then measures only its work
with `peak_growth`: `ru_maxrss` read before and after, so nothing the test process did earlier
can hide or add to the figure.
"""

from __future__ import annotations

import gc
import json
import resource
import subprocess
import sys
from collections.abc import Callable, Mapping
from typing import Any, TypeVar

from tests.conftest import REPO

T = TypeVar("T")
MIB = 1 << 20


def peak_growth(work: Callable[[], T]) -> tuple[T, int]:
    """Run `work`; its result, and how many bytes it raised this process's peak resident
    memory by (`ru_maxrss` is in KiB on Linux)."""
    gc.collect()
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    result = work()
    after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return result, (after - before) * 1024


def run_child(module: str, case: Mapping[str, Any], timeout: float = 300) -> dict[str, Any]:
    """Run `python -m <module> '<case as JSON>'` from the repository; the JSON object it prints
    on its last line of output."""
    done = subprocess.run(
        [sys.executable, "-m", module, json.dumps(case)],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=timeout,
    )
    assert done.returncode == 0, done.stderr[-4000:]
    answer: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return answer


def print_child_answer(answer: Mapping[str, Any]) -> None:
    """What a child prints for `run_child` to read: one JSON line."""
    json.dump(answer, sys.stdout)
    print()
