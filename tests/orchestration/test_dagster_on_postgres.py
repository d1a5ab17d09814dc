"""With `ALMANAC_DATABASE_URL` on PostgreSQL, Dagster keeps its storage with dagster-postgres in
the store's own database, in a schema of its own beside the store's tables, and stores events
there (every run's events go through it); the examples are registered as on SQLite. Each of its
storages keeps its connection between calls, in the instance a process makes from dagster.yaml
and in the one a run worker makes from its reference."""

from __future__ import annotations

from pathlib import Path

import dagster as dg
import psycopg
from dagster_postgres.run_storage import PostgresRunStorage
from sqlalchemy import event

from almanac.assets.control import DAGSTER_SCHEMA, run_slots
from almanac.dagster_storage import PooledPostgresStorage
from almanac.service import prepare
from almanac.settings import load_settings
from tests.orchestration.conftest import fresh_postgres_engine
from tests.service.up import EXAMPLES


def _backend_pid(storage: object) -> int:
    """The PostgreSQL backend that answers one call of `storage` (the connection each of its
    calls takes: `connect()`, or `index_connection()` for the event log)."""
    connect = getattr(storage, "index_connection", None) or storage.connect  # type: ignore[attr-defined]
    with connect() as conn:
        return int(conn.exec_driver_sql("SELECT pg_backend_pid()").scalar_one())


def test_dagster_storage_is_postgres_in_its_own_schema(tmp_path: Path) -> None:
    with fresh_postgres_engine("dagster") as engine:
        url = engine.url.render_as_string(hide_password=False)
        settings = load_settings({"ALMANAC_HOME": str(tmp_path), "ALMANAC_DATABASE_URL": url})
        registered, approved = prepare(settings)
        assert registered == EXAMPLES
        assert [plugin_id for plugin_id, _ in approved] == EXAMPLES
        assert "postgres_url:" in (settings.dagster_home / "dagster.yaml").read_text()

        with dg.DagsterInstance.from_config(str(settings.dagster_home)) as instance:
            assert isinstance(instance.run_storage, PostgresRunStorage)
            with dg.DagsterInstance.from_ref(instance.get_ref()) as run_workers:
                for made in (instance, run_workers):
                    assert isinstance(made.get_ref().storage, PooledPostgresStorage)
                    for storage in (
                        made.run_storage,
                        made.event_log_storage,
                        made.schedule_storage,
                    ):
                        assert _backend_pid(storage) == _backend_pid(storage), storage
            assert run_slots(instance) == settings.run_slots
            run = instance.add_run(dg.DagsterRun(job_name="__ASSET_JOB"))
            assert instance.get_run_by_id(run.run_id) is not None
            # dagster-postgres NOTIFYs with a bound parameter on each event it stores: only
            # the psycopg2 driver it is written for accepts that.
            instance.report_engine_event("stored on PostgreSQL", run)
            [event] = instance.all_logs(run.run_id)
            assert event.message == "stored on PostgreSQL"

        plain = url.replace("+psycopg", "")
        with psycopg.connect(plain) as conn:
            in_dagster = conn.execute(
                f'SELECT count(*) FROM "{DAGSTER_SCHEMA}".runs WHERE run_id = %s', (run.run_id,)
            ).fetchone()
            in_store = conn.execute("SELECT count(*) FROM public.runs").fetchone()
        assert in_dagster == (1,)
        assert in_store == (0,), "the store's own runs table is untouched"


def test_dagster_storage_survives_its_backends_being_terminated(tmp_path: Path) -> None:
    """A kept connection whose backend PostgreSQL ended (a restart, an operator's
    pg_terminate_backend) is replaced at its next use: every storage call after it succeeds, in
    the process's instance, in a run worker's (issue 31) and in the webserver's, whose storages
    dagster-postgres makes again with a statement timeout (issue 34)."""
    with fresh_postgres_engine("dagster_kill") as engine:
        url = engine.url.render_as_string(hide_password=False)
        settings = load_settings({"ALMANAC_HOME": str(tmp_path), "ALMANAC_DATABASE_URL": url})
        prepare(settings, examples=None)
        plain = url.replace("+psycopg", "")
        with (
            dg.DagsterInstance.from_config(str(settings.dagster_home)) as instance,
            dg.DagsterInstance.from_ref(instance.get_ref()) as run_worker,
            dg.DagsterInstance.from_config(str(settings.dagster_home)) as webserver,
        ):
            # What `dagster-webserver` does at its start, with its default arguments.
            webserver.optimize_for_webserver(
                statement_timeout=15000, pool_recycle=3600, max_overflow=20
            )
            with webserver.run_storage.connect() as conn:  # type: ignore[attr-defined]
                timeout = conn.exec_driver_sql("SHOW statement_timeout").scalar_one()
            assert timeout == "15s", "the webserver's statement timeout is kept"
            for made in (instance, run_worker, webserver):
                run = made.add_run(dg.DagsterRun(job_name="__ASSET_JOB"))
                storages = (made.run_storage, made.event_log_storage, made.schedule_storage)
                before = {_backend_pid(storage) for storage in storages}
                with psycopg.connect(plain, autocommit=True) as conn:
                    ended = conn.execute(
                        "SELECT count(*) FROM pg_stat_activity, "
                        "LATERAL pg_terminate_backend(pid, 10000) AS ended "
                        "WHERE pid = ANY(%s) AND ended",
                        (list(before),),
                    ).fetchone()
                assert ended == (len(before),)
                # A storage's own connection, without Dagster's retries around some calls.
                after = {_backend_pid(storage) for storage in storages}
                assert not after & before, "the ended backends were replaced"
                made.report_engine_event("after the backends ended", run)
                assert made.get_run_by_id(run.run_id) is not None
                assert [e.message for e in made.all_logs(run.run_id)] == [
                    "after the backends ended"
                ]
                assert run_slots(made) == settings.run_slots


def test_a_storage_call_makes_only_its_own_statements(tmp_path: Path) -> None:
    """Reading a run, storing a run event and an asset event ask PostgreSQL's catalog nothing
    once the storage has read its schema (issue 33: every read of a run read the runs table's
    columns first, three statements more than the read)."""
    with fresh_postgres_engine("dagster_statements") as engine:
        url = engine.url.render_as_string(hide_password=False)
        settings = load_settings({"ALMANAC_HOME": str(tmp_path), "ALMANAC_DATABASE_URL": url})
        prepare(settings, examples=None)
        with dg.DagsterInstance.from_config(str(settings.dagster_home)) as instance:
            run = instance.add_run(dg.DagsterRun(job_name="__ASSET_JOB"))
            asset = dg.AssetMaterialization(asset_key="warm")
            instance.report_runless_asset_event(asset)
            instance.get_run_by_id(run.run_id)
            statements: list[str] = []

            def note(conn: object, cursor: object, statement: str, *rest: object) -> None:
                statements.append(statement)

            engines = [
                instance.run_storage._engine,  # type: ignore[attr-defined]
                instance.event_log_storage._engine,  # type: ignore[attr-defined]
            ]
            for kept in engines:
                event.listen(kept, "before_cursor_execute", note)
            instance.get_run_by_id(run.run_id)
            instance.report_run_canceling(run)
            instance.report_runless_asset_event(dg.AssetMaterialization(asset_key="later"))
            for kept in engines:
                event.remove(kept, "before_cursor_execute", note)
        catalog = [s for s in statements if "pg_catalog" in s]
        assert statements and not catalog, catalog
