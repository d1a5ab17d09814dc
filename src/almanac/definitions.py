"""The Dagster Definitions of the Almanac code location (DECISIONS section 8), built from the
store: one asset per plug-in ever approved, the minute sensor, the run-failure sensor, the
pipeline resource and the store's IO manager; the plug-ins' asset checks (freshness, volume,
Held) with the job and sensor that run them and send the alerts; and the domain re-checks
(their own group); and the webhook deliveries' sensor.

Run workers load the same plug-ins as their code location: the process that first builds the
definitions keeps the catalog it read in a file named by its content and names that file in
`ALMANAC_DEFINITIONS_SNAPSHOT`; the run workers it starts inherit the variable and read the
file instead of the store. The catalog is one query, whatever the number of plug-ins.

A run worker builds only the plug-in assets its run selects (`run_worker_selection`): a run of
one plug-in loads one asset, not the 1,000 its code server shows. The code server, the daemon
and the webserver (which load the definitions to define them, not to run one run) see them all.
Runs execute their one step in the run worker's own process (`in_process_executor`): a step
process would start a second interpreter and load the definitions once more for every run.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Collection
from pathlib import Path
from types import FrameType

import dagster as dg
from sqlalchemy import Engine

from almanac.assets.dagster_private import (
    IMPLICIT_ASSET_JOB_NAME,
    DefinitionsLoadContext,
    DefinitionsLoadType,
)
from almanac.assets.plugins import PIPELINE_RESOURCE, STORE_IO_MANAGER, StoreWriter, plugin_asset
from almanac.assets.tags import plugin_of_run
from almanac.orchestration.catalog import (
    SNAPSHOT_ENV,
    CatalogEntry,
    load_catalog,
    read_snapshot,
    write_snapshot,
)
from almanac.orchestration.pipeline import RunPipeline
from almanac.platform.clock import Clock
from almanac.platform.mail import Mailer
from almanac.platform.publishing.identity.proof import DomainProver
from almanac.platform.publishing.uploads.room_checks import RoomRun, Sources
from almanac.platform.store.engine import make_engine
from almanac.sandbox.smtp import load_mail_settings, mailer_for
from almanac.sandbox.webhooks import WebhookSender
from almanac.sandbox.wellknown import domain_prover as default_domain_prover
from almanac.sensors.asset_checks import plugin_check_definitions
from almanac.sensors.domains import domain_recheck_definitions
from almanac.sensors.runs import due_runs_sensor, evaluation_time, failed_runs_sensor
from almanac.sensors.upload_checks import (
    default_sources,
    locked_room_run,
    upload_check_definitions,
)
from almanac.sensors.webhooks import Sender, webhook_sensor
from almanac.settings import Settings, load_settings


def catalog_for_process(
    engine: Engine, snapshot_folder: Path, only: Collection[str] | None = None
) -> list[CatalogEntry]:
    """The catalog this process's definitions show: the inherited snapshot when there is one
    (a run worker a code server spawned), else read from the store: the plug-ins of `only`
    alone for a run worker (`run_worker_selection`), which starts no process that would
    inherit it; every plug-in otherwise, kept as the snapshot for this process's children."""
    inherited = os.environ.get(SNAPSHOT_ENV)
    if inherited and Path(inherited).is_file():
        return read_snapshot(Path(inherited))
    with engine.connect() as conn:
        entries = load_catalog(conn, only)
    if only is None:
        os.environ[SNAPSHOT_ENV] = str(write_snapshot(entries, snapshot_folder))
    return entries


def _run_being_executed() -> dg.DagsterRun | None:
    """The Dagster run this process is loading its definitions for, when it is a run worker.

    Dagster 1.13 hands the loading function no run: a run worker (`dagster api execute_run`,
    or the process a code server's `StartRun` spawns, or the in-process launcher) loads the code
    location from inside `dagster._grpc.impl.core_execute_run(recon_job, dagster_run, ...)` or
    `dagster._core.execution.api.execute_run(job, dagster_run, ...)`, with the run it executes
    as the local `dagster_run`. Any other load (a code server, `dagster definitions validate`)
    has no such frame and gets None, and so builds every plug-in: slower, never wrong. A
    Dagster upgrade must check these names again (`tests/orchestration/test_run_worker.py`)."""
    frame: FrameType | None = sys._getframe(1)
    while frame is not None:
        candidate = frame.f_locals.get("dagster_run")
        if isinstance(candidate, dg.DagsterRun):
            return candidate
        frame = frame.f_back
    return None


def run_worker_selection() -> frozenset[str] | None:
    """The plug-ins whose assets a run worker builds: the ones its run selects; or None (build
    every plug-in) when the definitions are not being reconstructed for a run (a code server
    defines them all), and when the run selects neither assets nor checks of the implicit asset
    job (a run of every asset). A run of another job (the upload checks, the domain re-checks)
    builds none."""
    if DefinitionsLoadContext.get().load_type != DefinitionsLoadType.RECONSTRUCTION:
        return None
    run = _run_being_executed()
    if run is None:
        return None
    if run.job_name != IMPLICIT_ASSET_JOB_NAME:
        return frozenset()
    if run.asset_selection is None and run.asset_check_selection is None:
        return None
    # A run of the plug-ins' checks selects check keys only: their plug-ins are built too.
    keys = {*(run.asset_selection or ()), *(c.asset_key for c in run.asset_check_selection or ())}
    return frozenset(plugin for key in keys if (plugin := plugin_of_run({}, [key])) is not None)


def default_pipeline(settings: Settings, engine: Engine) -> RunPipeline:
    from almanac.sandbox.download import SourceDownloader
    from almanac.sandbox.room import LockedRoom

    return RunPipeline(
        engine,
        downloader=SourceDownloader(base_url=settings.base_url),
        room=LockedRoom(),
        mailer=mailer_for(load_mail_settings(os.environ), engine),
        base_url=settings.base_url,
    )


def build_definitions(
    *,
    settings: Settings | None = None,
    engine: Engine | None = None,
    pipeline: RunPipeline | None = None,
    catalog: list[CatalogEntry] | None = None,
    clock: Clock = evaluation_time,
    domain_prover: Callable[[], DomainProver] | None = None,
    mailer: Callable[[], Mailer] | None = None,
    check_room: Callable[[], RoomRun] | None = None,
    check_sources: Callable[[], Sources] | None = None,
    plugin_checks: bool = True,
    webhook_sender: Callable[[], Sender] | None = None,
    only: Collection[str] | None = None,
    executor: dg.ExecutorDefinition = dg.in_process_executor,
) -> dg.Definitions:
    """The Definitions over the store at `settings.database_url` (or `engine`). The domain
    re-checks make `domain_prover` and `mailer` when they run (by default DNS through
    `ALMANAC_DNS_SERVERS` or the system's, the file through the source downloader, and mail as
    `ALMANAC_SMTP_HOST` says). `plugin_checks` False leaves out the plug-ins' checks and
    alerts (tests of other parts that count every run). `only`: the plug-ins whose assets are
    built (a run worker's `run_worker_selection`), else every plug-in of the catalog.
    `executor`: the runs' executor (in the run worker's process by default).
    `webhook_sender`: makes the webhook deliveries' sender (the system's network by
    default)."""
    settings = settings or load_settings()
    engine = engine or make_engine(settings.database_url)
    if catalog is None:
        catalog = catalog_for_process(engine, settings.dagster_home / "catalog", only)
    if only is not None:
        catalog = [entry for entry in catalog if entry.id in only]
    pipeline = pipeline or default_pipeline(settings, engine)
    made_settings, made_engine = settings, engine

    def settings_prover() -> DomainProver:
        return default_domain_prover(made_settings)

    def environment_mailer() -> Mailer:
        return mailer_for(load_mail_settings(os.environ), made_engine)

    rechecks = domain_recheck_definitions(
        engine, domain_prover or settings_prover, mailer or environment_mailer, clock
    )
    plugins = dg.Definitions(
        assets=[plugin_asset(entry) for entry in catalog],
        sensors=[
            due_runs_sensor(engine, frozenset(e.id for e in catalog), clock),
            failed_runs_sensor(pipeline),
        ],
        resources={
            PIPELINE_RESOURCE: pipeline,
            STORE_IO_MANAGER: dg.IOManagerDefinition.hardcoded_io_manager(StoreWriter(pipeline)),
        },
        executor=executor,
    )
    checks = upload_check_definitions(
        engine,
        check_sources or default_sources(settings.base_url, settings.network_probe),
        mailer or environment_mailer,
        settings.base_url,
        check_room or locked_room_run,
        clock,
    )
    alerts = (
        plugin_check_definitions(
            engine,
            [e.id for e in catalog],
            mailer or environment_mailer,
            clock,
            settings.base_url,
        )
        if plugin_checks
        else dg.Definitions()
    )
    made_base_url = settings.base_url

    def network_sender() -> Sender:
        return WebhookSender(base_url=made_base_url)

    webhooks = dg.Definitions(
        sensors=[
            webhook_sensor(
                engine,
                webhook_sender or network_sender,
                mailer or environment_mailer,
                settings.base_url,
                clock,
            )
        ]
    )
    return dg.Definitions.merge(plugins, rechecks, checks, alerts, webhooks)


@dg.definitions
def defs() -> dg.Definitions:
    return build_definitions(only=run_worker_selection())
