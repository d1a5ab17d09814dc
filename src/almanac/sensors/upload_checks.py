"""The locked-room checks of portal uploads as Dagster runs (DECISIONS 10): a job in a pool of
its own (`almanac_checks`, so scheduled plug-in runs in the `almanac` pool are never held up by
them), started by a sensor for each upload whose checks are queued; the same sensor fails
every check past its deadline, and queues again the checks that could not run because the
service's network was down once it is back (telling the operators, once a day, while it is
not). Thin adapters over `almanac.platform.publishing.uploads.check_queue` and `check_pipeline`."""

import tempfile
from collections.abc import Callable, Mapping
from datetime import date, datetime
from pathlib import Path
from typing import Any

import dagster as dg
from sqlalchemy import Engine
from sqlalchemy.orm import Session, sessionmaker

from almanac.platform.alerts.send import send_network_alert
from almanac.platform.clock import Clock
from almanac.platform.contract.manifest import Manifest
from almanac.platform.mail import Mailer, send_all
from almanac.platform.publishing.uploads.check_pipeline import (
    CheckSubject,
    HostVersionChecks,
    UploadChecks,
    run_checks,
)
from almanac.platform.publishing.uploads.check_queue import (
    expire_overdue,
    network_outage,
    queued_uploads,
    queued_versions,
    requeue_for_network,
)
from almanac.platform.publishing.uploads.network import Probe, probe_reached
from almanac.platform.publishing.uploads.room_checks import (
    RoomOutcome,
    RoomRun,
    Sources,
    SourceUnavailable,
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
PROBE_MAX_BYTES = 65_536
"""The probe only asks whether anything answers: a larger page is an answer too."""


class DownloaderSources:
    """The checks' sources through the service's safe downloader: the declared sources as a
    scheduled run downloads them, each listing link with the short time-out, and the
    operator's probe (`probe_url`, ALMANAC_NETWORK_PROBE) with the same time-out."""

    def __init__(
        self, sources: SourceDownloader, links: SourceDownloader, probe_url: str | None = None
    ) -> None:
        self.sources = sources
        self.links = links
        self.probe_url = probe_url

    def download(self, manifest: Manifest, today: date, work: Path) -> Mapping[str, Path]:
        declared = [Source(s.name, s.url, s.max_bytes) for s in manifest.sources]
        try:
            got = self.sources.download(declared, today=today, work_dir=work)
        except DownloadError as error:
            # Sources go in declared order and stop at the first failure: those before it
            # were reached.
            names = [s.name for s in declared]
            before = names.index(error.source) if error.source in names else 0
            raise SourceUnavailable(error.reason, (*([None] * before), error.failure)) from None
        return {s.name: s.path for s in got.sources}

    def reach(self, url: str, today: date, work: Path) -> None:
        try:
            self.links.download([Source("link", url, LINK_MAX_BYTES)], today=today, work_dir=work)
        except DownloadError as error:
            raise SourceUnavailable(error.reason, (error.failure,)) from None

    def probe(self, today: date) -> Probe | None:
        if self.probe_url is None:
            return None
        with tempfile.TemporaryDirectory(prefix="almanac-probe-") as work:
            try:
                self.links.download(
                    [Source("probe", self.probe_url, PROBE_MAX_BYTES)],
                    today=today,
                    work_dir=Path(work),
                )
            except DownloadError as error:
                return Probe(self.probe_url, probe_reached(error.failure), error.reason)
        return Probe(self.probe_url, True)


def default_sources(base_url: str, probe_url: str | None = None) -> Callable[[], Sources]:
    """The safe downloader of the service (public addresses only, the system's resolver), and
    the operator's probe when one is set."""

    def make() -> Sources:
        return DownloaderSources(
            SourceDownloader(base_url=base_url),
            SourceDownloader(base_url=base_url, deadline_seconds=LINK_SECONDS),
            probe_url,
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
    base_url: str,
    room: Callable[[], RoomRun] = locked_room_run,
    clock: Clock = evaluation_time,
) -> dg.Definitions:
    """The checks job and the sensor that starts it. `sources`, `mailer` and `room` are made
    when a run (or a tick failing checks past their deadline, or probing the network for
    checks that could not run) needs them. The mail links pages under `base_url`, the
    service's public address (the network alert links /host)."""

    @dg.op(
        name="upload_checks",
        pool=CHECKS_POOL,
        description="Runs the queued locked-room checks of one uploaded version.",
    )
    def upload_checks(context: dg.OpExecutionContext) -> None:
        sessions: sessionmaker[Session] = sessionmaker(writing(engine), expire_on_commit=False)
        tags = context.run.tags
        subject: CheckSubject = (
            HostVersionChecks(int(tags[TAG_VERSION]))
            if TAG_VERSION in tags
            else UploadChecks(int(tags[TAG_UPLOAD]))
        )
        done = run_checks(sessions, subject, room(), sources(), mailer(), clock, base_url)
        context.log.info(f"checks of {subject.label}: {done}")

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
            expired = expire_overdue(db, now, base_url)
            db.commit()
            waiting = network_outage(db) is not None
        if expired:
            send_all(mailer(), expired, now)
        if waiting:
            _network_back_or_told(now)
        with Session(engine) as db:
            queued = queued_uploads(db)
            hosted = queued_versions(db)
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

    def _network_back_or_told(now: datetime) -> None:
        """Checks wait for the network: those due run again (the probe answers, or without
        one their time came); while some still wait, the operators are told once a day."""
        probe = sources().probe(now.date())
        with Session(writing(engine)) as db:
            requeue_for_network(db, now, None if probe is None else probe.reached)
            db.commit()
            outage = network_outage(db)
        if outage is not None:
            sessions: sessionmaker[Session] = sessionmaker(writing(engine), expire_on_commit=False)
            send_network_alert(sessions, mailer(), now, outage, probe, base_url=base_url)

    return dg.Definitions(jobs=[checks_job], sensors=[_due])
