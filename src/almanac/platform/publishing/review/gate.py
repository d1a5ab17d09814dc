"""The submission gate: may this organization submit now, and may this upload be submitted,
with every reason it may not (`submission_gate`, `submission_reasons`)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from almanac.platform.contract.manifest import parse_manifest
from almanac.platform.contract.problems import Problem
from almanac.platform.contract.review import review_completeness
from almanac.platform.publishing.identity.agreement import accepted_in_effect, version_in_effect
from almanac.platform.publishing.identity.domains import current_domain
from almanac.platform.publishing.identity.invitations import is_invited
from almanac.platform.publishing.models import (
    Attestation,
    CheckStatus,
    DomainState,
    PortalUpload,
    UploadAttestation,
    UploadCheck,
    UploadState,
)
from almanac.platform.publishing.uploads.review_information import review_document
from almanac.platform.store.tables import plugins

IN_REVIEW_AT_ONCE = 5
"""'Limits', Quotas: versions of an organization in review at once."""


@dataclass(frozen=True, slots=True)
class GateAnswer:
    """`reasons` holds one problem per condition not met, with its catalog code."""

    organization_id: int
    reasons: tuple[Problem, ...]

    @property
    def may_submit(self) -> bool:
        return not self.reasons


def submission_gate(db: Session, organization_id: int, now: datetime) -> GateAnswer:
    """ "Authentication" 3: an organization may submit when its domain is verified (its grace
    included; not unverified, not lapsed), an invitation exists for that domain, and it
    accepted the Developer Agreement version in effect at `now`. Each condition not met is a
    reason: DOMAIN-NOT-VERIFIED, DOMAIN-LAPSED, DOMAIN-NOT-INVITED, AGREEMENT-NOT-ACCEPTED.
    (Checks, review information and attestations belong to the version submitted.)"""
    reasons: list[Problem] = []
    domain = current_domain(db, organization_id)
    if domain is None:
        reasons.append(
            Problem("DOMAIN-NOT-VERIFIED", "the organization has named no domain", "domain")
        )
    elif domain.state is DomainState.LAPSED:
        reasons.append(
            Problem(
                "DOMAIN-LAPSED",
                f"{domain.domain} lapsed: its proof was not restored within the 14 days of grace",
                "domain",
            )
        )
    elif not domain.verified:
        reasons.append(
            Problem("DOMAIN-NOT-VERIFIED", f"{domain.domain} is not verified yet", "domain")
        )
    if domain is None or not is_invited(db, domain.domain):
        named = "the organization's domain" if domain is None else domain.domain
        reasons.append(
            Problem("DOMAIN-NOT-INVITED", f"no invitation exists for {named}", "invitation")
        )
    if not accepted_in_effect(db, organization_id, now):
        current = version_in_effect(db, now)
        message = (
            "no Developer Agreement version is in effect yet"
            if current is None
            else f"the Developer Agreement version {current.version} in effect since "
            f"{current.effective_on} is not accepted"
        )
        reasons.append(Problem("AGREEMENT-NOT-ACCEPTED", message, "agreement"))
    return GateAnswer(organization_id, tuple(reasons))


def is_update(db: Session, plugin_id: str) -> bool:
    """Whether a version of the plug-in was approved: its next version is an update."""
    approved = db.execute(
        select(plugins.c.approved_version_id).where(plugins.c.id == plugin_id)
    ).scalar()
    return approved is not None


def _checks_reason(db: Session, upload: PortalUpload) -> list[Problem]:
    rows = db.scalars(
        select(UploadCheck).where(UploadCheck.upload_id == upload.id).order_by(UploadCheck.id)
    ).all()
    failing = [f"{row.name} ({row.status})" for row in rows if row.status != CheckStatus.PASSED]
    if rows and not failing:
        return []
    named = ", ".join(failing) if failing else "no check was made"
    return [
        Problem(
            "SUBMIT-CHECKS-NOT-PASSED",
            f"every check of upload {upload.id} must have passed: {named}",
            "checks",
        )
    ]


def _attestation_reasons(db: Session, upload: PortalUpload) -> list[Problem]:
    made = set(
        db.scalars(
            select(UploadAttestation.attestation).where(UploadAttestation.upload_id == upload.id)
        )
    )
    return [
        Problem(
            "SUBMIT-ATTESTATION-MISSING",
            f"the attestation {a.value!r} is not made for upload {upload.id}",
            "attestations",
        )
        for a in Attestation
        if a.value not in made
    ]


def _review_room_reason(db: Session, upload: PortalUpload) -> list[Problem]:
    """5 versions in review at once; the plug-in's own version in review does not count (the
    submitted upload takes its place)."""
    in_review = db.scalar(
        select(func.count())
        .select_from(PortalUpload)
        .where(
            PortalUpload.organization_id == upload.organization_id,
            PortalUpload.state == UploadState.IN_REVIEW,
            PortalUpload.plugin_id != upload.plugin_id,
        )
    )
    if (in_review or 0) < IN_REVIEW_AT_ONCE:
        return []
    return [
        Problem(
            "PLG-QUOTA-REVIEW",
            f"{IN_REVIEW_AT_ONCE} versions of the organization are in review, the most at once",
            "review",
        )
    ]


def submission_reasons(db: Session, upload: PortalUpload, now: datetime) -> tuple[Problem, ...]:
    """ "Version in the portal", submit: every reason the upload may not be submitted at `now`,
    all at once: the organization's gate (`submission_gate`), every check passed
    (SUBMIT-CHECKS-NOT-PASSED), the review information complete (`review_completeness`:
    PLG-REVIEW-INVALID, PLG-REVIEW-INCOMPLETE), the five attestations made
    (SUBMIT-ATTESTATION-MISSING), fewer than 5 versions in review (PLG-QUOTA-REVIEW)."""
    manifest = parse_manifest(upload.manifest).manifest
    assert manifest is not None, "an upload's manifest passed at upload"
    return (
        *_checks_reason(db, upload),
        *review_completeness(
            review_document(db, upload), manifest, update=is_update(db, upload.plugin_id)
        ),
        *_attestation_reasons(db, upload),
        *submission_gate(db, upload.organization_id, now).reasons,
        *_review_room_reason(db, upload),
    )
