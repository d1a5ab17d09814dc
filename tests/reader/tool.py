"""Run exported functions of the tool (tool/almanac-plugin.mjs) under real Node 24."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

SCRIPT = Path(__file__).with_name("tool_call.mjs")


def call_tool(node: Path, name: str, calls: list[list[Any]]) -> list[Any]:
    """The results of the tool's `name(*args)` for each argument list, in one Node process."""
    done = subprocess.run(
        [str(node), str(SCRIPT)],
        input=json.dumps({"name": name, "calls": calls}),
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    results = json.loads(done.stdout)
    assert len(results) == len(calls)
    return results
