"""A run has exactly one outcome in the store, whatever fails between the store and the
orchestrator (issue 31): the worker that wrote its batch (or its failure) and died before
telling Dagster is not recorded again as a failure by the failed-runs sensor, and the plug-in's
state and retries follow the one outcome kept."""

from __future__ import annotations

from dataclasses import replace

import pytest
from sqlalchemy import func, select

from almanac.platform.lifecycle import RunTrigger
from almanac.platform.store.engine import write_transaction
from almanac.platform.store.run_requests import request_run
from almanac.platform.store.tables import requests, runs
from almanac.platform.store.write import WriteRefused, record_failed_run

from .conftest import TODAY, Plug, value


def _runs(plug: Plug) -> int:
    with plug.engine.connect() as conn:
        return int(
            conn.execute(
                select(func.count()).select_from(runs).where(runs.c.plugin_id == plug.id)
            ).scalar_one()
        )


def _open_retries(plug: Plug) -> int:
    with plug.engine.connect() as conn:
        query = select(func.count()).where(
            requests.c.plugin_id == plug.id,
            requests.c.trigger == str(RunTrigger.RETRY),
            requests.c.taken_at.is_(None),
        )
        return int(conn.execute(query).scalar_one())


def _fail_again(plug: Plug, **keys: object) -> int:
    facts = replace(plug.facts(TODAY, RunTrigger.SCHEDULE), **keys)
    return record_failed_run(
        plug.engine,
        plugin_id=plug.id,
        version_id=plug.version_id,
        digest=plug.digest,
        run=facts,
        reason="the run stopped outside the fetcher: run worker process 4242 is gone",
    )


def test_a_success_then_a_failure_of_the_same_orchestrator_run_keeps_the_success(
    plug: Plug,
) -> None:
    written = plug.write([value("2026-11-02", 1.5)], orchestrator_run="dagster-run-1")
    assert plug.state() == "approved"
    kept = _fail_again(plug, orchestrator_run="dagster-run-1")
    assert kept == written.run_id
    assert _runs(plug) == 1
    assert plug.state() == "approved"
    assert _open_retries(plug) == 0, "no retry for a run that succeeded"


def test_a_failure_kept_twice_for_one_run_request_is_one_run(plug: Plug) -> None:
    with write_transaction(plug.engine) as conn:
        request = request_run(
            conn, plug.id, plug.version_id, RunTrigger.SCHEDULE, "sensor", plug.now()
        )
    first = _fail_again(plug, request_id=request, orchestrator_run="dagster-run-2")
    assert plug.state() == "failing"
    retries = _open_retries(plug)
    # The failed-runs sensor, after the worker's own record: the same request, no new row.
    assert _fail_again(plug, request_id=request) == first
    assert _runs(plug) == 1
    assert _open_retries(plug) == retries == 1


def test_a_write_after_the_runs_failure_was_kept_is_refused(plug: Plug) -> None:
    """Run monitoring took a slow worker for dead and kept its failure: the worker's late
    write would be a second outcome of the one run, and writes nothing."""
    failed = _fail_again(plug, orchestrator_run="dagster-run-3")
    with pytest.raises(WriteRefused, match=f"already kept as run {failed}"):
        plug.write([value("2026-11-02", 1.5)], orchestrator_run="dagster-run-3")
    assert _runs(plug) == 1
    assert plug.state() == "failing"


def test_runs_of_other_orchestrator_runs_are_kept_each(plug: Plug) -> None:
    plug.write([value("2026-11-02", 1.5)], orchestrator_run="dagster-run-4")
    _fail_again(plug, orchestrator_run="dagster-run-5")
    _fail_again(plug)
    assert _runs(plug) == 3
