"""A Dagster run that failed without its "recorded" mark holds its plug-in's next run back
until the run-failure sensor keeps its outcome, except when the store already has that
outcome: the worker kept it and died before marking the Dagster run, as after a whole service
was killed (issue 31: a resume waited 10 minutes 39 seconds)."""

from __future__ import annotations

from datetime import UTC, date, datetime

import dagster as dg
from sqlalchemy import Engine

from almanac.assets.tags import TAG_PLUGIN, TAG_RECORDED
from almanac.platform.lifecycle import RunTrigger
from almanac.platform.store import moves
from almanac.platform.store.engine import write_transaction
from almanac.platform.store.versions import register_version
from almanac.platform.store.write import RunFacts, record_failed_run
from almanac.sensors.runs import plugins_in_flight

NOW = datetime(2026, 11, 27, 5, 0, tzinfo=UTC)


def _plugin(engine: Engine, plugin_id: str) -> tuple[int, str]:
    with write_transaction(engine) as conn:
        version = register_version(
            conn,
            manifest={"id": plugin_id, "version": "1.0.0", "licence": {"retain": "yes"}},
            digest=f"sha256:{plugin_id}",
            files={"fetch.mjs": b"", "plugin.json": b"{}"},
            origin="upload",
            by="dev@example.org",
            now=NOW,
        )
        moves.approve(conn, plugin_id, digest_shown=f"sha256:{plugin_id}", by="host", now=NOW)
    return version, f"sha256:{plugin_id}"


def _failed_run(instance: dg.DagsterInstance, plugin_id: str) -> dg.DagsterRun:
    run = instance.add_run(dg.DagsterRun(job_name="__ASSET_JOB", tags={TAG_PLUGIN: plugin_id}))
    instance.report_run_failed(run)
    return run


def test_a_failed_run_whose_outcome_the_store_has_is_not_in_flight(
    postgres_engine: Engine,
) -> None:
    with dg.DagsterInstance.ephemeral() as instance:
        kept_plugin, waiting_plugin = "kept-outcome", "no-outcome-yet"
        version, digest = _plugin(postgres_engine, kept_plugin)
        _plugin(postgres_engine, waiting_plugin)
        kept = _failed_run(instance, kept_plugin)
        waiting = _failed_run(instance, waiting_plugin)
        # The worker kept the run's outcome and was killed before marking the Dagster run.
        record_failed_run(
            postgres_engine,
            plugin_id=kept_plugin,
            version_id=version,
            digest=digest,
            run=RunFacts(
                today=date(2026, 11, 27),
                trigger=RunTrigger.SCHEDULE,
                started_at=NOW,
                now=NOW,
                orchestrator_run=kept.run_id,
            ),
            reason="the write was refused: the connection is lost",
        )
        for run in (kept, waiting):
            assert TAG_RECORDED not in (instance.get_run_by_id(run.run_id) or run).tags
        now = datetime.now(UTC)
        assert plugins_in_flight(instance, now) == {kept_plugin, waiting_plugin}
        assert plugins_in_flight(instance, now, postgres_engine) == {waiting_plugin}
