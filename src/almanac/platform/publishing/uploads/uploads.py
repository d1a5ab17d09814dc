"""Uploads in the portal ("Version in the portal": upload and its static checks; "Limits")."""

from __future__ import annotations

import hashlib
import json
import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import date, datetime, time, timedelta
from typing import Any, Protocol

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from almanac.platform.accounts.models import Account
from almanac.platform.contract.listing import check_listing
from almanac.platform.contract.manifest import Manifest
from almanac.platform.contract.pack import CodeRefused, PluginCode, check_code, read_pack
from almanac.platform.contract.problems import Problem
from almanac.platform.contract.review import REVIEW_FILE, review_problems
from almanac.platform.contract.rules import version_key
from almanac.platform.errors import Conflict, NotFound, RateLimited
from almanac.platform.hosting import update_findings
from almanac.platform.lifecycle import Trigger
from almanac.platform.publishing.identity.domains import current_domain
from almanac.platform.publishing.identity.ids import bind_on_upload
from almanac.platform.publishing.identity.roles import require_manager, require_member
from almanac.platform.publishing.models import (
    CheckStatus,
    PortalUpload,
    UploadCheck,
    UploadState,
)
from almanac.platform.publishing.uploads.check_queue import CheckView, check_view, queue_room_checks
from almanac.platform.publishing.uploads.decisions import DecisionView, decisions_of
from almanac.platform.publishing.uploads.diff import structured
from almanac.platform.publishing.uploads.review_information import sent_review
from almanac.platform.publishing.uploads.upload_states import allows, move, move_check
from almanac.platform.store.tables import moves, versions

log = logging.getLogger(__name__)

UPLOADS_A_DAY = 20
"""'Limits', Quotas: uploads a day per organization (the UTC day of the upload)."""
BEING_CHECKED = 3
"""'Limits', Quotas: versions of an organization being checked at once."""
LISTING_FILE = "listing.json"
ICON_FILE = "listing/icon.png"
RECORDS_FILE = "fixtures/records.jsonl"

STATIC_CHECKS = ("manifest", "folder", "imports", "listing", "review", "updates")
"""The checks made at once, in the upload's answer (review only when the file is there, listing
always: without its file, a warning; updates only when a version of the plug-in was
published)."""

_FOLDER_CODES = ("PLG-FOLDER-", "PLG-FETCH-", "PLG-FIXTURE-", "PLG-CODE-", "PLG-ZIP-")


class ImportsJudge(Protocol):
    """The imports rule (PLG-IMPORT-OUTSIDE, PLG-IMPORT-PACKAGE) is the tool's own
    `checkImports`, one rule in one function; the service runs it in Node
    (`sandbox/tool_imports.py`)."""

    def __call__(self, folder: str, files: Mapping[str, bytes]) -> list[Problem]:
        """The import problems of the plug-in files (path -> bytes) as `check` finds them:
        every import from fetch.mjs on, through its own modules."""
        ...


@dataclass(frozen=True, slots=True)
class UploadView:
    """An uploaded version as its organization sees it. `code_upload_id` is the earlier upload
    whose code this listing-only version shares; `code_published` says its code is a version
    registered at the host already; `code_approved` says a person approved this code before
    (`code_approved_before`), so that approval stands for it."""

    id: int
    organization_id: int
    plugin_id: str
    version: str
    digest: str
    state: UploadState
    code_upload_id: int | None
    code_published: bool
    code_approved: bool
    uploaded_by: str
    agent_name: str | None
    uploaded_at: datetime
    withdrawn_by: str | None
    withdrawn_at: datetime | None
    checks: tuple[CheckView, ...]
    record_diff: Mapping[str, Any] | None = None
    submitted_by: str | None = None
    submitted_at: datetime | None = None
    agreement_version: int | None = None
    replaced_by: int | None = None
    publish_on_approval: bool = False
    published_by: str | None = None
    published_at: datetime | None = None
    decision: DecisionView | None = None
    """The latest reviewer's decision, with its reason and note."""

    @property
    def listing_only(self) -> bool:
        return self.code_upload_id is not None or self.code_published

    @property
    def warnings(self) -> tuple[Problem, ...]:
        return tuple(p for c in self.checks for p in c.findings if p.severity == "warning")


@dataclass(frozen=True, slots=True)
class UploadAnswer:
    """`created` is False when the same bytes were uploaded before: the answer is that version."""

    upload: UploadView
    created: bool


_APPROVED_UPLOADS = (UploadState.APPROVED, UploadState.PUBLISHED, UploadState.SUPERSEDED)


def code_approved_before(db: Session, plugin_id: str, digest: str) -> bool:
    """ "Versioning" 3, a listing-only version: whether a person approved this code (the
    digest) of the plug-in before, so that its approval stands: a reviewer approved an upload
    of it (approved, published or superseded since), or the host approved a version with this
    digest (an `approve` move names it). The same code uploaded before and never approved, or
    registered at the host and still Pending, has no approval to stand."""
    reviewed = db.scalar(
        select(PortalUpload.id)
        .where(
            PortalUpload.plugin_id == plugin_id,
            PortalUpload.digest == digest,
            PortalUpload.state.in_(_APPROVED_UPLOADS),
        )
        .limit(1)
    )
    if reviewed is not None:
        return True
    at_host = db.scalar(
        select(moves.c.id)
        .join(versions, versions.c.id == moves.c.version_id)
        .where(
            moves.c.plugin_id == plugin_id,
            moves.c.action == str(Trigger.APPROVE),
            versions.c.digest == digest,
        )
        .limit(1)
    )
    return at_host is not None


def upload_view(db: Session, row: PortalUpload) -> UploadView:
    """An upload as its organization sees it, with its checks and the latest decision on it."""
    return _view(db, row)


def _view(db: Session, row: PortalUpload) -> UploadView:
    checks = db.scalars(
        select(UploadCheck).where(UploadCheck.upload_id == row.id).order_by(UploadCheck.id)
    )
    decisions = decisions_of(db, row.id)
    return UploadView(
        id=row.id,
        organization_id=row.organization_id,
        plugin_id=row.plugin_id,
        version=row.version,
        digest=row.digest,
        state=UploadState(row.state),
        code_upload_id=row.code_upload_id,
        code_published=row.code_published,
        code_approved=(row.code_upload_id is not None or row.code_published)
        and code_approved_before(db, row.plugin_id, row.digest),
        uploaded_by=row.uploaded_by,
        agent_name=row.agent_name,
        uploaded_at=row.uploaded_at,
        withdrawn_by=row.withdrawn_by,
        withdrawn_at=row.withdrawn_at,
        checks=tuple(check_view(c) for c in checks),
        record_diff=structured(row.record_diff),
        submitted_by=row.submitted_by,
        submitted_at=row.submitted_at,
        agreement_version=row.agreement_version,
        replaced_by=row.replaced_by,
        publish_on_approval=row.publish_on_approval,
        published_by=row.published_by,
        published_at=row.published_at,
        decision=decisions[-1] if decisions else None,
    )


def content_hash(folder: str, files: Mapping[str, bytes]) -> str:
    """The hash of everything uploaded (every file, listing and review included): the same
    bytes twice are one version."""
    digest = hashlib.sha256(folder.encode() + b"\0")
    for path in sorted(files):
        content = files[path]
        digest.update(f"{path}\0{len(content)}\0".encode())
        digest.update(content)
    return digest.hexdigest()


def store_problems(manifest: Manifest) -> list[Problem]:
    """ "Errors", Upload: a store plug-in is public (PLG-STORE-AUDIENCE) and names its licence
    terms (PLG-LICENCE-TERMS-MISSING). Every portal upload is a store plug-in."""
    problems: list[Problem] = []
    if manifest.audience != "public":
        problems.append(
            Problem(
                "PLG-STORE-AUDIENCE",
                f"audience: a store plug-in is public, not {manifest.audience!r}",
                path="audience",
            )
        )
    terms = manifest.licence.terms
    if terms is None or not terms.strip():
        problems.append(
            Problem(
                "PLG-LICENCE-TERMS-MISSING",
                "licence.terms: a store plug-in states the terms its data is published under",
                path="licence.terms",
            )
        )
    return problems


def fixture_dates(files: Mapping[str, bytes]) -> set[date]:
    """The days `fixtures/records.jsonl` covers (the listing's example days are among them)."""
    days: set[date] = set()
    for line in files.get(RECORDS_FILE, b"").decode("utf-8", "replace").splitlines():
        try:
            found = json.loads(line)
            days.add(date.fromisoformat(found["date"]))
        except (ValueError, KeyError, TypeError):
            continue
    return days


def _same_code(db: Session, organization_id: int, code: PluginCode) -> tuple[int | None, bool]:
    """ "Versioning" 3 for an upload: (the first live upload of the same code, whether the code
    is a published version). Refused: the same version with other code (PLG-VERSION-REUSED),
    new code not above every published version (PLG-VERSION-NOT-GREATER)."""
    plugin_id, version, digest = code.manifest.id, code.manifest.version, code.digest
    published = db.execute(
        select(versions.c.version, versions.c.digest).where(versions.c.plugin_id == plugin_id)
    ).all()
    code_published = any(known == digest for _, known in published)
    if not code_published:
        if any(number == version for number, _ in published):
            raise Conflict(
                f"version {version} of {plugin_id!r} is published with other code; raise the "
                "version for every change of the code",
                code="PLG-VERSION-REUSED",
            )
        newest = max((number for number, _ in published), key=version_key, default=None)
        if newest is not None and version_key(version) <= version_key(newest):
            raise Conflict(
                f"version {version} of {plugin_id!r} does not exceed {newest}, the newest "
                "version published",
                code="PLG-VERSION-NOT-GREATER",
            )
    live = db.scalars(
        select(PortalUpload)
        .where(
            PortalUpload.organization_id == organization_id,
            PortalUpload.plugin_id == plugin_id,
            PortalUpload.state != UploadState.WITHDRAWN,
        )
        .order_by(PortalUpload.id)
    ).all()
    for row in live:
        if row.version == version and row.digest != digest:
            raise Conflict(
                f"version {version} of {plugin_id!r} was uploaded with other code (upload "
                f"{row.id}); raise the version for every change of the code",
                code="PLG-VERSION-REUSED",
            )
    first = next((row.id for row in live if row.digest == digest), None)
    return first, code_published


def _quotas(db: Session, organization_id: int, now: datetime) -> None:
    """ "Limits", Quotas: 20 uploads a UTC day (PLG-QUOTA-UPLOADS) and 3 versions being checked
    at once (PLG-QUOTA-CHECKING), both 429."""
    day = datetime.combine(now.date(), time(0), tzinfo=now.tzinfo)
    today = db.scalar(
        select(func.count())
        .select_from(PortalUpload)
        .where(
            PortalUpload.organization_id == organization_id,
            PortalUpload.uploaded_at >= day,
            PortalUpload.uploaded_at < day + timedelta(days=1),
        )
    )
    if (today or 0) >= UPLOADS_A_DAY:
        raise RateLimited(
            f"the organization uploaded {UPLOADS_A_DAY} times today (UTC), the most a day; "
            "upload again tomorrow",
            code="PLG-QUOTA-UPLOADS",
        )
    require_check_room(db, organization_id)


def require_check_room(db: Session, organization_id: int) -> None:
    """PLG-QUOTA-CHECKING when 3 versions of the organization are being checked."""
    checking = db.scalar(
        select(func.count())
        .select_from(PortalUpload)
        .where(
            PortalUpload.organization_id == organization_id,
            PortalUpload.state == UploadState.CHECKING,
        )
    )
    if (checking or 0) >= BEING_CHECKED:
        raise RateLimited(
            f"{BEING_CHECKED} versions of the organization are being checked, the most at "
            "once; wait until one's checks are final or withdraw one",
            code="PLG-QUOTA-CHECKING",
        )


@dataclass(frozen=True, slots=True)
class _Static:
    name: str
    problems: tuple[Problem, ...]

    @property
    def status(self) -> CheckStatus:
        failed = any(p.severity == "error" for p in self.problems)
        return CheckStatus.FAILED if failed else CheckStatus.PASSED


def static_checks(
    db: Session, organization_id: int, code: PluginCode, files: Mapping[str, bytes]
) -> list[_Static]:
    """The checks whose errors do not refuse the upload but fail the version's check: the
    listing (icon included; the publisher domain against the verified one), review.json's
    shape; with the warnings of the manifest, folder and update rules that passed. A version
    without a listing gets the listing check's warning that it can never be listed."""
    manifest = code.manifest
    warnings = list(code.warnings)
    out = [
        _Static("manifest", tuple(p for p in warnings if not p.code.startswith(_FOLDER_CODES))),
        _Static("folder", tuple(p for p in warnings if p.code.startswith(_FOLDER_CODES))),
        _Static("imports", ()),
    ]
    if LISTING_FILE in files:
        domain = current_domain(db, organization_id)
        verified = domain.domain if domain is not None and domain.verified else None
        listing = check_listing(
            files[LISTING_FILE],
            manifest,
            icon=files.get(ICON_FILE),
            fixture_dates=fixture_dates(files),
            verified_domain=verified,
        )
        out.append(_Static("listing", tuple(listing)))
    else:
        out.append(_Static("listing", (listing_missing(),)))
    if REVIEW_FILE in files:
        out.append(_Static("review", tuple(review_problems(files[REVIEW_FILE], manifest))))
    return out


def listing_missing() -> Problem:
    """ "Listing of a published plug-in": the store lists only a version with a listing, so a
    version without listing.json is warned (PLG-LISTING-MISSING) that it may be published but
    never listed; the warning fails nothing."""
    return Problem(
        "PLG-LISTING-MISSING",
        f"this version has no {LISTING_FILE}: it can be published but never listed in the "
        "store; add one to list",
        path=LISTING_FILE,
    )


def _refusals(code: PluginCode, files: Mapping[str, bytes], imports: ImportsJudge) -> None:
    """The store rules and the imports: any error refuses the upload (CodeRefused)."""
    problems = store_problems(code.manifest)
    problems.extend(imports(code.manifest.id, files))
    if any(p.severity == "error" for p in problems):
        raise CodeRefused(problems)


def _record_checks(db: Session, upload_id: int, checks: Sequence[_Static], now: datetime) -> None:
    for check in checks:
        row = UploadCheck(
            upload_id=upload_id,
            name=check.name,
            findings=[p.to_stored() for p in check.problems],
            queued_at=now,
            started_at=now,
            finished_at=now,
            deadline_at=now,
        )
        move_check(row, check.status)
        db.add(row)


def _existing(
    db: Session, organization_id: int, plugin_id: str, hashed: str
) -> PortalUpload | None:
    return db.scalars(
        select(PortalUpload)
        .where(
            PortalUpload.organization_id == organization_id,
            PortalUpload.plugin_id == plugin_id,
            PortalUpload.content_hash == hashed,
            PortalUpload.state != UploadState.WITHDRAWN,
        )
        .order_by(PortalUpload.id)
    ).first()


@dataclass(frozen=True, slots=True)
class Examined:
    """An archive that passed every check needing no database: its files, checked code and
    the hash of everything uploaded."""

    folder: str
    files: Mapping[str, bytes]
    code: PluginCode
    content_hash: str
    archive: bytes


def examine(archive: bytes, imports: ImportsJudge) -> Examined:
    """The checks of an upload that need no database, made before any transaction (on the
    embedded default a transaction that may write holds the one write lock): the archive
    (PLG-ZIP-*), code file types and the 1 MiB of covered code, the manifest
    (PLG-SCHEDULE-TOO-FREQUENT among its rules), the folder, the store rules
    (PLG-STORE-AUDIENCE, PLG-LICENCE-TERMS-MISSING) and the imports. Raises CodeRefused."""
    unpacked = read_pack(archive)
    code = check_code(unpacked.folder, unpacked.files, unpacked.pack_info)
    _refusals(code, unpacked.files, imports)
    hashed = content_hash(unpacked.folder, unpacked.files)
    return Examined(unpacked.folder, unpacked.files, code, hashed, archive)


def require_uploader(db: Session, organization_id: int, actor: Account) -> None:
    """Owners and admins upload (FORBIDDEN, EMAIL-UNVERIFIED; NOT-FOUND to outsiders)."""
    require_manager(db, organization_id, actor, "upload plug-ins")


def upload(
    db: Session,
    organization_id: int,
    actor: Account,
    examined: Examined,
    now: datetime,
    *,
    agent_name: str | None = None,
) -> UploadAnswer:
    """An owner or admin uploads an examined archive (`examine`). Then: the id (PLG-ID-TAKEN,
    PLG-ID-RETIRED, PLG-ID-RESERVED); the same bytes again answer the version uploaded before;
    the quotas (PLG-QUOTA-UPLOADS, PLG-QUOTA-CHECKING); "Versioning" 3 and 4 against the
    published versions. A refusal raises and stores nothing. The same code with other files
    outside the digest is a listing-only version. The static checks are recorded, the room
    checks queued."""
    require_uploader(db, organization_id, actor)
    code, hashed, archive = examined.code, examined.content_hash, examined.archive
    plugin_id = code.manifest.id
    bind_on_upload(db, organization_id, plugin_id, actor.email, now)
    same = _existing(db, organization_id, plugin_id, hashed)
    if same is not None:
        return UploadAnswer(_view(db, same), created=False)
    _quotas(db, organization_id, now)
    code_upload_id, code_published = _same_code(db, organization_id, code)
    update = update_findings(db.connection(), plugin_id, code.manifest)
    if any(p.severity == "error" for p in update):
        raise CodeRefused(update)
    checks = static_checks(db, organization_id, code, examined.files)
    if update:
        checks.append(_Static("updates", tuple(update)))
    row = PortalUpload(
        organization_id=organization_id,
        plugin_id=plugin_id,
        version=code.manifest.version,
        digest=code.digest,
        content_hash=hashed,
        code_upload_id=code_upload_id,
        code_published=code_published,
        manifest=dict(code.manifest.raw),
        archive=archive,
        uploaded_by=actor.email,
        agent_name=agent_name,
        uploaded_at=now,
    )
    move(row, UploadState.CHECKING)
    db.add(row)
    db.flush()
    _record_checks(db, row.id, checks, now)
    queue_room_checks(db, row, now)
    log.info(
        "upload %s: %s %s (%s) by %s", row.id, plugin_id, row.version, code.digest, actor.email
    )
    return UploadAnswer(_view(db, row), created=True)


def upload_row(db: Session, organization_id: int, upload_id: int) -> PortalUpload:
    """The organization's upload; NOT-FOUND for another organization's or an unknown one."""
    return _row(db, organization_id, upload_id)


def _row(db: Session, organization_id: int, upload_id: int) -> PortalUpload:
    row = db.get(PortalUpload, upload_id)
    if row is None or row.organization_id != organization_id:
        raise NotFound(f"the organization has no upload {upload_id}")
    return row


def organization_uploads(db: Session, organization_id: int, viewer: Account) -> list[UploadView]:
    """The organization's uploads, newest first, for a member to see (NOT-FOUND to others)."""
    require_member(db, organization_id, viewer)
    rows = db.scalars(
        select(PortalUpload)
        .where(PortalUpload.organization_id == organization_id)
        .order_by(PortalUpload.uploaded_at.desc(), PortalUpload.id.desc())
    ).all()
    return [_view(db, row) for row in rows]


def show_upload(db: Session, organization_id: int, viewer: Account, upload_id: int) -> UploadView:
    """One upload of the organization with its checks and findings (NOT-FOUND to outsiders,
    and for another organization's upload)."""
    require_member(db, organization_id, viewer)
    return _view(db, _row(db, organization_id, upload_id))


def withdraw(
    db: Session, organization_id: int, actor: Account, upload_id: int, now: datetime
) -> UploadView:
    """The publisher withdraws an upload (owners and admins): it leaves checks and review and
    is never submitted; its number may be uploaded again with other code. Withdrawn again is
    STATE-CONFLICT."""
    require_manager(db, organization_id, actor, "withdraw uploads")
    row = _row(db, organization_id, upload_id)
    if row.state == UploadState.WITHDRAWN:
        raise Conflict(f"upload {upload_id} was withdrawn already", code="STATE-CONFLICT")
    if not allows(row.state, UploadState.WITHDRAWN):
        raise Conflict(
            f"upload {upload_id} was published; unpublish or retire the plug-in instead",
            code="STATE-CONFLICT",
        )
    move(row, UploadState.WITHDRAWN)
    row.withdrawn_by = actor.email
    row.withdrawn_at = now
    for check in db.scalars(select(UploadCheck).where(UploadCheck.upload_id == row.id)):
        if check.status in (CheckStatus.QUEUED, CheckStatus.RUNNING, CheckStatus.COULD_NOT_RUN):
            move_check(check, CheckStatus.FAILED)
            check.finished_at = now
    db.flush()
    return _view(db, row)


def rerun_checks(
    db: Session, organization_id: int, actor: Account, upload_id: int, now: datetime
) -> UploadView:
    """Run the checks of an upload again (owners and admins; within the checks quota): the
    static checks are judged anew (a domain verified since changes the listing's answer) and
    the room checks queued again, replacing the earlier ones. A withdrawn upload, or one being
    checked, is STATE-CONFLICT."""
    require_manager(db, organization_id, actor, "re-run checks")
    row = _row(db, organization_id, upload_id)
    if row.state == UploadState.WITHDRAWN:
        raise Conflict(f"upload {upload_id} was withdrawn", code="STATE-CONFLICT")
    if row.state == UploadState.CHECKING:
        raise Conflict(f"upload {upload_id} is being checked already", code="STATE-CONFLICT")
    if row.state == UploadState.IN_REVIEW:
        raise Conflict(
            f"upload {upload_id} is in review; withdraw it before its checks run again",
            code="STATE-CONFLICT",
        )
    if not allows(row.state, UploadState.CHECKING):
        raise Conflict(
            f"upload {upload_id} is {row.state}; its checks are not run again",
            code="STATE-CONFLICT",
        )
    require_check_room(db, organization_id)
    unpacked = read_pack(row.archive)
    code = check_code(unpacked.folder, unpacked.files, unpacked.pack_info)
    files = dict(unpacked.files)
    sent = sent_review(db, row.id)
    if sent is not None:
        files[REVIEW_FILE] = sent
    checks = static_checks(db, organization_id, code, files)
    update = update_findings(db.connection(), row.plugin_id, code.manifest)
    if update:
        checks.append(_Static("updates", tuple(update)))
    for old in db.scalars(select(UploadCheck).where(UploadCheck.upload_id == row.id)):
        db.delete(old)
    row.record_diff = None
    db.flush()
    _record_checks(db, row.id, checks, now)
    move(row, UploadState.CHECKING)
    queue_room_checks(db, row, now)
    return _view(db, row)


def upload_manifest(
    db: Session, organization_id: int, viewer: Account, upload_id: int
) -> dict[str, Any]:
    """The manifest (plugin.json) of one of the organization's uploads, as uploaded (members;
    NOT-FOUND to outsiders): what the tool's `check --against <version id>` compares with."""
    require_member(db, organization_id, viewer)
    return dict(_row(db, organization_id, upload_id).manifest)
