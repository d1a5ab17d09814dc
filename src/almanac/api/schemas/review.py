"""Shapes of the review desk (`/api/v1/review`): the queue, a version as the desk shows it, and
a reviewer's decision."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from pydantic import BaseModel, Field

from almanac.api.schemas.host import FindingOut
from almanac.api.schemas.portal import AttestationOut, UploadOut
from almanac.platform.publishing.desk import NOTE_MAX, REASON_MAX
from almanac.platform.publishing.models import Verdict


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


class FileChangeOut(BaseModel):
    """One file of the version against the published version."""

    path: str
    change: str = Field(description="added, removed, changed or same")
    size: int | None
    published_size: int | None
    binary: bool
    diff: str | None = Field(description="unified diff of a changed text file")


class ReviewDecisionOut(BaseModel):
    """A reviewer's decision with its reason and note."""

    id: int
    upload_id: int
    decision: Verdict
    reason: str
    note: str
    reviewer: str
    reviewed: str = Field(description="the reviewed-content digest the decision names")
    decided_at: datetime


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
    record_diff: dict[str, Any] | None
    decisions: list[ReviewDecisionOut]


class ReviewDecisionIn(BaseModel):
    decision: Verdict
    reason: str = Field(min_length=1, max_length=REASON_MAX)
    note: str = Field(default="", max_length=NOTE_MAX)
    reviewed: str = Field(
        min_length=1, max_length=80, description="the `reviewed` digest the desk showed"
    )
