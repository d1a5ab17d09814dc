"""The Dagster Definitions of the Almanac code location (DECISIONS section 8), built from the
store: one asset per plug-in ever approved, the minute sensor, the run-failure sensor, the
pipeline resource and the store's IO manager; the plug-ins' asset checks (freshness, volume,
Held) with the job and sensor that run them and send the alerts; and the domain re-checks
(their own group).

Run workers load the same plug-ins as their code location: the process that first builds the
definitions keeps the catalog it read in a file named by its content and names that file in
`ALMANAC_DEFINITIONS_SNAPSHOT`; the run workers it starts inherit the variable and read the
file instead of the store. The catalog is one query, whatever the number of plug-ins.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import dagster as dg
from sqlalchemy import Engine

from almanac.assets.plugins import PIPELINE_RESOURCE, STORE_IO_MANAGER, StoreWriter, plugin_asset
from almanac.orchestration.catalog import (
    SNAPSHOT_ENV,
    CatalogEntry,
    load_catalog,
    read_snapshot,
    write_snapshot,
)
from almanac.orchestration.pipeline import RunPipeline
from almanac.platform.clock import Clock
from almanac.platform.mail import Mailer, load_mail_settings, mailer_for
from almanac.platform.publishing.checks import RoomRun, Sources
from almanac.platform.publishing.proof import DomainProver
from almanac.platform.store.engine import make_engine
from almanac.sandbox.wellknown import domain_prover as default_domain_prover
from almanac.sensors.domains import domain_recheck_definitions
from almanac.sensors.plugin_checks import plugin_check_definitions
from almanac.sensors.runs import due_runs_sensor, evaluation_time, failed_runs_sensor
from almanac.sensors.upload_checks import (
    default_sources,
    locked_room_run,
    upload_check_definitions,
)
from almanac.settings import Settings, load_settings


def catalog_for_process(engine: Engine, snapshot_folder: Path) -> list[CatalogEntry]:
    """The catalog this process's definitions show: the inherited snapshot when there is one
    (a run worker), else read from the store and kept as the snapshot for its children."""
    inherited = os.environ.get(SNAPSHOT_ENV)
    if inherited and Path(inherited).is_file():
        return read_snapshot(Path(inherited))
    with engine.connect() as conn:
        entries = load_catalog(conn)
    os.environ[SNAPSHOT_ENV] = str(write_snapshot(entries, snapshot_folder))
    return entries


def default_pipeline(settings: Settings, engine: Engine) -> RunPipeline:
    from almanac.sandbox.download import SourceDownloader
    from almanac.sandbox.room import LockedRoom

    return RunPipeline(
        engine,
        downloader=SourceDownloader(base_url=settings.base_url),
        room=LockedRoom(),
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
) -> dg.Definitions:
    """The Definitions over the store at `settings.database_url` (or `engine`). The domain
    re-checks make `domain_prover` and `mailer` when they run (by default DNS through
    `ALMANAC_DNS_SERVERS` or the system's, the file through the source downloader, and mail as
    `ALMANAC_SMTP_HOST` says). `plugin_checks` False leaves out the plug-ins' checks and
    alerts (tests of other parts that count every run)."""
    settings = settings or load_settings()
    engine = engine or make_engine(settings.database_url)
    if catalog is None:
        catalog = catalog_for_process(engine, settings.dagster_home / "catalog")
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
    )
    checks = upload_check_definitions(
        engine,
        check_sources or default_sources(settings.base_url),
        mailer or environment_mailer,
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
    return dg.Definitions.merge(plugins, rechecks, checks, alerts)


@dg.definitions
def defs() -> dg.Definitions:
    return build_definitions()
