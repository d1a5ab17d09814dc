"""Review information, attestations, submit and withdraw ("Version in the portal"; "Review
information"). Every reason a submit is refused comes from `gate.submission_reasons`."""

from __future__ import annotations

import json
import logging
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from almanac.platform.accounts.models import Account
from almanac.platform.contract.manifest import parse_manifest
from almanac.platform.contract.pack import CodeRefused
from almanac.platform.contract.problems import Problem
from almanac.platform.contract.review import review_completeness, review_problems
from almanac.platform.errors import Conflict
from almanac.platform.publishing.identity.agreement import accepted_version
from almanac.platform.publishing.identity.roles import require_manager, require_member
from almanac.platform.publishing.models import (
    PREPARING,
    Attestation,
    PortalUpload,
    ReviewInformation,
    UploadAttestation,
    UploadState,
)
from almanac.platform.publishing.review.gate import is_update, submission_reasons
from almanac.platform.publishing.uploads.review_information import review_document
from almanac.platform.publishing.uploads.upload_states import move
from almanac.platform.publishing.uploads.uploads import (
    UploadView,
    rerun_checks,
    upload_row,
    upload_view,
)

log = logging.getLogger(__name__)

ATTESTATION_WORDS: dict[Attestation, str] = {
    Attestation.MAY_PUBLISH: "it may publish the data",
    Attestation.HOLDERS_OWN: "each source is its holder's own publication",
    Attestation.NO_PRIVATE_PERSON: "no record names a private person",
    Attestation.NO_NETWORK: "the fetcher never tries the network",
    Attestation.INFORMS: "its words inform without selling or persuading",
}
"""The five attestations in the words of "Review information"."""


class SubmitRefused(Conflict):
    """A submit refused: `reasons` (the `findings`) holds every condition not met, each with
    its code."""

    code = "SUBMIT-REFUSED"

    def __init__(self, upload_id: int, reasons: Sequence[Problem]) -> None:
        self.reasons = tuple(reasons)
        super().__init__(
            f"upload {upload_id} may not be submitted yet: {len(self.reasons)} "
            f"condition{'s' if len(self.reasons) != 1 else ''} not met",
            findings=self.reasons,
        )


@dataclass(frozen=True, slots=True)
class AttestationMade:
    attestation: Attestation
    words: str
    made_by: str
    agent_name: str | None
    made_at: datetime


@dataclass(frozen=True, slots=True)
class ReviewInformationView:
    """The review information of an upload: `source` is `sent` (sent separately), `upload`
    (its review.json) or None; `document` the parsed object (None when there is none or it is
    not JSON); `problems` why it is not complete for submitting (empty when it is)."""

    upload_id: int
    source: str | None
    document: Any
    sent_by: str | None
    sent_at: datetime | None
    problems: tuple[Problem, ...]


@dataclass(frozen=True, slots=True)
class Submitted:
    """The submitted upload, and the upload of the same plug-in it replaced in review."""

    upload: UploadView
    replaced: UploadView | None


def _manager_row(
    db: Session, organization_id: int, actor: Account, upload_id: int, what: str
) -> PortalUpload:
    require_manager(db, organization_id, actor, what)
    return upload_row(db, organization_id, upload_id)


def _open(row: PortalUpload, what: str) -> None:
    """STATE-CONFLICT unless the upload is still being prepared (checking, checked, or sent back
    with changes requested): a withdrawn one is gone, and the content of one in review or
    decided is what is or was reviewed."""
    if row.state == UploadState.WITHDRAWN:
        raise Conflict(
            f"upload {row.id} was withdrawn; {what} a live upload", code="STATE-CONFLICT"
        )
    if row.state == UploadState.IN_REVIEW:
        raise Conflict(
            f"upload {row.id} is in review; withdraw it first, or upload a newer version",
            code="STATE-CONFLICT",
        )
    if row.state not in PREPARING:
        raise Conflict(
            f"upload {row.id} is {row.state}; upload a newer version to change it",
            code="STATE-CONFLICT",
        )


def review_information(
    db: Session, organization_id: int, viewer: Account, upload_id: int
) -> ReviewInformationView:
    """The review information of an upload and why it is not complete (members)."""
    require_member(db, organization_id, viewer)
    row = upload_row(db, organization_id, upload_id)
    sent = db.get(ReviewInformation, row.id)
    raw = review_document(db, row)
    manifest = parse_manifest(row.manifest).manifest
    assert manifest is not None, "an upload's manifest passed at upload"
    try:
        document = None if raw is None else json.loads(raw)
    except (ValueError, UnicodeDecodeError):
        document = None
    return ReviewInformationView(
        upload_id=row.id,
        source="sent" if sent is not None else ("upload" if raw is not None else None),
        document=document,
        sent_by=None if sent is None else sent.sent_by,
        sent_at=None if sent is None else sent.sent_at,
        problems=tuple(review_completeness(raw, manifest, update=is_update(db, row.plugin_id))),
    )


def send_review_information(
    db: Session,
    organization_id: int,
    actor: Account,
    upload_id: int,
    document: Any,
    now: datetime,
) -> UploadView:
    """Owners and admins send review information for an upload: it takes the place of its
    review.json, and the upload's checks run again (its example days are checked in the
    locked room; PLG-QUOTA-CHECKING applies). A document of the wrong shape is refused
    (CodeRefused, PLG-REVIEW-INVALID), nothing kept. A withdrawn upload, one in review or
    one being checked is STATE-CONFLICT."""
    row = _manager_row(db, organization_id, actor, upload_id, "send review information")
    _open(row, "send review information for")
    if row.state == UploadState.CHECKING:
        raise Conflict(
            f"upload {row.id} is being checked; send review information once its checks end",
            code="STATE-CONFLICT",
        )
    manifest = parse_manifest(row.manifest).manifest
    assert manifest is not None, "an upload's manifest passed at upload"
    shape = review_problems(json.dumps(document, ensure_ascii=False).encode(), manifest)
    if shape:
        raise CodeRefused(shape)
    kept = db.get(ReviewInformation, row.id)
    if kept is None:
        db.add(
            ReviewInformation(upload_id=row.id, document=document, sent_by=actor.email, sent_at=now)
        )
    else:
        kept.document = document
        kept.sent_by = actor.email
        kept.sent_at = now
    db.flush()
    return rerun_checks(db, organization_id, actor, upload_id, now)


def _made(row: UploadAttestation) -> AttestationMade:
    found = Attestation(row.attestation)
    return AttestationMade(
        found, ATTESTATION_WORDS[found], row.made_by, row.agent_name, row.made_at
    )


def attestations(
    db: Session, organization_id: int, viewer: Account, upload_id: int
) -> list[AttestationMade]:
    """The attestations made for an upload's version, in the order of the five (members)."""
    require_member(db, organization_id, viewer)
    row = upload_row(db, organization_id, upload_id)
    return attestations_of(db, row.id)


def attestations_of(db: Session, upload_id: int) -> list[AttestationMade]:
    """The attestations made for an upload, in the order of the five."""
    rows = db.scalars(
        select(UploadAttestation).where(UploadAttestation.upload_id == upload_id)
    ).all()
    order = list(Attestation)
    return sorted((_made(r) for r in rows), key=lambda m: order.index(m.attestation))


def attest(
    db: Session,
    organization_id: int,
    actor: Account,
    upload_id: int,
    made: Sequence[Attestation],
    now: datetime,
    *,
    agent_name: str | None = None,
) -> list[AttestationMade]:
    """Owners and admins (or an agent, `agent_name`) make attestations in the organization's
    name for an upload's version; each is kept once with who and when (made again, the first
    stands). A withdrawn upload or one in review is STATE-CONFLICT. Answers all made so far."""
    row = _manager_row(db, organization_id, actor, upload_id, "make attestations")
    _open(row, "make attestations for")
    have = set(
        db.scalars(
            select(UploadAttestation.attestation).where(UploadAttestation.upload_id == row.id)
        )
    )
    for attestation in dict.fromkeys(made):
        if attestation.value in have:
            continue
        db.add(
            UploadAttestation(
                upload_id=row.id,
                organization_id=organization_id,
                attestation=attestation.value,
                made_by=actor.email,
                agent_name=agent_name,
                made_at=now,
            )
        )
    db.flush()
    return attestations_of(db, row.id)


def submit(
    db: Session,
    organization_id: int,
    actor: Account,
    upload_id: int,
    now: datetime,
    *,
    publish_on_approval: bool = False,
) -> Submitted:
    """Owners and admins submit an upload for review. Refused with every reason at once
    (SubmitRefused, from `submission_reasons`) until all hold. The plug-in's version in review,
    if any, is withdrawn in the same step and this one takes its place (never blocked by the
    5-in-review limit); an upload older than the one in review is STATE-CONFLICT, as are a
    withdrawn one and one in review. The submission is kept with who, when and the agreement
    version it is made under, and whether the version is published the moment it is approved
    (`publish_on_approval`)."""
    row = _manager_row(db, organization_id, actor, upload_id, "submit versions")
    _open(row, "submit")
    current = db.scalars(
        select(PortalUpload).where(
            PortalUpload.organization_id == organization_id,
            PortalUpload.plugin_id == row.plugin_id,
            PortalUpload.state == UploadState.IN_REVIEW,
        )
    ).first()
    if current is not None and current.id > row.id:
        raise Conflict(
            f"upload {current.id} of {row.plugin_id!r}, newer than upload {row.id}, is in "
            "review; only a newer upload replaces it",
            code="STATE-CONFLICT",
        )
    reasons = submission_reasons(db, row, now)
    if reasons:
        raise SubmitRefused(row.id, reasons)
    replaced = None
    if current is not None:
        move(current, UploadState.WITHDRAWN)
        current.withdrawn_by = actor.email
        current.withdrawn_at = now
        current.replaced_by = row.id
    move(row, UploadState.IN_REVIEW)
    row.submitted_by = actor.email
    row.submitted_at = now
    row.publish_on_approval = publish_on_approval
    row.agreement_version = accepted_version(db, organization_id)
    db.flush()
    if current is not None:
        replaced = upload_view(db, current)
        log.info("upload %s replaces upload %s in review", row.id, current.id)
    log.info("upload %s submitted by %s", row.id, actor.email)
    return Submitted(upload_view(db, row), replaced)
