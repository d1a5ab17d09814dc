"""Shapes of the review desk (`/api/v1/review`): the queue, a version as the desk shows it, and
a reviewer's decision."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from almanac.api.schemas.host import FindingOut
from almanac.api.schemas.portal import AttestationOut, ShadowRunOut, UploadOut
from almanac.platform.publishing.models import Verdict
from almanac.platform.publishing.review.desk import (
    NOTE_MAX,
    REASON_MAX,
    QueueEntry,
    ReviewedVersion,
    SentBack,
)


class ReviewQueueEntryOut(BaseModel):
    """A version waiting in review and how long it has waited."""

    upload_id: int
    plugin_id: str
    version: str
    organization_id: int
    organization: str
    submitted_at: datetime
    waiting_seconds: int
    update: bool = Field(description="a version of the plug-in was published before")

    @classmethod
    def of(cls, e: QueueEntry) -> ReviewQueueEntryOut:
        return cls(
            upload_id=e.upload_id,
            plugin_id=e.plugin_id,
            version=e.version,
            organization_id=e.organization_id,
            organization=e.organization,
            submitted_at=e.submitted_at,
            waiting_seconds=int(e.waiting.total_seconds()),
            update=e.update,
        )


class FileChangeOut(BaseModel):
    """One file of the version against the published version."""

    model_config = ConfigDict(from_attributes=True)  # desk.FileChange, field for field

    path: str
    change: str = Field(description="added, removed, changed or same")
    size: int | None
    published_size: int | None = Field(
        description="its size in what it is compared with: the published version, or the "
        "upload sent back"
    )
    binary: bool
    diff: str | None = Field(description="unified diff of a changed text file")


class ReviewDecisionOut(BaseModel):
    """A reviewer's decision with its reason and note."""

    model_config = ConfigDict(from_attributes=True)  # decisions.DecisionView, field for field

    id: int
    upload_id: int
    version: str = Field(description="the version of the upload decided")
    decision: Verdict
    reason: str
    note: str
    reviewer: str
    reviewed: str = Field(description="the reviewed-content digest the decision names")
    decided_at: datetime


class SentBackOut(BaseModel):
    """The plug-in's upload a reviewer sent back with changes requested before this one, and
    each file of this one against it."""

    upload_id: int
    version: str
    decided_at: datetime = Field(description="when the changes were requested")
    files: list[FileChangeOut] = Field(
        description="the reviewed files (review.json being the review information in force, "
        "laid out alike on both sides) against the upload sent back"
    )

    @classmethod
    def of(cls, found: SentBack) -> SentBackOut:
        return cls(
            upload_id=found.upload_id,
            version=found.version,
            decided_at=found.decided_at,
            files=[FileChangeOut.model_validate(f) for f in found.files],
        )


class ReviewedVersionOut(BaseModel):
    """Everything the desk shows of one version; send `reviewed` back with the decision."""

    upload: UploadOut
    organization: str
    domain: str | None
    domain_verified: bool
    reviewed: str = Field(
        description="digest of exactly the content reviewed (files, review information, "
        "attestations): an approval binds it"
    )
    publish_on_approval: bool
    published_version: str | None
    files: list[FileChangeOut]
    findings: list[FindingOut]
    warnings: list[FindingOut]
    review: Any = Field(description="the review information (review.json's object)")
    attestations: list[AttestationOut]
    record_diff: dict[str, Any] | None = Field(
        description="for an update, what its run on today's real downloads would change in the "
        "stored records: `today`; per series in `series` the counts `new`, `revised`, `moved`, "
        "`missing` and the first records of each (`date`, `key`, `kind`, and the record's "
        "content as an object: `content`, or `old` and `new`; `to` for a move, `misses` for a "
        "missing one); `removed_series`, each series the version no longer declares with the "
        "`records` kept of it"
    )
    decisions: list[ReviewDecisionOut] = Field(description="the decisions on this upload")
    earlier_decisions: list[ReviewDecisionOut] = Field(
        description="the decisions on the plug-in's uploads before this one, since its "
        "published version, oldest first"
    )
    sent_back: SentBackOut | None = Field(
        description="for a resubmission, the newest earlier upload sent back with changes "
        "requested, and the file diff against it"
    )
    shadow_runs: list[ShadowRunOut] = Field(
        description="once published with a shadow period: each shadow run beside the live "
        "version (outcome, reason, diff counts per series)"
    )

    @classmethod
    def of(cls, found: ReviewedVersion, base_url: str) -> ReviewedVersionOut:
        """The version as the desk shows it, with docs links under `base_url`."""
        return cls(
            upload=UploadOut.of(found.upload, base_url),
            organization=found.organization,
            domain=found.domain,
            domain_verified=found.domain_verified,
            reviewed=found.reviewed,
            publish_on_approval=found.publish_on_approval,
            published_version=found.published_version,
            files=[FileChangeOut.model_validate(f) for f in found.files],
            findings=FindingOut.all_of(found.findings, base_url),
            warnings=FindingOut.all_of(found.warnings, base_url),
            review=found.review,
            attestations=[AttestationOut.model_validate(a) for a in found.attestations],
            record_diff=None if found.record_diff is None else dict(found.record_diff),
            decisions=[ReviewDecisionOut.model_validate(d) for d in found.decisions],
            earlier_decisions=[
                ReviewDecisionOut.model_validate(d) for d in found.earlier_decisions
            ],
            sent_back=None if found.sent_back is None else SentBackOut.of(found.sent_back),
            shadow_runs=[ShadowRunOut.model_validate(s) for s in found.shadow_runs],
        )


class ReviewDecisionIn(BaseModel):
    decision: Verdict
    reason: str = Field(min_length=1, max_length=REASON_MAX)
    note: str = Field(default="", max_length=NOTE_MAX)
    reviewed: str = Field(
        min_length=1, max_length=80, description="the `reviewed` digest the desk showed"
    )
