"""A reviewer's decisions on an upload ("Version in the portal", in review), as the review desk
and the upload's own organization read them: the desk lists them all (and those on the
plug-in's earlier uploads), the organization sees the latest with its reason and note beside
the upload."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import select
from sqlalchemy.orm import Session

from almanac.platform.publishing.models import PortalUpload, ReviewDecision, Verdict


@dataclass(frozen=True, slots=True)
class DecisionView:
    """A reviewer's decision with its reason and note, the reviewed content it names, and the
    version of the upload decided."""

    id: int
    upload_id: int
    version: str
    decision: Verdict
    reason: str
    note: str
    reviewer: str
    reviewed: str
    decided_at: datetime


def decision_view(row: ReviewDecision, version: str) -> DecisionView:
    return DecisionView(
        id=row.id,
        upload_id=row.upload_id,
        version=version,
        decision=Verdict(row.decision),
        reason=row.reason,
        note=row.note,
        reviewer=row.reviewer,
        reviewed=row.reviewed,
        decided_at=row.decided_at,
    )


def decisions_of(db: Session, upload_id: int) -> list[DecisionView]:
    """The decisions on an upload, oldest first."""
    return decisions_on(db, [upload_id])


def decisions_on(db: Session, upload_ids: Sequence[int]) -> list[DecisionView]:
    """The decisions on these uploads, oldest first."""
    rows = db.execute(
        select(ReviewDecision, PortalUpload.version)
        .join(PortalUpload, PortalUpload.id == ReviewDecision.upload_id)
        .where(ReviewDecision.upload_id.in_(list(upload_ids)))
        .order_by(ReviewDecision.id)
    ).all()
    return [decision_view(row, version) for row, version in rows]
