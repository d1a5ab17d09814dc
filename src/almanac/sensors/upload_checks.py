"""The locked-room checks of portal uploads as Dagster runs (DECISIONS 10): a job in a pool of
its own (`almanac_checks`, so scheduled plug-in runs in the `almanac` pool are never held up by
them), started by a sensor for each upload whose checks are queued; the same sensor fails
every check past its deadline. Thin adapters over `almanac.platform.publishing.checks`."""

from collections.abc import Callable, Mapping
from datetime import date, datetime
from pathlib import Path
from typing import Any

import dagster as dg
from sqlalchemy import Engine
from sqlalchemy.orm import Session, sessionmaker

from almanac.platform.clock import Clock
from almanac.platform.contract.manifest import Manifest
from almanac.platform.mail import Mailer, send_all
from almanac.platform.publishing.checks import (
    RoomOutcome,
    RoomRun,
    Sources,
    SourceUnavailable,
    expire_overdue,
    queued_uploads,
    queued_versions,
    run_room_checks,
    run_version_checks,
)
from almanac.platform.store.engine import writing
from almanac.sandbox.download import DownloadError, Source, SourceDownloader
from almanac.sensors.runs import evaluation_time

CHECKS_JOB = "almanac_upload_checks"
CHECKS_SENSOR = "almanac_upload_checks_due"
CHECKS_POOL = "almanac_checks"
"""The checks' own pool: never the plug-in runs' `almanac` pool."""
TAG_UPLOAD = "almanac/upload"
TAG_VERSION = "almanac/version"
"""A host version's checks (a pack or folder an operator registered)."""
EVALUATION_SECONDS = 30
LINK_SECONDS = 10
"""The short time-out of a listing link's answer."""
LINK_MAX_BYTES = 20_971_520


class DownloaderSources:
    """The checks' sources through the service's safe downloader: the declared sources as a
    scheduled run downloads them, and each listing link with the short time-out."""

    def __init__(self, sources: SourceDownloader, links: SourceDownloader) -> None:
        self.sources = sources
        self.links = links

    def download(self, manifest: Manifest, today: date, work: Path) -> Mapping[str, Path]:
        declared = [Source(s.name, s.url, s.max_bytes) for s in manifest.sources]
        try:
            got = self.sources.download(declared, today=today, work_dir=work)
        except DownloadError as error:
            raise SourceUnavailable(error.reason) from None
        return {s.name: s.path for s in got.sources}

    def reach(self, url: str, today: date, work: Path) -> None:
        try:
            self.links.download([Source("link", url, LINK_MAX_BYTES)], today=today, work_dir=work)
        except DownloadError as error:
            raise SourceUnavailable(error.reason) from None


def default_sources(base_url: str) -> Callable[[], Sources]:
    """The safe downloader of the service (public addresses only, the system's resolver)."""

    def make() -> Sources:
        return DownloaderSources(
            SourceDownloader(base_url=base_url),
            SourceDownloader(base_url=base_url, deadline_seconds=LINK_SECONDS),
        )

    return make


def locked_room_run() -> RoomRun:
    """The real locked room, with each manifest's limits."""
    from almanac.sandbox.limits import RoomLimits
    from almanac.sandbox.room import LockedRoom

    room = LockedRoom()

    def run(
        files: Mapping[str, bytes],
        sources: Mapping[str, Path],
        context: Mapping[str, Any],
        manifest: Manifest,
    ) -> RoomOutcome:
        return room.run(files, sources, context, RoomLimits.for_manifest(manifest))

    return run


def upload_check_definitions(
    engine: Engine,
    sources: Callable[[], Sources],
    mailer: Callable[[], Mailer],
    room: Callable[[], RoomRun] = locked_room_run,
    clock: Clock = evaluation_time,
) -> dg.Definitions:
    """The checks job and the sensor that starts it. `sources`, `mailer` and `room` are made
    when a run (or a tick failing checks past their deadline) needs them."""

    @dg.op(
        name="upload_checks",
        pool=CHECKS_POOL,
        description="Runs the queued locked-room checks of one uploaded version.",
    )
    def upload_checks(context: dg.OpExecutionContext) -> None:
        sessions: sessionmaker[Session] = sessionmaker(writing(engine), expire_on_commit=False)
        if TAG_VERSION in context.run.tags:
            version_id = int(context.run.tags[TAG_VERSION])
            done = run_version_checks(sessions, version_id, room(), sources(), clock)
            context.log.info(f"checks of host version {version_id}: {done}")
            return
        upload_id = int(context.run.tags[TAG_UPLOAD])
        done = run_room_checks(sessions, upload_id, room(), sources(), mailer(), clock)
        context.log.info(f"checks of upload {upload_id}: {done}")

    @dg.job(
        name=CHECKS_JOB,
        description="The locked-room checks of an upload or a host version (fixtures twice, "
        "run cases, example days, real sources, listing links).",
        tags={"almanac/area": "portal"},
    )
    def checks_job() -> None:
        upload_checks()

    @dg.sensor(
        name=CHECKS_SENSOR,
        job=checks_job,
        minimum_interval_seconds=EVALUATION_SECONDS,
        default_status=dg.DefaultSensorStatus.RUNNING,
        description="Starts the checks of each upload whose checks are queued, and fails every "
        "check past its deadline.",
    )
    def _due(context: dg.SensorEvaluationContext) -> dg.SensorResult | dg.SkipReason:
        now: datetime = clock()
        with Session(writing(engine)) as db:
            expired = expire_overdue(db, now)
            db.commit()
            queued = queued_uploads(db)
            hosted = queued_versions(db)
        if expired:
            send_all(mailer(), expired, now)
        if not queued and not hosted:
            return dg.SkipReason(f"no checks are queued at {now.isoformat()}")
        return dg.SensorResult(
            run_requests=[
                *(
                    dg.RunRequest(
                        run_key=f"upload-{q.upload_id}-{q.queued_at.isoformat()}",
                        tags={TAG_UPLOAD: str(q.upload_id)},
                    )
                    for q in queued
                ),
                *(
                    dg.RunRequest(
                        run_key=f"version-{v.version_id}-{v.queued_at.isoformat()}",
                        tags={TAG_VERSION: str(v.version_id)},
                    )
                    for v in hosted
                ),
            ]
        )

    return dg.Definitions(jobs=[checks_job], sensors=[_due])
