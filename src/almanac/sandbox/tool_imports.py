"""The imports of an uploaded folder, judged by the tool's own `checkImports` (one rule, one
function: PLG-IMPORT-OUTSIDE and PLG-IMPORT-PACKAGE) in a Node process: the `ImportsJudge` of
`platform/publishing/uploads/uploads.py`."""

from __future__ import annotations

import json
import subprocess
import tempfile
from collections.abc import Mapping
from pathlib import Path

from almanac.node import node_binary
from almanac.platform.contract.problems import Problem

TOOL = Path(__file__).resolve().parents[3] / "tool" / "almanac-plugin.mjs"
TIMEOUT_SECONDS = 20

_SCRIPT = """
const [tool, root] = process.argv.slice(1);
const { checkImports } = await import(tool);
process.stdout.write(JSON.stringify(checkImports(root)));
"""


class ImportsUnchecked(RuntimeError):
    """Node could not judge the imports (the tool failed or timed out)."""


def import_problems(folder: str, files: Mapping[str, bytes]) -> list[Problem]:
    """The import problems of the plug-in files (path -> bytes) as `check` finds them: every
    import from fetch.mjs on, through its own modules. Only `.mjs` and `.js` files are written
    to a private temporary folder; nothing runs but the tool's parser."""
    with tempfile.TemporaryDirectory(prefix="almanac-imports-") as tmp:
        root = Path(tmp) / folder
        root.mkdir()
        for path, content in files.items():
            target = root / path
            target.parent.mkdir(parents=True, exist_ok=True)
            # Other files are written empty: the check asks only whether an imported file exists.
            target.write_bytes(content if path.endswith((".mjs", ".js")) else b"")
        try:
            done = subprocess.run(
                [
                    str(node_binary()),
                    "--input-type=module",
                    "-e",
                    _SCRIPT,
                    TOOL.as_uri(),
                    str(root),
                ],
                capture_output=True,
                timeout=TIMEOUT_SECONDS,
                check=False,
            )
        except subprocess.TimeoutExpired as error:
            raise ImportsUnchecked("the imports check did not end in time") from error
    if done.returncode != 0:
        raise ImportsUnchecked(done.stderr.decode("utf-8", "replace")[-300:])
    found = json.loads(done.stdout)
    problems: list[Problem] = []
    for item in found:
        named = str(item["code"])
        problems.append(
            Problem(named, str(item["message"]), path=item.get("path"), line=item.get("line"))
        )
    return problems
