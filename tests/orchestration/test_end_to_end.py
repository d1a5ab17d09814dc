"""End to end on PostgreSQL: a real example plug-in registered from its folder, approved by its
digest, started by the minute sensor, run by Dagster through the real downloader (TLS, test CA,
the example's fixture files served under its manifest's URL paths) and the real locked room,
its records read back from the store; then a changed covered file, then a broken source."""

from __future__ import annotations

import json
import shutil
from datetime import UTC, datetime, timedelta
from pathlib import Path

import dagster as dg
import pytest
from sqlalchemy import Engine, select

from almanac.assets.tags import TAG_PLUGIN, TAG_TRIGGER
from almanac.orchestration.folders import register_folder
from almanac.platform.lifecycle import TransitionRefused
from almanac.platform.store.models import Record
from tests.conftest import REPO
from tests.orchestration.harness import (
    Orchestrator,
    SourceServer,
    approve,
    example_routes,
    hosts_of,
    state_of,
    store_runs,
)

EXAMPLE = REPO / "examples" / "uk-bank-holidays"
PLUGIN = "uk-bank-holidays"
SOURCE = "bank-holidays-json"
# The fixture's own moment (fixtures/context.json), so the run sees the day its files were kept.
T0 = datetime(2022, 11, 4, 12, 0, tzinfo=UTC)
SIX_AM_LONDON = [datetime(2022, 11, day, 6, 0, tzinfo=UTC) for day in (5, 6, 7, 8)]


def stored_records(engine: Engine) -> set[tuple[str, str, str]]:
    table = Record.__table__
    query = select(table.c.series, table.c.date, table.c.discriminator).where(
        table.c.plugin_id == PLUGIN, table.c.withdrawn.is_(False)
    )
    with engine.connect() as conn:
        return {(s, d.isoformat(), k) for s, d, k in conn.execute(query)}


def fixture_records() -> set[tuple[str, str, str]]:
    lines = (EXAMPLE / "fixtures" / "records.jsonl").read_text().splitlines()
    return {(r["series"], r["date"], r["id"]) for r in map(json.loads, lines)}


def launched(orch: Orchestrator, at: datetime) -> list[tuple[str, str, str]]:
    done = orch.minute(at)
    return [(r.tags[TAG_PLUGIN], r.tags[TAG_TRIGGER], r.status.value) for r in done.launched]


def test_an_example_runs_end_to_end_on_postgresql(tmp_path: Path, postgres_engine: Engine) -> None:
    engine = postgres_engine
    with (
        SourceServer(hosts_of(EXAMPLE)) as server,
        Orchestrator.open(tmp_path, engine, downloader=server.downloader, start=T0) as orch,
    ):
        server.serve_example(EXAMPLE)
        plugin_id, digest = register_folder(engine, EXAMPLE, now=T0)
        assert plugin_id == PLUGIN
        assert state_of(engine, PLUGIN) == "pending"
        assert launched(orch, T0) == [], "a Pending plug-in ran"

        # Approved by its digest: the sensor starts it at once; the run writes its records.
        approve(engine, PLUGIN, T0 + timedelta(minutes=1), digest=digest)
        assert launched(orch, T0 + timedelta(minutes=1)) == [(PLUGIN, "first", "SUCCESS")]
        [first] = store_runs(engine, PLUGIN)
        assert (first["outcome"], first["digest"], first["backfill"]) == ("success", digest, True)
        assert first["today"].isoformat() == "2022-11-04"
        assert stored_records(engine) == fixture_records()
        assert first["new"] == len(fixture_records())
        path = next(iter(example_routes(EXAMPLE)))
        assert server.requests == [path]

        # On schedule (06:00 in London) the same files give the same records.
        assert launched(orch, SIX_AM_LONDON[0]) == [(PLUGIN, "schedule", "SUCCESS")]
        second = store_runs(engine, PLUGIN)[-1]
        assert (second["new"], second["unchanged"]) == (0, len(fixture_records()))

        # A covered file changes (only `version`): Pending, nothing runs, not even on schedule.
        changed = tmp_path / "v2" / PLUGIN
        shutil.copytree(EXAMPLE, changed)
        manifest = json.loads((changed / "plugin.json").read_text())
        manifest["version"] = "1.0.1"
        (changed / "plugin.json").write_text(json.dumps(manifest, indent=2) + "\n")
        _, new_digest = register_folder(engine, changed, now=SIX_AM_LONDON[0] + timedelta(hours=1))
        assert new_digest != digest
        assert state_of(engine, PLUGIN) == "pending"
        for at in (SIX_AM_LONDON[1] - timedelta(minutes=1), SIX_AM_LONDON[1], SIX_AM_LONDON[2]):
            assert launched(orch, at) == [], f"the changed plug-in ran at {at} unapproved"
        with pytest.raises(TransitionRefused):
            approve(engine, PLUGIN, SIX_AM_LONDON[2], digest=digest)  # the old page's digest
        assert len(store_runs(engine, PLUGIN)) == 2
        approve(engine, PLUGIN, SIX_AM_LONDON[2] + timedelta(minutes=1), digest=new_digest)
        assert launched(orch, SIX_AM_LONDON[2] + timedelta(minutes=1)) == [
            (PLUGIN, "approval", "SUCCESS")
        ]
        assert store_runs(engine, PLUGIN)[-1]["digest"] == new_digest

        # A source breaks: the run fails with the download reason, nothing is written, Failing.
        records_before = stored_records(engine)
        server.fail(path, 404)
        assert launched(orch, SIX_AM_LONDON[3]) == [(PLUGIN, "schedule", "FAILURE")]
        failed = store_runs(engine, PLUGIN)[-1]
        assert failed["outcome"] == "failure"
        assert failed["reason"] == (
            f"could not download {SOURCE}: the server answered HTTP 404, not 200"
        )
        assert state_of(engine, PLUGIN) == "failing"
        assert stored_records(engine) == records_before
        failed_runs = orch.instance.get_runs(dg.RunsFilter(statuses=[dg.DagsterRunStatus.FAILURE]))
        assert len(failed_runs) == 1

        # The source is back; the retry 30 minutes later succeeds and clears Failing.
        server.serve_example(EXAMPLE)
        assert launched(orch, SIX_AM_LONDON[3] + timedelta(minutes=29)) == []
        assert launched(orch, SIX_AM_LONDON[3] + timedelta(minutes=30)) == [
            (PLUGIN, "retry", "SUCCESS")
        ]
        last = store_runs(engine, PLUGIN)[-1]
        assert (last["outcome"], last["reason"]) == ("success", None)
        assert state_of(engine, PLUGIN) == "approved"
        assert stored_records(engine) == records_before
