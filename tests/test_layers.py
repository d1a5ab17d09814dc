"""The layers of README's Layout, as the import-linter contracts of pyproject.toml state them:
the domain (`almanac.platform`) imports no framework, nothing that talks to the world and no
adapter; inside it, publishing stands above the audience and both above the store, and
publishing's steps stand in the order of its docstring. A broken contract fails here with every
offending import named, so a plain pytest run catches it as `scripts/test.sh`'s `lint-imports`
does."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import almanac

REPO = Path(__file__).resolve().parent.parent


def test_every_layer_contract_is_kept() -> None:
    # The package imported here is the one judged (a worktree's src, not an installed copy);
    # a process of its own, as import-linter configures logging for the whole process.
    source = Path(almanac.__file__).resolve().parents[1]
    linter = Path(sys.executable).parent / "lint-imports"
    done = subprocess.run(
        [str(linter), str(REPO / "pyproject.toml"), "--no-cache", "--no-logo"],
        cwd=REPO,
        env={**os.environ, "PYTHONPATH": str(source)},
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "0 broken" in done.stdout
