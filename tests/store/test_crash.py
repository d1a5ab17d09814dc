"""A process killed in the middle of the write's transaction leaves nothing partial."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys

from .conftest import REPO_ROOT, Plug, event, value
from .test_write import D1, history, stored

CHILD = r"""
import json, sys, time
from datetime import date, datetime, UTC
from types import SimpleNamespace
from almanac.platform.contract.manifest import Series
from almanac.platform.lifecycle import RunTrigger
from almanac.platform.store.engine import make_engine
from almanac.platform.store.write import RunFacts, write_run

args = json.loads(sys.argv[1])
series = tuple(
    Series(key=k, kind=kind, cadence="daily", dates="observation", name={"en": k},
           fields=("rate",) if kind == "value" else ())
    for k, kind in (("rate", "value"), ("ev", "event"), ("news", "item"))
)

def hang(step):
    if step == args["step"]:
        print("READY", flush=True)
        time.sleep(120)

now = datetime(2026, 11, 3, tzinfo=UTC)
write_run(
    make_engine(args["url"]), plugin_id=args["plugin"], version_id=args["version"],
    digest=args["digest"], manifest=SimpleNamespace(series=series),
    run=RunFacts(today=date(2026, 11, 2), trigger=RunTrigger.SCHEDULE, started_at=now, now=now),
    batch=args["batch"], fault=hang,
)
"""


def test_killed_writer_leaves_nothing(plug: Plug, db_url: str) -> None:
    plug.write([value("2026-11-01", 1), event("2026-11-05", "m")])
    before = stored(plug)
    batch = [value("2026-11-01", 2), value("2026-11-02", 3), event("2026-11-06", "m")]
    args = {
        "url": db_url,
        "plugin": plug.id,
        "version": plug.version_id,
        "digest": plug.digest,
        "batch": batch,
        "step": "updated",
    }
    child = subprocess.Popen(
        [sys.executable, "-c", CHILD, json.dumps(args)],
        stdout=subprocess.PIPE,
        cwd=REPO_ROOT,
        env={**os.environ, "PYTHONPATH": str(REPO_ROOT / "src")},
    )
    try:
        assert child.stdout is not None
        assert child.stdout.readline().strip() == b"READY"
    finally:
        os.kill(child.pid, signal.SIGKILL)
        child.wait(timeout=30)
    assert stored(plug) == before
    assert len(history(plug, "rate", D1)) == 1
    # The store is usable at once: the lock died with the process.
    assert plug.write(batch).counts.revised == 1
