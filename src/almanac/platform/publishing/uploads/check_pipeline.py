"""The one run of a version's locked-room checks, for a portal upload (`UploadChecks`) or a
version registered at the host (`HostVersionChecks`), never in a web request: its queued
checks marked running, run in the locked room (`room_checks`), then recorded passed or failed
with their findings, or could not run (the service's network was down; queued again by
`check_queue` once it is back).

The two subjects differ only where the spec makes them: an upload runs while it is being
checked, reads the review information sent for it, keeps the record diff of its run on the
real sources, and is settled (mail to its owners and admins on failures) once every check is
final; a host version has no state and tells no one.
"""

from __future__ import annotations

import json
import logging
import tempfile
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import date, datetime
from pathlib import Path
from typing import Any, ClassVar, Protocol

from sqlalchemy import ColumnElement, select
from sqlalchemy.orm import Session, sessionmaker

from almanac.platform.contract.context import format_instant, today_in_zone
from almanac.platform.contract.manifest import parse_manifest
from almanac.platform.contract.pack import check_code, read_pack
from almanac.platform.contract.problems import Problem
from almanac.platform.mail import Mailer, MailMessage, send_all
from almanac.platform.publishing.models import (
    CheckStatus,
    PortalUpload,
    UploadCheck,
    UploadState,
    VersionCheckInput,
)
from almanac.platform.publishing.uploads.check_queue import settle_upload
from almanac.platform.publishing.uploads.diff import record_diff
from almanac.platform.publishing.uploads.review_information import sent_review
from almanac.platform.publishing.uploads.room_checks import (
    FIXTURE_CHECKS,
    NetworkJudge,
    RoomFolder,
    RoomRun,
    Sources,
    check_status,
    fixture_checks,
    links_check,
    sources_check,
)
from almanac.platform.publishing.uploads.upload_states import move_check
from almanac.platform.store.reading import series_state
from almanac.platform.store.tables import blobs, version_files, versions

log = logging.getLogger(__name__)


class CheckSubject(Protocol):
    """Whose room checks run: an upload's or a host version's."""

    keeps_diff: ClassVar[bool]
    """The record diff of the run on the real sources is kept (an upload's, for its review)."""

    @property
    def label(self) -> str: ...

    def checks(self) -> ColumnElement[bool]:
        """Its rows among the checks."""
        ...

    def ready(self, db: Session) -> bool:
        """Its queued checks may start."""
        ...

    def folder(self, sessions: sessionmaker[Session], now: datetime) -> RoomFolder | None:
        """What the room checks read; None when the version can no longer be read."""
        ...

    def finish(
        self, db: Session, ran: bool, diff: dict[str, Any] | None, base_url: str
    ) -> list[MailMessage]:
        """After its results are recorded (`ran`: the real sources were run): what else
        changes, and the mail to send once that is committed (linking pages under
        `base_url`)."""
        ...


@dataclass(frozen=True, slots=True)
class UploadChecks:
    """The room checks of a portal upload: they run while it is being checked."""

    upload_id: int
    keeps_diff: ClassVar[bool] = True

    @property
    def label(self) -> str:
        return f"upload {self.upload_id}"

    def checks(self) -> ColumnElement[bool]:
        return UploadCheck.upload_id == self.upload_id

    def ready(self, db: Session) -> bool:
        upload = db.get(PortalUpload, self.upload_id)
        return upload is not None and upload.state == UploadState.CHECKING

    def folder(self, sessions: sessionmaker[Session], now: datetime) -> RoomFolder | None:
        with sessions() as db:
            upload = db.get(PortalUpload, self.upload_id)
            review = sent_review(db, self.upload_id)
        return None if upload is None else _upload_folder(upload, review)

    def finish(
        self, db: Session, ran: bool, diff: dict[str, Any] | None, base_url: str
    ) -> list[MailMessage]:
        upload = db.get(PortalUpload, self.upload_id)
        if upload is not None and ran:
            upload.record_diff = diff
        return settle_upload(db, self.upload_id, base_url)


@dataclass(frozen=True, slots=True)
class HostVersionChecks:
    """The room checks of a version an operator registered at the host, as an upload's."""

    version_id: int
    keeps_diff: ClassVar[bool] = False

    @property
    def label(self) -> str:
        return f"host version {self.version_id}"

    def checks(self) -> ColumnElement[bool]:
        return UploadCheck.version_id == self.version_id

    def ready(self, db: Session) -> bool:
        return True

    def folder(self, sessions: sessionmaker[Session], now: datetime) -> RoomFolder | None:
        with sessions() as db:
            return _version_folder(db, self.version_id, now)

    def finish(
        self, db: Session, ran: bool, diff: dict[str, Any] | None, base_url: str
    ) -> list[MailMessage]:
        return []


def run_checks(
    sessions: sessionmaker[Session],
    subject: CheckSubject,
    room: RoomRun,
    sources: Sources,
    mailer: Mailer,
    clock: Callable[[], datetime],
    base_url: str,
) -> dict[str, CheckStatus]:
    """Run the queued room checks of an upload or a host version: marked running, run in the
    locked room (the fixtures twice, each run case, the example days, the real sources once,
    the listing links), then passed or failed with their findings. A check that ends after its
    deadline fails with PLG-CHECK-DEADLINE. A network check whose every host failed because
    the service's own network was down could not run (`NetworkJudge`). Anything that stops
    the room fails the checks still running with PLG-RUN-FAILED. Returns each check's
    status (empty when none was queued)."""
    begun = clock()
    wanted = _begin(sessions, subject, begun)
    if not wanted:
        return {}
    folder = subject.folder(sessions, begun)
    results, diff = _room_results(sessions, subject, folder, wanted, room, sources, clock)
    done = clock()
    with sessions() as db:
        _record_results(db, subject.checks(), results, done)
        messages = subject.finish(db, "sources" in results, diff, base_url)
        db.commit()
    send_all(mailer, messages, done)
    with sessions() as db:
        rows = db.execute(
            select(UploadCheck.name, UploadCheck.status)
            .where(subject.checks())
            .order_by(UploadCheck.id)
        ).all()
        return {name: CheckStatus(status) for name, status in rows}


def _room_results(
    sessions: sessionmaker[Session],
    subject: CheckSubject,
    folder: RoomFolder | None,
    wanted: frozenset[str],
    room: RoomRun,
    sources: Sources,
    clock: Callable[[], datetime],
) -> tuple[dict[str, list[Problem]], dict[str, Any] | None]:
    """The findings of each wanted check, and the record diff when the subject keeps it."""
    results: dict[str, list[Problem]] = {}
    diff: dict[str, Any] | None = None
    with tempfile.TemporaryDirectory(prefix="almanac-checks-") as tmp:
        try:
            if folder is None:
                raise ValueError("the version's manifest no longer passes")
            if wanted & FIXTURE_CHECKS:
                for name, found_by in fixture_checks(folder, room, Path(tmp)):
                    results[name] = found_by
            now = clock()
            today = today_in_zone(now, folder.manifest.timezone)
            network = NetworkJudge(sources, today)
            if "sources" in wanted:
                real, batch, tried = sources_check(
                    folder, room, sources, Path(tmp), now, _stored_state(sessions, folder, today)
                )
                results["sources"] = network.judge(real, tried)
                if subject.keeps_diff and batch.records:
                    with sessions() as db:
                        found = record_diff(db.connection(), folder.manifest, batch.records, today)
                    diff = None if found is None else found.as_dict()
            if "links" in wanted:
                results["links"] = network.judge(*links_check(folder, sources, Path(tmp), now))
        except Exception as error:  # the room refused, or anything else: the checks still end
            log.exception("room checks of %s", subject.label)
            reason = str(error)[:300] or type(error).__name__
            failure = [Problem("PLG-RUN-FAILED", f"the checks could not run: {reason}")]
            results = {name: results.get(name, failure) for name in wanted}
    return results, diff


def _begin(sessions: sessionmaker[Session], subject: CheckSubject, now: datetime) -> frozenset[str]:
    """The subject's queued checks marked running, and their names (a check that could not
    run is queued again alone, and only it runs)."""
    with sessions() as db:
        if not subject.ready(db):
            return frozenset()
        queued = db.scalars(
            select(UploadCheck).where(subject.checks(), UploadCheck.status == CheckStatus.QUEUED)
        ).all()
        for check in queued:
            move_check(check, CheckStatus.RUNNING)
            check.started_at = now
        db.commit()
        return frozenset(check.name for check in queued)


def _record_results(
    db: Session, subject: ColumnElement[bool], results: Mapping[str, list[Problem]], now: datetime
) -> None:
    """The running checks of one subject become passed or failed with their findings (failed,
    PLG-CHECK-DEADLINE added, when they end after their deadline), or could not run (the
    service's network was down: no deadline applies, it runs again by itself)."""
    for check in db.scalars(
        select(UploadCheck).where(subject, UploadCheck.status == CheckStatus.RUNNING)
    ):
        problems = results.get(check.name)
        if problems is None:
            continue
        status = check_status(problems)
        if now > check.deadline_at and status is not CheckStatus.COULD_NOT_RUN:
            problems = [
                *problems,
                Problem(
                    "PLG-CHECK-DEADLINE",
                    f"the {check.name} check ended at {format_instant(now)}, after its "
                    f"deadline {format_instant(check.deadline_at)}; re-run the checks",
                ),
            ]
            status = check_status(problems)
        move_check(check, status)
        check.findings = [p.to_stored() for p in problems]
        check.finished_at = now
    db.flush()


def _stored_state(
    sessions: sessionmaker[Session], folder: RoomFolder, today: date
) -> dict[str, tuple[date | None, int]]:
    """The series state of the plug-in's stored records (none before its first version): the
    run on the real sources gets the context a scheduled run would."""
    keys = [s.key for s in folder.manifest.series]
    with sessions() as db:
        found = series_state(db.connection(), folder.manifest.id, keys, today)
    return {key: (state.last, state.count) for key, state in found.items()}


def _upload_folder(upload: PortalUpload, review: bytes | None = None) -> RoomFolder:
    unpacked = read_pack(upload.archive)
    code = check_code(unpacked.folder, unpacked.files, unpacked.pack_info)
    manifest = code.manifest
    if review is not None:
        unpacked.files["review.json"] = review
    if "fixtures/context.json" in unpacked.files:
        fixture = json.loads(unpacked.files["fixtures/context.json"])
    else:
        fixture = {
            "now": format_instant(upload.uploaded_at),
            "today": today_in_zone(upload.uploaded_at, manifest.timezone).isoformat(),
        }
    return RoomFolder(manifest, unpacked.files, code.files, fixture)


def _version_folder(db: Session, version_id: int, now: datetime) -> RoomFolder | None:
    found = db.execute(select(versions.c.manifest).where(versions.c.id == version_id)).first()
    if found is None:
        return None
    manifest = parse_manifest(found[0]).manifest
    if manifest is None:
        return None
    files = {
        path: bytes(content)
        for path, content in db.execute(
            select(version_files.c.path, blobs.c.content)
            .join(blobs, blobs.c.sha256 == version_files.c.sha256)
            .where(version_files.c.version_id == version_id)
        ).all()
    }
    kept = db.get(VersionCheckInput, version_id)
    everything = read_pack(kept.archive).files if kept is not None else dict(files)
    if "fixtures/context.json" in everything:
        fixture = json.loads(everything["fixtures/context.json"])
    else:
        fixture = {
            "now": format_instant(now),
            "today": today_in_zone(now, manifest.timezone).isoformat(),
        }
    return RoomFolder(manifest, everything, files, fixture)
