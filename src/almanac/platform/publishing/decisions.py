"""A reviewer's decisions on an upload ("Version in the portal", in review), as the review desk
and the upload's own organization read them: the desk lists them all, the organization sees the
latest with its reason and note beside the upload."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import select
from sqlalchemy.orm import Session

from almanac.platform.publishing.models import ReviewDecision, Verdict


@dataclass(frozen=True, slots=True)
class DecisionView:
    """A reviewer's decision with its reason and note, and the reviewed content it names."""

    id: int
    upload_id: int
    decision: Verdict
    reason: str
    note: str
    reviewer: str
    reviewed: str
    decided_at: datetime


def decision_view(row: ReviewDecision) -> DecisionView:
    return DecisionView(
        id=row.id,
        upload_id=row.upload_id,
        decision=Verdict(row.decision),
        reason=row.reason,
        note=row.note,
        reviewer=row.reviewer,
        reviewed=row.reviewed,
        decided_at=row.decided_at,
    )


def decisions_of(db: Session, upload_id: int) -> list[DecisionView]:
    """The decisions on an upload, oldest first."""
    rows = db.scalars(
        select(ReviewDecision)
        .where(ReviewDecision.upload_id == upload_id)
        .order_by(ReviewDecision.id)
    )
    return [decision_view(row) for row in rows]
