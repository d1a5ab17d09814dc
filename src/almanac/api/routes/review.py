"""The review desk (DECISIONS 10, `review` area), for the service's reviewers: the queue in order
of submission, a version with its file diffs, findings, review information, attestations and
record diff, and the decision (approve, request changes, reject)."""

from __future__ import annotations

from fastapi import APIRouter

from almanac.api.deps import Context, CurrentAccount, Db, Now
from almanac.api.schemas import RowIdPath
from almanac.api.schemas.review import (
    ReviewDecisionIn,
    ReviewDecisionOut,
    ReviewedVersionOut,
    ReviewQueueEntryOut,
)
from almanac.platform.mail import send_all
from almanac.platform.publishing.review import desk

router = APIRouter(prefix="/review", tags=["review"])


@router.get("/queue", response_model=list[ReviewQueueEntryOut])
def queue(account: CurrentAccount, db: Db, now: Now) -> list[ReviewQueueEntryOut]:
    """Every version in review, oldest submission first, with how long it has waited."""
    return [ReviewQueueEntryOut.of(e) for e in desk.review_queue(db, account, now)]


@router.get("/uploads/{upload_id}", response_model=ReviewedVersionOut)
def reviewed_version(
    upload_id: RowIdPath, account: CurrentAccount, ctx: Context, db: Db
) -> ReviewedVersionOut:
    """A submitted version as the desk shows it; its `reviewed` digest goes back with the
    decision. A resubmission shows the decisions on the plug-in's earlier uploads and the
    diff against the one sent back."""
    return ReviewedVersionOut.of(
        desk.reviewed_version(db, account, upload_id), ctx.settings.base_url
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
    return ReviewDecisionOut.model_validate(done.decision)
