"""The review desk's pages at /review, for the service's reviewers: the queue with waiting times,
a version (its decisions and those on the plug-in's earlier uploads, for a resubmission its
file diffs against the upload sent back, its file diffs against the published version,
findings, warnings, review information and record diff as tables, attestations) and the
decision form, over the same `desk` functions the `/api/v1/review` routes call."""

from __future__ import annotations

from fastapi import APIRouter, Request
from fastapi.responses import Response

from almanac.api.deps import Context, Db, Now
from almanac.api.pages.common import Form, PageAccount, redirect, refusals, render, text_field
from almanac.api.schemas import RowIdPath
from almanac.api.schemas.review import ReviewDecisionIn
from almanac.platform.accounts import Account
from almanac.platform.contract.review import review_sheet
from almanac.platform.mail import send_all
from almanac.platform.publishing.publication.rollouts import ShadowDiff
from almanac.platform.publishing.review import desk
from almanac.platform.publishing.uploads.diff import diff_table

router = APIRouter(prefix="/review", include_in_schema=False)

DECISIONS = {
    "approve": "Approve",
    "request-changes": "Request changes",
    "reject": "Reject",
}


def waiting_words(seconds: float) -> str:
    """How long a version waited, as a person says it: 2 d 3 h, 5 h 10 min, 12 min."""
    minutes = int(seconds // 60)
    days, minutes = divmod(minutes, 24 * 60)
    hours, minutes = divmod(minutes, 60)
    if days:
        return f"{days} d {hours} h"
    if hours:
        return f"{hours} h {minutes} min"
    return f"{minutes} min"


@router.get("")
def queue(request: Request, account: PageAccount, db: Db, now: Now) -> Response:
    with refusals():
        entries = desk.review_queue(db, account, now)
    context = {
        "title": "Review",
        "entries": entries,
        "waiting": {e.upload_id: waiting_words(e.waiting.total_seconds()) for e in entries},
    }
    return render(request, "review_queue.html", context, account=account)


@router.get("/uploads/{upload_id}")
def version(
    request: Request,
    upload_id: RowIdPath,
    account: PageAccount,
    db: Db,
    ctx: Context,
    done: str = "",
) -> Response:
    with refusals():
        found = desk.reviewed_version(db, account, upload_id)
    context = {
        "title": f"{found.upload.plugin_id} {found.upload.version} · Review",
        "v": found,
        "sheet": review_sheet(found.review),
        "table": None if found.record_diff is None else diff_table(found.record_diff),
        "decisions_shown": sorted([*found.earlier_decisions, *found.decisions], key=lambda d: d.id),
        "decisions": DECISIONS,
        "base_url": ctx.settings.base_url,
        "done": "Decision recorded; the publisher was told." if done == "decided" else None,
    }
    return render(request, "review_version.html", context, account=account)


@router.get("/uploads/{upload_id}/shadow-runs/{shadow_id}/diff")
def shadow_diff(
    request: Request, upload_id: RowIdPath, shadow_id: RowIdPath, account: PageAccount, db: Db
) -> Response:
    """A shadow run's full record diff of the version on the desk."""
    with refusals():
        found = desk.reviewed_shadow_diff(db, account, upload_id, shadow_id)
    back = f"/review/uploads/{upload_id}"
    return shadow_diff_view(request, account, found, back, "Back to the version")


def shadow_diff_view(
    request: Request, account: Account, found: ShadowDiff, back: str, back_words: str
) -> Response:
    """The page of one shadow run's record diff (the portal's and the desk's), drawn with the
    desk's record diff tables."""
    context = {
        "title": f"Shadow run {found.shadow.id} of {found.plugin_id} {found.version}",
        "found": found,
        "table": None if found.diff is None else diff_table(found.diff),
        "back": back,
        "back_words": back_words,
    }
    return render(request, "shadow_diff.html", context, account=account)


@router.post("/uploads/{upload_id}/decision")
def decide(
    upload_id: RowIdPath, form: Form, account: PageAccount, db: Db, ctx: Context, now: Now
) -> Response:
    with refusals():
        body = ReviewDecisionIn.model_validate(
            {
                "decision": text_field(form, "decision"),
                "reason": text_field(form, "reason"),
                "note": text_field(form, "note"),
                "reviewed": text_field(form, "reviewed"),
            }
        )
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
    return redirect(f"/review/uploads/{upload_id}?done=decided")
