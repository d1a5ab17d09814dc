"""The queue of the locked-room checks: their rows queued for an upload or a host version,
the queued ones read for the checks sensor, an upload settled once every check is final, the
deadline (PLG-CHECK-DEADLINE), the checks waiting for the service's network and queued again
once it is back, and the host version's checks read for its page.

Every status and state set here goes through `upload_states`; the checks themselves are
`room_checks`, their run `check_pipeline`.
"""

from __future__ import annotations

import io
import os
import zipfile
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from sqlalchemy import Connection, Row, select
from sqlalchemy.orm import Session

from almanac.platform.contract.context import format_instant
from almanac.platform.contract.pack import folder_files
from almanac.platform.contract.problems import Problem
from almanac.platform.mail import MailMessage
from almanac.platform.publishing.identity.roles import manager_addresses
from almanac.platform.publishing.models import (
    CheckStatus,
    PortalUpload,
    UploadCheck,
    UploadState,
    VersionCheckInput,
)
from almanac.platform.publishing.uploads.network import could_not_run_is_due
from almanac.platform.publishing.uploads.room_checks import NETWORK_DOWN, ROOM_CHECKS
from almanac.platform.publishing.uploads.upload_states import move, move_check

CHECK_DEADLINE = timedelta(minutes=15)
"""A room check not final this long after it was queued fails with PLG-CHECK-DEADLINE."""
FINAL = (CheckStatus.PASSED, CheckStatus.FAILED)


def _queue(
    db: Session,
    now: datetime,
    deadline: timedelta,
    *,
    upload_id: int | None = None,
    version_id: int | None = None,
) -> None:
    for name in ROOM_CHECKS:
        check = UploadCheck(
            upload_id=upload_id,
            version_id=version_id,
            name=name,
            findings=[],
            queued_at=now,
            deadline_at=now + deadline,
        )
        move_check(check, CheckStatus.QUEUED)
        db.add(check)


def queue_room_checks(
    db: Session, upload: PortalUpload, now: datetime, deadline: timedelta = CHECK_DEADLINE
) -> None:
    """Queue the room checks of an upload (after its static checks); the caller has moved it
    to being checked, which it stays until each is final (`settle_upload`)."""
    _queue(db, now, deadline, upload_id=upload.id)
    db.flush()


@dataclass(frozen=True, slots=True)
class QueuedUpload:
    """An upload with room checks waiting: the sensor asks for one checks run per queueing."""

    upload_id: int
    queued_at: datetime


def queued_uploads(db: Session) -> list[QueuedUpload]:
    """Uploads being checked whose room checks are queued, oldest first."""
    rows = db.execute(
        select(UploadCheck.upload_id, UploadCheck.queued_at)
        .join(PortalUpload, PortalUpload.id == UploadCheck.upload_id)
        .where(
            UploadCheck.status == CheckStatus.QUEUED,
            PortalUpload.state == UploadState.CHECKING,
        )
        .distinct()
        .order_by(UploadCheck.queued_at, UploadCheck.upload_id)
    ).all()
    return [QueuedUpload(u, at) for u, at in rows if u is not None]


def archive_of_folder(folder: str | os.PathLike[str]) -> bytes:
    """A folder on the server packed as a ZIP of `<id>/<path>` entries (its every file, as
    `pack` takes them), the input of its checks."""
    root = Path(folder)
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for path, content in sorted(folder_files(root).items()):
            archive.writestr(zipfile.ZipInfo(f"{root.name}/{path}", (1980, 1, 1, 0, 0, 0)), content)
    return buffer.getvalue()


def queue_version_checks(
    db: Session,
    version_id: int,
    archive: bytes,
    now: datetime,
    deadline: timedelta = CHECK_DEADLINE,
) -> bool:
    """Queue the room checks of a version an operator registered (its pack, or its folder
    packed), once: the same version registered again keeps its checks. They are an upload's
    (its whole pack is kept for them, listing and review.json included). True when queued."""
    known = db.scalar(select(UploadCheck.id).where(UploadCheck.version_id == version_id))
    if known is not None:
        return False
    db.add(VersionCheckInput(version_id=version_id, archive=archive))
    _queue(db, now, deadline, version_id=version_id)
    db.flush()
    return True


@dataclass(frozen=True, slots=True)
class QueuedVersion:
    """A host version whose room checks wait for their run."""

    version_id: int
    queued_at: datetime


def queued_versions(db: Session) -> list[QueuedVersion]:
    """Host versions with queued room checks, oldest first."""
    rows = db.execute(
        select(UploadCheck.version_id, UploadCheck.queued_at)
        .where(UploadCheck.version_id.is_not(None), UploadCheck.status == CheckStatus.QUEUED)
        .distinct()
        .order_by(UploadCheck.queued_at, UploadCheck.version_id)
    ).all()
    return [QueuedVersion(v, at) for v, at in rows if v is not None]


def upload_page(base_url: str, organization_id: int, upload_id: int) -> str:
    """The portal page of an upload under the service's public address (`ALMANAC_BASE_URL`):
    a mail links the page a person opens, never an API path."""
    return f"{base_url.rstrip('/')}/portal/{organization_id}/uploads/{upload_id}"


def settle_upload(db: Session, upload_id: int, base_url: str) -> list[MailMessage]:
    """The upload is checked once every check is final (a withdrawn one stays withdrawn); when
    some failed, the mail that tells the organization's owners and admins, linking the
    upload's page under `base_url`."""
    upload = db.get(PortalUpload, upload_id)
    if upload is None or upload.state != UploadState.CHECKING:
        return []
    checks = db.scalars(
        select(UploadCheck).where(UploadCheck.upload_id == upload_id).order_by(UploadCheck.id)
    ).all()
    if not all(CheckStatus(c.status) in FINAL for c in checks):
        return []
    move(upload, UploadState.CHECKED)
    failed = [c for c in checks if c.status == CheckStatus.FAILED]
    if not failed:
        return []
    lines = [
        f"The checks of {upload.plugin_id} {upload.version} (upload {upload.id}) finished, "
        f"and {len(failed)} of {len(checks)} failed:",
        "",
    ]
    for check in failed:
        lines.append(f"- {check.name}:")
        shown = (Problem.from_stored(f) for f in check.findings[:5])
        lines.extend(f"    {p.code}: {p.message}" for p in shown)
        if len(check.findings) > 5:
            lines.append(f"    ... and {len(check.findings) - 5} more")
    lines += [
        "",
        "Every finding, with its fix and docs link, is on the version's page: "
        + upload_page(base_url, upload.organization_id, upload.id),
    ]
    subject = f"Checks failed: {upload.plugin_id} {upload.version}"
    body = "\n".join(lines) + "\n"
    return [
        MailMessage(to=address, subject=subject, body=body)
        for address in manager_addresses(db, upload.organization_id)
    ]


def expire_overdue(db: Session, now: datetime, base_url: str) -> list[MailMessage]:
    """Every check not final past its deadline fails with PLG-CHECK-DEADLINE and its reason
    (nothing is left "validating"); the mail to send once this is committed, linking each
    upload's page under `base_url`."""
    overdue = db.scalars(
        select(UploadCheck).where(
            UploadCheck.status.in_([CheckStatus.QUEUED, CheckStatus.RUNNING]),
            UploadCheck.deadline_at <= now,
        )
    ).all()
    touched: list[int] = []  # uploads (a host version has no state to settle)
    for check in overdue:
        was = "queued" if check.status == CheckStatus.QUEUED else "running"
        problem = Problem(
            "PLG-CHECK-DEADLINE",
            f"the {check.name} check was still {was} at its deadline "
            f"{format_instant(check.deadline_at)}; re-run the checks",
        )
        move_check(check, CheckStatus.FAILED)
        check.findings = [*check.findings, problem.to_stored()]
        check.finished_at = now
        if check.upload_id is not None:
            touched.append(check.upload_id)
    messages: list[MailMessage] = []
    for upload_id in sorted(set(touched)):
        messages.extend(settle_upload(db, upload_id, base_url))
    db.flush()
    return messages


@dataclass(frozen=True, slots=True)
class NetworkOutage:
    """The checks that could not run because the service's network was down, as the host's
    notice and the operators' alert tell them: how many, since when, the newest one's words."""

    checks: int
    since: datetime
    last_at: datetime
    last_message: str


def network_outage(db: Session) -> NetworkOutage | None:
    """The checks (of uploads and host versions) waiting for the network; None when none."""
    rows = db.execute(
        select(UploadCheck.finished_at, UploadCheck.findings)
        .where(UploadCheck.status == CheckStatus.COULD_NOT_RUN)
        .order_by(UploadCheck.finished_at, UploadCheck.id)
    ).all()
    if not rows:
        return None
    first, last = rows[0], rows[-1]
    found = (Problem.from_stored(f) for f in last.findings)
    said = [p.message for p in found if p.code == NETWORK_DOWN]
    return NetworkOutage(
        checks=len(rows),
        since=first.finished_at,
        last_at=last.finished_at,
        last_message=said[0] if said else "",
    )


def requeue_for_network(
    db: Session, now: datetime, probe_reached: bool | None, deadline: timedelta = CHECK_DEADLINE
) -> int:
    """Queue again each check that could not run and is due (`network.could_not_run_is_due`:
    with a probe set, once it answers; without one, 10 minutes after), with a new deadline;
    the checks sensor then asks for their run. Returns how many were queued."""
    waiting = db.scalars(
        select(UploadCheck).where(UploadCheck.status == CheckStatus.COULD_NOT_RUN)
    ).all()
    queued = 0
    for check in waiting:
        since = check.finished_at or check.queued_at
        if not could_not_run_is_due(since, probe_reached, now):
            continue
        move_check(check, CheckStatus.QUEUED)
        check.findings = []
        check.queued_at = now
        check.started_at = None
        check.finished_at = None
        check.deadline_at = now + deadline
        queued += 1
    db.flush()
    return queued


@dataclass(frozen=True, slots=True)
class CheckView:
    """One named check of a version: its status (queued, running, passed, failed, or
    could_not_run while the service's network is down), deadline and findings."""

    name: str
    status: CheckStatus
    findings: tuple[Problem, ...]
    queued_at: datetime
    started_at: datetime | None
    finished_at: datetime | None
    deadline_at: datetime


def check_view(row: UploadCheck | Row[Any]) -> CheckView:
    """A check's row (an upload's or a host version's) as the portal and the host show it."""
    return CheckView(
        name=row.name,
        status=CheckStatus(row.status),
        findings=tuple(Problem.from_stored(f) for f in row.findings),
        queued_at=row.queued_at,
        started_at=row.started_at,
        finished_at=row.finished_at,
        deadline_at=row.deadline_at,
    )


def version_room_checks(conn: Connection, version_id: int) -> list[CheckView]:
    """The room checks of a host version (empty for a version registered before they existed)."""
    rows = conn.execute(
        select(
            UploadCheck.name,
            UploadCheck.status,
            UploadCheck.findings,
            UploadCheck.queued_at,
            UploadCheck.started_at,
            UploadCheck.finished_at,
            UploadCheck.deadline_at,
        )
        .where(UploadCheck.version_id == version_id)
        .order_by(UploadCheck.id)
    ).all()
    return [check_view(row) for row in rows]
