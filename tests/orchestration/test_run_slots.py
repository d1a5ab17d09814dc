"""Run slots past one (`ALMANAC_RUN_SLOTS`): up to N plug-in runs go at once, never two of one
plug-in, never beside a deployment; through the real Dagster instance of the harness (the
service's dagster.yaml, its run coordinator and pool, Dagster's storage on PostgreSQL), with
each launched run executing in a fork of its own so that runs let go together really go at
once. A source that answers only once two requests wait proves two runs were in flight."""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Iterator, Sequence
from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from typing import Any

import dagster as dg
from dagster._core.test_utils import freeze_time
from sqlalchemy import Engine

from almanac.assets.control import deploy, run_slots
from almanac.assets.tags import TAG_PLUGIN
from almanac.orchestration.folders import register_folder
from almanac.platform.lifecycle import RunTrigger
from almanac.platform.store.engine import write_transaction
from almanac.platform.store.run_requests import request_run
from almanac.platform.store.versions import approved_code
from almanac.settings import Settings
from tests.orchestration.harness import (
    Handler,
    Orchestrator,
    SourceServer,
    approve,
    source_host,
    source_path,
    store_runs,
    write_plugin,
)
from tests.orchestration.test_backfill_and_deploy import backfill_iteration, ui_backfill

T0 = datetime(2026, 5, 4, 11, 0, tzinfo=UTC)


@contextlib.contextmanager
def two_slots(
    tmp_path: Path, engine: Engine, ids: Sequence[str]
) -> Iterator[tuple[Orchestrator, SourceServer]]:
    """An orchestrator with two run slots whose runs go in threads, and the plug-ins `ids`
    registered and approved (their first runs asked for)."""
    with (
        SourceServer([source_host(i) for i in ids]) as server,
        Orchestrator.open(
            tmp_path,
            engine,
            downloader=server.downloader,
            start=T0,
            slots=2,
            dagster_on_store=True,
            concurrent=True,
        ) as orch,
    ):
        for plugin_id in ids:
            folder = write_plugin(
                tmp_path / "plugins", plugin_id, schedule="0 8 * * *", timezone="UTC"
            )
            register_folder(engine, folder, now=T0)
            approve(engine, plugin_id, T0)
        yield orch, server


def meeting(server: SourceServer, ids: Sequence[str], parties: int) -> threading.Barrier:
    """Serve each plug-in's source only once `parties` downloads wait at once; alone, a
    download is refused after 10 seconds (503)."""
    barrier = threading.Barrier(parties, timeout=10)

    def route(handler: Handler) -> None:
        try:
            barrier.wait()
        except threading.BrokenBarrierError:
            handler.reply(503, b"alone")
            return
        handler.reply(200, b"ok\n")

    for plugin_id in ids:
        server.answer(source_path(plugin_id), route)
    return barrier


def launched_plugins(runs: Sequence[dg.DagsterRun]) -> list[str]:
    return sorted(r.tags[TAG_PLUGIN] for r in runs)


def test_two_slots_let_two_plugins_run_at_once(tmp_path: Path, postgres_engine: Engine) -> None:
    with two_slots(tmp_path, postgres_engine, ["one", "two"]) as (orch, server):
        meeting(server, ["one", "two"], parties=2)
        created = orch.tick(T0)
        launched = orch.dequeue()
        assert launched_plugins(launched) == ["one", "two"], "the queue let one run go, not two"
        orch.join_runs()
        assert {orch.run(r.run_id).status for r in created} == {dg.DagsterRunStatus.SUCCESS}
        for plugin_id in ("one", "two"):
            assert [r["outcome"] for r in store_runs(postgres_engine, plugin_id)] == ["success"]


def test_two_slots_never_run_one_plugin_twice_at_once(
    tmp_path: Path, postgres_engine: Engine
) -> None:
    """Two days of one plug-in backfilled from the Dagster UI (runs with none of the service's
    tags) and another plug-in's run, all queued: the queue lets one run of each plug-in go."""
    with two_slots(tmp_path, postgres_engine, ["one", "two"]) as (orch, server):
        for plugin_id in ("one", "two"):
            server.serve(source_path(plugin_id), b"ok\n")
        first = orch.tick(T0)
        assert len(orch.dequeue()) == 2
        orch.join_runs()
        assert {orch.run(r.run_id).status for r in first} == {dg.DagsterRunStatus.SUCCESS}
        later = T0 + timedelta(hours=1)
        orch.clock.set(later)
        for day in (date(2026, 5, 1), date(2026, 5, 2)):
            with freeze_time(later):
                ui_backfill(orch, "one", day)
        backfill_iteration(orch)
        backfilled = orch.queued()
        assert len(backfilled) == 2
        # The run coordinator named the plug-in of each run the UI's backfill queued.
        assert [r.tags.get(TAG_PLUGIN) for r in backfilled] == ["one", "one"]
        ask_resume(postgres_engine, "two")
        resumed = orch.tick(later)
        assert launched_plugins(resumed) == ["two"]
        going = orch.dequeue()
        assert launched_plugins(going) == ["one", "two"], "two runs of one plug-in went together"
        assert [r.tags[TAG_PLUGIN] for r in orch.queued()] == ["one"]
        orch.join_runs()
        rest = orch.dequeue()
        assert launched_plugins(rest) == ["one"]
        orch.join_runs()
        statuses = {orch.run(r.run_id).status for r in [*backfilled, *resumed]}
        assert statuses == {dg.DagsterRunStatus.SUCCESS}


def test_a_deployment_waits_for_every_running_run_and_holds_every_slot(
    tmp_path: Path, postgres_engine: Engine
) -> None:
    with two_slots(tmp_path, postgres_engine, ["one", "two"]) as (orch, server):
        gate = threading.Event()

        def held_source(handler: Handler) -> None:
            gate.wait(60)
            handler.reply(200, b"ok\n")

        for plugin_id in ("one", "two"):
            server.answer(source_path(plugin_id), held_source)
        created = orch.tick(T0)
        assert launched_plugins(orch.dequeue()) == ["one", "two"]
        seen: dict[str, Any] = {}

        def migrate(url: str) -> None:
            seen["statuses"] = sorted(orch.run(r.run_id).status.value for r in created)
            seen["slots"] = run_slots(orch.instance)
            ask_resume(postgres_engine, "one")
            # Inside the deployment: a run asked for now waits in the queue.
            seen["created"] = launched_plugins(orch.tick(T0 + timedelta(minutes=5)))
            seen["launched"] = launched_plugins(orch.dequeue())

        settings = Settings(
            home=tmp_path, api_port=0, dagster_port=0, database_url="x", base_url="x", run_slots=2
        )
        deploying = threading.Thread(
            target=deploy,
            args=(orch.instance, settings),
            kwargs={"migrate": migrate, "poll_seconds": 0.2, "say": lambda _: None},
        )
        deploying.start()
        time.sleep(2)
        assert "statuses" not in seen, "the deployment migrated beside running runs"
        gate.set()
        deploying.join(120)
        orch.join_runs()
        assert seen == {
            "statuses": ["SUCCESS", "SUCCESS"],
            "slots": 0,
            "created": ["one"],
            "launched": [],
        }
        assert run_slots(orch.instance) == 2
        assert launched_plugins(orch.dequeue(T0 + timedelta(minutes=6))) == ["one"]
        orch.join_runs()


def ask_resume(engine: Engine, plugin_id: str) -> None:
    """A resume of `plugin_id` asked for: a run request the minute sensor answers at once."""
    with write_transaction(engine) as conn:
        code = approved_code(conn, plugin_id)
        request_run(conn, plugin_id, code.version_id, RunTrigger.RESUME, "test", T0)
