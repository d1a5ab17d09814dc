"""The review desk ("Version in the portal", in review): the queue of versions in review, what a
reviewer reads of one (its files and their diffs against the published version, findings,
warnings, review information, attestations, the record diff, the decisions on it and on the
plug-in's earlier uploads since its published version, and for a resubmission the diff against
the upload sent back) and the reviewer's decision."""

from __future__ import annotations

import difflib
import json
import logging
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from almanac.platform.accounts.models import (
    Account,
    Membership,
    Organization,
    StaffGrant,
    StaffRole,
)
from almanac.platform.accounts.organizations import current_membership
from almanac.platform.accounts.staff import has_staff_role
from almanac.platform.contract.pack import read_pack
from almanac.platform.contract.problems import Problem
from almanac.platform.contract.review import REVIEW_FILE
from almanac.platform.errors import Conflict, Forbidden, Invalid, NotFound
from almanac.platform.mail import MailMessage
from almanac.platform.publishing.identity.domains import current_domain
from almanac.platform.publishing.models import (
    PortalUpload,
    ReviewDecision,
    UploadState,
    Verdict,
)
from almanac.platform.publishing.publication import rollouts
from almanac.platform.publishing.publication.notices import tell_managers
from almanac.platform.publishing.publication.publication import publish_approved
from almanac.platform.publishing.publication.rollouts import ShadowRunView, upload_shadow_runs
from almanac.platform.publishing.review.gate import is_update
from almanac.platform.publishing.review.submission import AttestationMade, attestations_of
from almanac.platform.publishing.uploads.decisions import (
    DecisionView,
    decision_view,
    decisions_of,
    decisions_on,
)
from almanac.platform.publishing.uploads.diff import structured
from almanac.platform.publishing.uploads.review_information import review_document, reviewed_digest
from almanac.platform.publishing.uploads.upload_states import move
from almanac.platform.publishing.uploads.uploads import UploadView, upload_view
from almanac.platform.store.models import StoreListing
from almanac.platform.store.tables import blobs, plugins, version_files, versions

log = logging.getLogger(__name__)

REASON_MAX = 200
NOTE_MAX = 4000
DIFF_LINES_MAX = 2000
"""Lines of one file's diff shown; a longer diff says how many were left out."""

_AFTER = {
    Verdict.APPROVE: UploadState.APPROVED,
    Verdict.REQUEST_CHANGES: UploadState.CHANGES_REQUESTED,
    Verdict.REJECT: UploadState.REJECTED,
}
_WORDS = {
    Verdict.APPROVE: "approved",
    Verdict.REQUEST_CHANGES: "sent back with changes requested",
    Verdict.REJECT: "rejected",
}


@dataclass(frozen=True, slots=True)
class QueueEntry:
    """A version waiting in review, and how long it has waited."""

    upload_id: int
    plugin_id: str
    version: str
    organization_id: int
    organization: str
    submitted_at: datetime
    waiting: timedelta
    update: bool


@dataclass(frozen=True, slots=True)
class FileChange:
    """One file of the version against the published version: added, removed, changed or
    same; `diff` a unified diff of a changed text file (None for binary or unchanged)."""

    path: str
    change: str
    size: int | None
    published_size: int | None
    binary: bool
    diff: str | None


@dataclass(frozen=True, slots=True)
class SentBack:
    """The upload of the same plug-in a reviewer sent back with changes requested before this
    one was submitted, and each file of this one against it (`files`: the reviewed files,
    review.json being the review information in force on each side)."""

    upload_id: int
    version: str
    decided_at: datetime
    files: tuple[FileChange, ...]


@dataclass(frozen=True, slots=True)
class ReviewedVersion:
    """What the desk shows of one version; `reviewed` is the digest a decision names.
    `decisions` are this upload's; `earlier_decisions` those on the plug-in's uploads before
    it, since its published version; `sent_back` the newest of those sent back with changes
    requested, with the file diff against it."""

    upload: UploadView
    organization: str
    domain: str | None
    domain_verified: bool
    reviewed: str
    publish_on_approval: bool
    published_version: str | None
    files: tuple[FileChange, ...]
    findings: tuple[Problem, ...]
    warnings: tuple[Problem, ...]
    review: Any
    attestations: tuple[AttestationMade, ...]
    record_diff: Mapping[str, Any] | None
    decisions: tuple[DecisionView, ...]
    earlier_decisions: tuple[DecisionView, ...] = ()
    sent_back: SentBack | None = None
    shadow_runs: tuple[ShadowRunView, ...] = ()
    """Its shadow runs beside the live version, once published with a shadow period."""


@dataclass(frozen=True, slots=True)
class Decided:
    """The decision kept, the upload after it, and the mail to send once committed."""

    decision: DecisionView
    upload: UploadView
    mails: tuple[MailMessage, ...]


def require_reviewer(db: Session, account: Account) -> None:
    """FORBIDDEN unless the account holds the service's reviewer role."""
    if not has_staff_role(db, account, StaffRole.REVIEWER):
        raise Forbidden("this needs the service reviewer role")


def review_queue(db: Session, reviewer: Account, now: datetime) -> list[QueueEntry]:
    """Every version in review, oldest submission first, with its waiting time."""
    require_reviewer(db, reviewer)
    rows = db.execute(
        select(PortalUpload, Organization.name)
        .join(Organization, Organization.id == PortalUpload.organization_id)
        .where(PortalUpload.state == UploadState.IN_REVIEW)
        .order_by(PortalUpload.submitted_at, PortalUpload.id)
    ).all()
    entries = []
    for upload, organization in rows:
        assert upload.submitted_at is not None
        entries.append(
            QueueEntry(
                upload_id=upload.id,
                plugin_id=upload.plugin_id,
                version=upload.version,
                organization_id=upload.organization_id,
                organization=organization,
                submitted_at=upload.submitted_at,
                waiting=now - upload.submitted_at,
                update=is_update(db, upload.plugin_id),
            )
        )
    return entries


def _published_files(db: Session, plugin_id: str) -> tuple[str | None, dict[str, bytes]]:
    """The published version's number and files: the whole upload of a plug-in published
    through the portal, else the covered files of the version approved at the host."""
    listing = db.get(StoreListing, plugin_id)
    if listing is not None:
        upload = db.get(PortalUpload, listing.upload_id)
        assert upload is not None
        return upload.version, dict(read_pack(upload.archive).files)
    approved = db.execute(
        select(plugins.c.approved_version_id).where(plugins.c.id == plugin_id)
    ).scalar()
    if approved is None:
        return None, {}
    rows = db.execute(
        select(version_files.c.path, blobs.c.content)
        .join(blobs, blobs.c.sha256 == version_files.c.sha256)
        .where(version_files.c.version_id == approved)
    ).all()
    number = db.execute(select(versions.c.version).where(versions.c.id == approved)).scalar()
    return number, {row.path: row.content for row in rows}


def _text(content: bytes) -> str | None:
    if b"\0" in content:
        return None
    try:
        return content.decode("utf-8")
    except UnicodeDecodeError:
        return None


def file_changes(
    files: Mapping[str, bytes], published: Mapping[str, bytes], against: str = "published"
) -> list[FileChange]:
    """Each file of the version against the published one (or another upload, `against`
    naming it in the diff's headers), by path: a unified diff for a changed text file (at most
    DIFF_LINES_MAX lines), sizes for a binary one."""
    changes = []
    for path in sorted(set(files) | set(published)):
        now_bytes, then_bytes = files.get(path), published.get(path)
        if then_bytes is None:
            change = "added"
        elif now_bytes is None:
            change = "removed"
        elif now_bytes == then_bytes:
            change = "same"
        else:
            change = "changed"
        new_text = None if now_bytes is None else _text(now_bytes)
        old_text = None if then_bytes is None else _text(then_bytes)
        binary = (now_bytes is not None and new_text is None) or (
            then_bytes is not None and old_text is None
        )
        diff = None
        if change != "same" and not binary:
            lines = list(
                difflib.unified_diff(
                    (old_text or "").splitlines(keepends=True),
                    (new_text or "").splitlines(keepends=True),
                    fromfile=f"{against}/{path}" if then_bytes is not None else "/dev/null",
                    tofile=f"version/{path}" if now_bytes is not None else "/dev/null",
                )
            )
            if len(lines) > DIFF_LINES_MAX:
                left = len(lines) - DIFF_LINES_MAX
                lines = [*lines[:DIFF_LINES_MAX], f"... {left} more lines of the diff\n"]
            diff = "".join(lines)
        changes.append(
            FileChange(
                path=path,
                change=change,
                size=None if now_bytes is None else len(now_bytes),
                published_size=None if then_bytes is None else len(then_bytes),
                binary=binary,
                diff=diff,
            )
        )
    return changes


def _earlier_uploads(db: Session, row: PortalUpload) -> list[int]:
    """The plug-in's uploads before this one and after its published one, oldest first: the
    tries at the version now in review (the same number again, or another)."""
    query = select(PortalUpload.id).where(
        PortalUpload.plugin_id == row.plugin_id, PortalUpload.id < row.id
    )
    listing = db.get(StoreListing, row.plugin_id)
    if listing is not None:
        query = query.where(PortalUpload.id > listing.upload_id)
    return list(db.scalars(query.order_by(PortalUpload.id)))


def _reviewed_files(db: Session, row: PortalUpload) -> dict[str, bytes]:
    """The files a reviewer reviewed of an upload: its pack, review.json being the review
    information in force, laid out alike on every upload so that only its content differs."""
    files = dict(read_pack(row.archive).files)
    review = review_document(db, row)
    if review is not None:
        try:
            doc = json.loads(review)
        except (ValueError, UnicodeDecodeError):
            files[REVIEW_FILE] = review
        else:
            files[REVIEW_FILE] = (json.dumps(doc, indent=2, ensure_ascii=False) + "\n").encode()
    return files


def _sent_back(db: Session, row: PortalUpload, earlier: list[DecisionView]) -> SentBack | None:
    """The newest earlier upload whose last decision requested changes, and this upload's
    reviewed files against its own."""
    last: dict[int, DecisionView] = {d.upload_id: d for d in earlier}
    for upload_id in sorted(last, reverse=True):
        decision = last[upload_id]
        if decision.decision is not Verdict.REQUEST_CHANGES:
            continue
        then = db.get(PortalUpload, upload_id)
        assert then is not None
        return SentBack(
            upload_id=upload_id,
            version=then.version,
            decided_at=decision.decided_at,
            files=tuple(
                file_changes(
                    _reviewed_files(db, row), _reviewed_files(db, then), f"sent-back-{upload_id}"
                )
            ),
        )
    return None


def _upload(db: Session, upload_id: int) -> PortalUpload:
    row = db.get(PortalUpload, upload_id)
    if row is None or row.submitted_at is None:
        raise NotFound(f"no version {upload_id} was submitted for review")
    return row


def reviewed_version(db: Session, reviewer: Account, upload_id: int) -> ReviewedVersion:
    """Everything the desk shows of a submitted version, for a reviewer."""
    require_reviewer(db, reviewer)
    row = _upload(db, upload_id)
    organization = db.get(Organization, row.organization_id)
    assert organization is not None
    view = upload_view(db, row)
    published_version, published = _published_files(db, row.plugin_id)
    raw_review = review_document(db, row)
    try:
        review = None if raw_review is None else json.loads(raw_review)
    except (ValueError, UnicodeDecodeError):
        review = None
    domain = current_domain(db, row.organization_id)
    found = [p for c in view.checks for p in c.findings]
    earlier = decisions_on(db, _earlier_uploads(db, row))
    return ReviewedVersion(
        upload=view,
        organization=organization.name,
        domain=None if domain is None else domain.domain,
        domain_verified=domain is not None and domain.verified,
        reviewed=reviewed_digest(db, row),
        publish_on_approval=row.publish_on_approval,
        published_version=published_version,
        files=tuple(file_changes(read_pack(row.archive).files, published)),
        findings=tuple(p for p in found if p.severity != "warning"),
        warnings=tuple(p for p in found if p.severity == "warning"),
        review=review,
        attestations=tuple(attestations_of(db, row.id)),
        record_diff=structured(row.record_diff),
        decisions=tuple(decisions_of(db, row.id)),
        earlier_decisions=tuple(earlier),
        sent_back=_sent_back(db, row, earlier),
        shadow_runs=tuple(upload_shadow_runs(db, row.id)),
    )


def _from_publisher(db: Session, reviewer: Account, organization_id: int) -> bool:
    membership: Membership | None = current_membership(db, organization_id, reviewer.id)
    return membership is not None


def _other_reviewer_exists(db: Session, reviewer: Account, organization_id: int) -> bool:
    """Whether a reviewer other than `reviewer` and outside the organization exists."""
    others = db.scalars(
        select(StaffGrant.account_id).where(
            StaffGrant.role == StaffRole.REVIEWER,
            StaffGrant.account_id != reviewer.id,
            StaffGrant.revoked_at.is_(None),
        )
    ).all()
    return any(current_membership(db, organization_id, other) is None for other in others)


def decide(
    db: Session,
    reviewer: Account,
    upload_id: int,
    verdict: Verdict,
    *,
    reason: str,
    note: str,
    reviewed: str,
    now: datetime,
) -> Decided:
    """A reviewer approves, requests changes or rejects a version in review, with a reason
    and a note. `reviewed` must be the digest the desk showed (else REVIEW-CONTENT-CHANGED):
    an approval binds exactly that content. A reviewer from the publishing organization may
    not approve while another reviewer exists (REVIEW-SAME-ORGANIZATION). Owners and admins
    are told in the portal and by mail; a version submitted to be published on approval is
    published in the same step."""
    require_reviewer(db, reviewer)
    row = _upload(db, upload_id)
    reason = reason.strip()
    if not reason:
        raise Invalid("reason: give the reason for the decision")
    if len(reason) > REASON_MAX:
        raise Invalid(f"reason: at most {REASON_MAX} characters")
    if len(note) > NOTE_MAX:
        raise Invalid(f"note: at most {NOTE_MAX} characters")
    if row.state != UploadState.IN_REVIEW:
        raise Conflict(f"upload {row.id} is {row.state}, not in review", code="STATE-CONFLICT")
    current = reviewed_digest(db, row)
    if reviewed != current:
        raise Conflict(
            f"upload {row.id} is no longer the content you reviewed ({reviewed}); it is now "
            f"{current}: read it again before deciding",
            code="REVIEW-CONTENT-CHANGED",
        )
    if (
        verdict is Verdict.APPROVE
        and _from_publisher(db, reviewer, row.organization_id)
        and _other_reviewer_exists(db, reviewer, row.organization_id)
    ):
        raise Forbidden(
            "you belong to the publishing organization and another reviewer can decide: "
            "leave the approval to them",
            code="REVIEW-SAME-ORGANIZATION",
        )
    decision = ReviewDecision(
        upload_id=row.id,
        decision=verdict.value,
        reason=reason,
        note=note,
        reviewer_id=reviewer.id,
        reviewer=reviewer.email,
        reviewed=current,
        decided_at=now,
    )
    db.add(decision)
    move(row, _AFTER[verdict])
    db.flush()
    lines = [
        f"{row.plugin_id} {row.version} (upload {row.id}) was {_WORDS[verdict]} by a reviewer.",
        "",
        f"Reason: {reason}",
    ]
    if note.strip():
        lines += ["", "Note from the reviewer:", note.strip()]
    if verdict is Verdict.APPROVE and row.publish_on_approval:
        publish_approved(db, row, f"{row.submitted_by} (published on approval)", now)
        lines += ["", "It was published at once, as chosen when it was submitted."]
    elif verdict is Verdict.APPROVE:
        # "Version in the portal", approved: a person or an agent allowed to publish may.
        lines += [
            "",
            "An owner or admin publishes it from the portal when ready, or an agent allowed "
            "to publish does (the tool's publish command).",
        ]
    mails = tell_managers(
        db,
        row.organization_id,
        plugin_id=row.plugin_id,
        upload_id=row.id,
        kind=f"review-{verdict.value}",
        subject=f"Review of {row.plugin_id} {row.version}: {_WORDS[verdict]}",
        body="\n".join(lines) + "\n",
        now=now,
    )
    log.info("upload %s %s by reviewer %s", row.id, verdict.value, reviewer.email)
    return Decided(decision_view(decision, row.version), upload_view(db, row), tuple(mails))


def reviewed_shadow_diff(
    db: Session, reviewer: Account, upload_id: int, shadow_id: int
) -> rollouts.ShadowDiff:
    """A shadow run of the version on the desk with its full record diff, for a reviewer."""
    require_reviewer(db, reviewer)
    return rollouts.upload_shadow_diff(db, upload_id, shadow_id)
