"""A process killed in the middle of the write's transaction leaves nothing partial."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import replace
from datetime import UTC, date, datetime

import pytest
from sqlalchemy import Connection, func, select

from almanac.platform.store.engine import make_engine
from almanac.platform.store.plugins import plugin_status
from almanac.platform.store.reading import (
    find_record,
    last_runs,
    records_between,
    revision_history,
    run_sources,
    runs,
    series_state,
)
from almanac.platform.store.write import SourceFacts, write_run

from .conftest import REPO_ROOT, TODAY, Plug, event, value
from .test_write import D1, D2, history, stored

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
        # The child's transaction is open, every statement but the commit done: another
        # connection sees the store as it was, and is not kept waiting.
        assert stored(plug) == before
        with plug.engine.connect() as conn:
            assert len(last_runs(conn, plug.id)) == 1
        assert len(history(plug, "rate", D1)) == 1
    finally:
        os.kill(child.pid, signal.SIGKILL)
        child.wait(timeout=30)
    assert stored(plug) == before
    assert len(history(plug, "rate", D1)) == 1
    # The store is usable at once: the lock died with the process.
    assert plug.write(batch).counts.revised == 1


STEPS = ["locked", "run", "read", "inserted", "revisions", "updated", "events", "state"]


@contextmanager
def _other_connection(db_url: str) -> Iterator[Connection]:
    """A connection of another engine (another client of the database), which must never wait
    for the writer: on PostgreSQL a statement that waits more than 10 s fails instead."""
    engine = make_engine(db_url)
    try:
        with engine.connect() as conn:
            if engine.dialect.name == "postgresql":
                conn.exec_driver_sql("SET statement_timeout = 10000")
                conn.commit()
            yield conn
    finally:
        engine.dispose()


def _what_others_see(conn: Connection, plug: Plug) -> dict[str, object]:
    with conn.begin():  # one fresh snapshot per look (SQLite WAL, PostgreSQL read committed)
        mine = select(runs.c.id).where(runs.c.plugin_id == plug.id)
        record = find_record(conn, plug.id, "rate", D1)
        return {
            "runs": [r.id for r in last_runs(conn, plug.id, limit=100)],
            "sources": conn.execute(
                select(func.count()).select_from(run_sources).where(run_sources.c.run_id.in_(mine))
            ).scalar_one(),
            "records": [
                (r.series, r.date, r.discriminator, r.content, r.moved_to, r.run_id)
                for r in records_between(conn, [plug.id], D1, TODAY.replace(day=30))
            ],
            "history": len(revision_history(conn, record)) if record else 0,
            "series": {
                k: v.as_context() for k, v in series_state(conn, plug.id, ["rate"], TODAY).items()
            },
            "state": str(plugin_status(conn, plug.id).state),
        }


@pytest.mark.parametrize("ending", ["commit", "raise"])
def test_an_open_write_is_invisible_to_other_connections(
    plug: Plug, db_url: str, ending: str
) -> None:
    """Between every two statements of the write, another connection sees the store exactly as
    it was before the write began (no run row, no source, no new or revised record, no
    revision, the plug-in still Failing); after the commit it sees all of it, after a raise
    none of it."""
    plug.write([value("2026-11-01", 1), event("2026-11-05", "m")])
    plug.fail("the fetcher exited with code 2")  # Failing: the write would make it Approved
    batch = [value("2026-11-01", 2), value("2026-11-02", 3), event("2026-11-06", "m")]
    source = SourceFacts(
        "rates", "https://example.org/rates.csv", 12, "0" * 64, datetime(2026, 11, 2, tzinfo=UTC)
    )
    peeks: dict[str, dict[str, object]] = {}
    with _other_connection(db_url) as other:
        before = _what_others_see(other, plug)
        assert before["state"] == "failing" and len(before["runs"]) == 2  # type: ignore[arg-type]

        def peek(step: str) -> None:
            peeks[step] = _what_others_see(other, plug)
            if ending == "raise" and step == STEPS[-1]:
                raise RuntimeError("crash before the commit")

        facts = replace(plug.facts(), node_version="v24.19.0", sources=(source,))
        write = {
            "plugin_id": plug.id,
            "version_id": plug.version_id,
            "digest": plug.digest,
            "manifest": plug.manifest,
            "run": facts,
            "batch": batch,
            "fault": peek,
        }
        if ending == "raise":
            with pytest.raises(RuntimeError, match="crash before the commit"):
                write_run(plug.engine, **write)  # type: ignore[arg-type]
        else:
            result = write_run(plug.engine, **write)  # type: ignore[arg-type]
        assert list(peeks) == STEPS
        for step, seen in peeks.items():
            assert seen == before, step
        after = _what_others_see(other, plug)

    if ending == "raise":
        assert after == before
        return
    assert after["runs"] == [result.run_id, *before["runs"]]  # type: ignore[list-item]
    assert after["sources"] == 1 and after["history"] == 2 and after["state"] == "approved"
    records = {(r[0], r[1]): r for r in after["records"]}  # type: ignore[union-attr, index]
    assert records["rate", D1][3]["fields"] == {"rate": 2}
    assert records["rate", D1][5] == result.run_id
    assert records["rate", D2][3]["fields"] == {"rate": 3}
    assert records["ev", date(2026, 11, 5)][4] == date(2026, 11, 6)  # moved
    assert records["ev", date(2026, 11, 6)][5] == result.run_id
