"""The Developer Agreement's versions and organizations' acceptances ("Versioning" 10)."""

from __future__ import annotations

import logging
from dataclasses import dataclass
from datetime import UTC, date, datetime
from importlib import resources

from sqlalchemy import select
from sqlalchemy.orm import Session

from almanac.platform.accounts.models import Account
from almanac.platform.errors import Conflict, Invalid, NotFound
from almanac.platform.publishing.identity.roles import require_manager, require_member
from almanac.platform.publishing.models import AgreementAcceptance, PostedAgreementVersion

log = logging.getLogger(__name__)

FIRST_EFFECTIVE_ON = date(2026, 10, 1)
"""Version 1 is in effect from 1 October 2026 ("Versioning" 10)."""
MAX_TEXT = 200_000
MAX_CHANGES = 2_000


@dataclass(frozen=True, slots=True)
class AgreementVersion:
    version: int
    effective_on: date
    changes: str
    text: str
    posted_at: datetime | None
    """None for version 1, which ships with the service."""


@dataclass(frozen=True, slots=True)
class Acceptance:
    organization_id: int
    version: int
    accepted_by: int
    accepted_by_email: str
    accepted_at: datetime


def first_version() -> AgreementVersion:
    """Version 1, whose text is in the repository (`texts/agreement-v1.md`)."""
    text = (
        resources.files(__package__)
        .joinpath("texts", "agreement-v1.md")
        .read_text(encoding="utf-8")
    )
    return AgreementVersion(
        version=1,
        effective_on=FIRST_EFFECTIVE_ON,
        changes="The first version.",
        text=text,
        posted_at=None,
    )


def today_of(now: datetime) -> date:
    """The day an agreement version's effective date is compared with: the UTC date."""
    return now.astimezone(UTC).date()


def _posted(row: PostedAgreementVersion) -> AgreementVersion:
    return AgreementVersion(row.version, row.effective_on, row.changes, row.text, row.posted_at)


def agreement_versions(db: Session) -> list[AgreementVersion]:
    """Every version, oldest first."""
    rows = db.scalars(select(PostedAgreementVersion).order_by(PostedAgreementVersion.version))
    return [first_version(), *(_posted(row) for row in rows)]


def agreement_version(db: Session, version: int) -> AgreementVersion:
    """One version; NOT-FOUND for a number never posted."""
    if version == 1:
        return first_version()
    row = db.get(PostedAgreementVersion, version)
    if row is None:
        raise NotFound(f"no Developer Agreement version {version}")
    return _posted(row)


def version_in_effect(db: Session, now: datetime) -> AgreementVersion | None:
    """ "Versioning" 10: the version in effect at `now` is the newest whose effective date has
    come (None before 1 October 2026)."""
    today = today_of(now)
    current = [v for v in agreement_versions(db) if v.effective_on <= today]
    return current[-1] if current else None


def post_version(
    db: Session, staff: Account, text: str, effective_on: date, changes: str, now: datetime
) -> AgreementVersion:
    """Staff post the next version with its effective date and a note of changes. The date is
    today or later, and after the newest version's (AGREEMENT-EFFECTIVE-DATE)."""
    text = text.strip()
    changes = changes.strip()
    if not 1 <= len(text) <= MAX_TEXT:
        raise Invalid(f"text: give the agreement's text, 1 to {MAX_TEXT} characters")
    if not 1 <= len(changes) <= MAX_CHANGES:
        raise Invalid(f"changes: say what changed, 1 to {MAX_CHANGES} characters")
    newest = agreement_versions(db)[-1]
    if effective_on <= newest.effective_on or effective_on < today_of(now):
        raise Invalid(
            f"effective_on: {effective_on} must be today ({today_of(now)}) or later, and after "
            f"{newest.effective_on}, when version {newest.version} takes effect",
            code="AGREEMENT-EFFECTIVE-DATE",
        )
    row = PostedAgreementVersion(
        version=newest.version + 1,
        effective_on=effective_on,
        changes=changes,
        text=text,
        posted_by=staff.id,
        posted_at=now,
    )
    db.add(row)
    db.flush()
    log.info("agreement version %s posted by account %s", row.version, staff.id)
    return _posted(row)


def _acceptance(row: AgreementAcceptance, db: Session) -> Acceptance:
    account = db.get(Account, row.accepted_by)
    assert account is not None
    return Acceptance(
        row.organization_id, row.version, row.accepted_by, account.email, row.accepted_at
    )


def accept(
    db: Session, organization_id: int, actor: Account, version: int, now: datetime
) -> Acceptance:
    """An owner or admin accepts the version in effect for the organization; who, when and
    which version are kept. Accepting it again keeps the first acceptance. Another version, or
    any before one is in effect, is AGREEMENT-NOT-IN-EFFECT."""
    require_manager(db, organization_id, actor, "accept the Developer Agreement")
    current = version_in_effect(db, now)
    if current is None:
        raise Conflict(
            f"no Developer Agreement version is in effect yet; version 1 takes effect on "
            f"{FIRST_EFFECTIVE_ON}",
            code="AGREEMENT-NOT-IN-EFFECT",
        )
    if version != current.version:
        raise Conflict(
            f"version {version} is not the version in effect; accept version "
            f"{current.version}, in effect since {current.effective_on}",
            code="AGREEMENT-NOT-IN-EFFECT",
        )
    held = db.scalar(
        select(AgreementAcceptance).where(
            AgreementAcceptance.organization_id == organization_id,
            AgreementAcceptance.version == version,
        )
    )
    if held is None:
        held = AgreementAcceptance(
            organization_id=organization_id, version=version, accepted_by=actor.id, accepted_at=now
        )
        db.add(held)
        db.flush()
        log.info("organization %s accepted agreement version %s", organization_id, version)
    return _acceptance(held, db)


def acceptances(db: Session, organization_id: int) -> list[Acceptance]:
    """The organization's acceptances, oldest version first."""
    rows = db.scalars(
        select(AgreementAcceptance)
        .where(AgreementAcceptance.organization_id == organization_id)
        .order_by(AgreementAcceptance.version)
    )
    return [_acceptance(row, db) for row in rows]


def organization_acceptances(
    db: Session, organization_id: int, viewer: Account
) -> list[Acceptance]:
    """The acceptances for a member to see."""
    require_member(db, organization_id, viewer)
    return acceptances(db, organization_id)


def accepted_in_effect(db: Session, organization_id: int, now: datetime) -> bool:
    """ "Authentication" 3: whether the organization accepted the version in effect at `now`
    (a newer version in effect asks for acceptance again before the next submission)."""
    current = version_in_effect(db, now)
    if current is None:
        return False
    return any(a.version == current.version for a in acceptances(db, organization_id))


def accepted_version(db: Session, organization_id: int) -> int | None:
    """The newest version the organization accepted: what a submission is made under, and what
    its published version keeps running under when a newer version is posted."""
    versions = [a.version for a in acceptances(db, organization_id)]
    return max(versions) if versions else None
