"""The review desk (DECISIONS 10, `review` area), for the service's reviewers: the queue in order
of submission, a version with its file diffs, findings, review information, attestations and
record diff, and the decision (approve, request changes, reject)."""

from __future__ import annotations

from fastapi import APIRouter

from almanac.api.deps import Context, CurrentAccount, Db, Now
from almanac.api.schemas import RowIdPath
from almanac.api.schemas.host import FindingOut
from almanac.api.schemas.portal import AttestationOut, UploadOut
from almanac.api.schemas.review import (
    FileChangeOut,
    ReviewDecisionIn,
    ReviewDecisionOut,
    ReviewedVersionOut,
    ReviewQueueEntryOut,
    SentBackOut,
)
from almanac.platform.mail import send_all
from almanac.platform.publishing.review import desk
from almanac.platform.publishing.uploads.decisions import DecisionView

router = APIRouter(prefix="/review", tags=["review"])


def _decision_out(view: DecisionView) -> ReviewDecisionOut:
    return ReviewDecisionOut(
        id=view.id,
        upload_id=view.upload_id,
        version=view.version,
        decision=view.decision,
        reason=view.reason,
        note=view.note,
        reviewer=view.reviewer,
        reviewed=view.reviewed,
        decided_at=view.decided_at,
    )


def _files_out(files: tuple[desk.FileChange, ...]) -> list[FileChangeOut]:
    return [
        FileChangeOut(
            path=f.path,
            change=f.change,
            size=f.size,
            published_size=f.published_size,
            binary=f.binary,
            diff=f.diff,
        )
        for f in files
    ]


@router.get("/queue", response_model=list[ReviewQueueEntryOut])
def queue(account: CurrentAccount, db: Db, now: Now) -> list[ReviewQueueEntryOut]:
    """Every version in review, oldest submission first, with how long it has waited."""
    return [
        ReviewQueueEntryOut(
            upload_id=e.upload_id,
            plugin_id=e.plugin_id,
            version=e.version,
            organization_id=e.organization_id,
            organization=e.organization,
            submitted_at=e.submitted_at,
            waiting_seconds=int(e.waiting.total_seconds()),
            update=e.update,
        )
        for e in desk.review_queue(db, account, now)
    ]


@router.get("/uploads/{upload_id}", response_model=ReviewedVersionOut)
def reviewed_version(
    upload_id: RowIdPath, account: CurrentAccount, ctx: Context, db: Db
) -> ReviewedVersionOut:
    """A submitted version as the desk shows it; its `reviewed` digest goes back with the
    decision. A resubmission shows the decisions on the plug-in's earlier uploads and the
    diff against the one sent back."""
    found = desk.reviewed_version(db, account, upload_id)
    base_url = ctx.settings.base_url
    return ReviewedVersionOut(
        upload=UploadOut.of(found.upload, base_url),
        organization=found.organization,
        domain=found.domain,
        domain_verified=found.domain_verified,
        reviewed=found.reviewed,
        publish_on_approval=found.publish_on_approval,
        published_version=found.published_version,
        files=_files_out(found.files),
        findings=FindingOut.all_of(found.findings, base_url),
        warnings=FindingOut.all_of(found.warnings, base_url),
        review=found.review,
        attestations=[AttestationOut.of(a) for a in found.attestations],
        record_diff=None if found.record_diff is None else dict(found.record_diff),
        decisions=[_decision_out(d) for d in found.decisions],
        earlier_decisions=[_decision_out(d) for d in found.earlier_decisions],
        sent_back=None
        if found.sent_back is None
        else SentBackOut(
            upload_id=found.sent_back.upload_id,
            version=found.sent_back.version,
            decided_at=found.sent_back.decided_at,
            files=_files_out(found.sent_back.files),
        ),
    )


@router.post("/uploads/{upload_id}/decision", response_model=ReviewDecisionOut)
def decide(
    upload_id: RowIdPath,
    body: ReviewDecisionIn,
    account: CurrentAccount,
    ctx: Context,
    db: Db,
    now: Now,
) -> ReviewDecisionOut:
    """Approve, request changes or reject a version in review, with a reason and a note, naming
    the `reviewed` digest the desk showed (409 REVIEW-CONTENT-CHANGED otherwise). A reviewer
    from the publishing organization may not approve while another reviewer exists (403
    REVIEW-SAME-ORGANIZATION). The organization's owners and admins are told by mail and in
    the portal; a version submitted to be published on approval is published at once."""
    done = desk.decide(
        db,
        account,
        upload_id,
        body.decision,
        reason=body.reason,
        note=body.note,
        reviewed=body.reviewed,
        now=now,
    )
    db.commit()
    send_all(ctx.mailer, done.mails, now)
    return _decision_out(done.decision)
