"""A run worker builds only the plug-in assets its run selects (`run_worker_selection`), while
the code location (a code server, the daemon's workspace) defines every plug-in.

Two views: Dagster's own run worker entry (`core_execute_run`, what the process a code server's
`StartRun` spawns and `dagster api execute_run` both execute) reconstructing a probe location for
a run of one of three plug-ins; and the service's definitions through the harness, where three
approved plug-ins each run once and the definitions each run loads hold that plug-in alone."""

from __future__ import annotations

import os
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import dagster as dg
import pytest
from dagster._core.definitions.reconstruct import ReconstructableJob, ReconstructableRepository
from dagster._grpc.impl import core_execute_run
from sqlalchemy import Engine

import tests.orchestration.harness as harness
from almanac.assets.dagster_private import IMPLICIT_ASSET_JOB_NAME
from almanac.assets.tags import TAG_PLUGIN, asset_key
from almanac.definitions import catalog_for_process, run_worker_selection
from almanac.orchestration.catalog import SNAPSHOT_ENV, load_catalog
from almanac.orchestration.folders import register_folder
from tests.conftest import REPO
from tests.orchestration.harness import (
    Orchestrator,
    SourceServer,
    approve,
    source_host,
    source_path,
    write_plugin,
)

PROBE_PLUGINS = ("alpha", "beta", "gamma")
SEEN: list[frozenset[str] | None] = []
"""What `run_worker_selection` answered at each load of the probe location."""


def _probe_asset(plugin_id: str) -> dg.AssetsDefinition:
    @dg.asset(key=asset_key(plugin_id))
    def _asset() -> int:
        return 1

    return _asset


@dg.definitions
def probe_location() -> dg.Definitions:
    only = run_worker_selection()
    SEEN.append(only)
    chosen = [p for p in PROBE_PLUGINS if only is None or p in only]
    return dg.Definitions(assets=[_probe_asset(p) for p in chosen], executor=dg.in_process_executor)


def test_dagster_run_worker_entry_loads_only_the_runs_plugin() -> None:
    SEEN.clear()
    repository = ReconstructableRepository.for_module(
        __name__, "probe_location", working_directory=str(REPO)
    )
    # Not a run's load: every plug-in, as a code server defines them.
    code_location = repository.get_definition()
    assert SEEN == [None]
    job = code_location.get_job(IMPLICIT_ASSET_JOB_NAME)
    assert {k.path[1] for k in job.asset_layer.asset_graph.get_all_asset_keys()} == set(
        PROBE_PLUGINS
    )
    with dg.instance_for_test() as instance:
        selected = frozenset({asset_key("beta")})
        run = instance.create_run_for_job(
            job_def=job.get_subset(asset_selection=selected), asset_selection=selected
        )
        recon_job = ReconstructableJob(repository, IMPLICIT_ASSET_JOB_NAME)
        events = list(core_execute_run(recon_job, run, instance, inject_env_vars=False))
        done = instance.get_run_by_id(run.run_id)
        assert done is not None and done.status == dg.DagsterRunStatus.SUCCESS, [
            e.message for e in events
        ]
        materialized = {
            e.asset_key for e in events if e.event_type == dg.DagsterEventType.ASSET_MATERIALIZATION
        }
        assert materialized == {asset_key("beta")}
    # Every load the run worker made (the job, then the run's subset) held beta alone.
    assert len(SEEN) > 1
    assert SEEN[1:] == [frozenset({"beta"})] * (len(SEEN) - 1)


def test_a_run_loads_only_its_plugin_through_the_service_definitions(
    tmp_path: Path, sqlite_engine: Engine, monkeypatch: pytest.MonkeyPatch
) -> None:
    engine, plugins = sqlite_engine, ["one", "two", "three"]
    start = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)
    loads: list[tuple[frozenset[str] | None, set[dg.AssetKey]]] = []
    real_build = harness.build_definitions

    def noting_build(**kwargs: Any) -> dg.Definitions:
        defs = real_build(**kwargs)
        only = kwargs.get("only")
        keys = set(defs.resolve_asset_graph().get_all_asset_keys())
        loads.append((None if only is None else frozenset(only), keys))
        return defs

    monkeypatch.setattr(harness, "build_definitions", noting_build)
    with (
        SourceServer([source_host(p) for p in plugins]) as server,
        Orchestrator.open(tmp_path, engine, downloader=server.downloader, start=start) as orch,
    ):
        for plugin in plugins:
            server.serve(source_path(plugin), b"ok\n")
            folder = write_plugin(
                tmp_path / "plugins", plugin, schedule="0 6 * * *", timezone="UTC"
            )
            register_folder(engine, folder, now=start)
            approve(engine, plugin, start)
        loads.clear()
        done = orch.minute(start + timedelta(minutes=1))
        assert sorted((r.tags[TAG_PLUGIN], r.status.value) for r in done.launched) == [
            (p, "SUCCESS") for p in sorted(plugins)
        ]
    # The workspace's loads define every plug-in; each run's loads hold its plug-in alone.
    every = {asset_key(p) for p in plugins}
    assert any(only is None and every <= keys for only, keys in loads)
    run_loads = [(only, keys) for only, keys in loads if only is not None]
    assert {next(iter(only)) for only, _ in run_loads} == set(plugins)
    for only, keys in run_loads:
        assert len(only) == 1
        assert {k for k in keys if k.path[0] == "plugins"} == {asset_key(next(iter(only)))}
    # A run worker reads the catalog of its plug-in alone (its runs and records only), the
    # same entry the whole catalog has, and keeps no snapshot: it starts no process that
    # would inherit one.
    with engine.connect() as conn:
        every = {entry.id: entry for entry in load_catalog(conn)}
        assert load_catalog(conn, only={"two"}) == [every["two"]]
        assert load_catalog(conn, only=set()) == []
    assert every["two"].records > 0 and every["two"].last_run_outcome is not None
    monkeypatch.delenv(SNAPSHOT_ENV, raising=False)
    snapshots = tmp_path / "snapshots"
    assert catalog_for_process(engine, snapshots, only={"two"}) == [every["two"]]
    assert SNAPSHOT_ENV not in os.environ and not snapshots.exists()
    assert catalog_for_process(engine, snapshots) == list(every.values())
    assert Path(os.environ[SNAPSHOT_ENV]).parent == snapshots
