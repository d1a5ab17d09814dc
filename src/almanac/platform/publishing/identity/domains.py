"""An organization's domain: naming, "Check now", its states and the periodic re-check."""

from __future__ import annotations

import logging
import secrets
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime, timedelta

from sqlalchemy import func, select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session, sessionmaker

from almanac.platform.accounts.models import Account, Organization
from almanac.platform.errors import Conflict, NotFound
from almanac.platform.limits import DOMAIN_CHECKS_PER_ORGANIZATION, count_attempt
from almanac.platform.mail import Mailer, MailMessage, send_all
from almanac.platform.publishing.identity.domain_names import claimable_domain
from almanac.platform.publishing.identity.proof import (
    DomainProver,
    ProofResult,
    proof_value,
    txt_name,
    well_known_url,
)
from almanac.platform.publishing.identity.roles import (
    manager_addresses,
    require_manager,
    require_member,
)
from almanac.platform.publishing.models import (
    CheckKind,
    DomainCheck,
    DomainClaim,
    DomainState,
    ProofWay,
)

log = logging.getLogger(__name__)

RECHECK_EVERY = timedelta(days=30)
"""A verified domain is proved again every 30 days ("Limits", Domain re-verification)."""
GRACE = timedelta(days=14)
"""A failed re-check leaves 14 days to restore the proof before the domain lapses."""
GRACE_RECHECK_EVERY = timedelta(days=1)
"""During the grace the proof is tried again each day, so a restored proof is seen."""
VERIFIED_MARK = frozenset({DomainState.VERIFIED, DomainState.GRACE})
"""The states in which the domain counts as verified (its grace included)."""


@dataclass(frozen=True, slots=True)
class CheckRecord:
    """One try of both ways, as kept."""

    at: datetime
    kind: CheckKind
    dns_proved: bool
    dns_detail: str
    file_proved: bool
    file_detail: str
    state_after: DomainState


@dataclass(frozen=True, slots=True)
class DomainStatus:
    """An organization's current domain, what proves it and where it stands."""

    organization_id: int
    domain: str
    state: DomainState
    token: str
    txt_name: str
    txt_value: str
    file_url: str
    named_at: datetime
    proved_by: ProofWay | None
    verified_at: datetime | None
    next_check_at: datetime | None
    grace_ends_at: datetime | None
    lapsed_at: datetime | None
    last_check: CheckRecord | None

    @property
    def verified(self) -> bool:
        """Whether the domain carries the verified mark (verified, or in its grace)."""
        return self.state in VERIFIED_MARK


@dataclass(frozen=True, slots=True)
class ClaimToCheck:
    """The claim a check is for, read before the look-ups (no transaction is held across them)."""

    claim_id: int
    organization_id: int
    domain: str
    token: str


@dataclass(frozen=True, slots=True)
class CheckOutcome:
    """What a check did: the status after it, and the mail to send once it is committed."""

    status: DomainStatus
    before: DomainState
    mail: tuple[MailMessage, ...] = ()


@dataclass(frozen=True, slots=True)
class RecheckSummary:
    """What one pass of the periodic re-check did, claim by claim."""

    checked: int = 0
    verified: int = 0
    grace_started: int = 0
    lapsed: int = 0
    failed: int = 0


def next_domain_state(
    state: DomainState,
    proved: bool,
    kind: CheckKind,
    grace_ends_at: datetime | None,
    now: datetime,
) -> DomainState:
    """ "States and transitions", Organization domain: a proof makes any state verified (the
    owner or admin proving it, or the proof restored during the grace). A failed periodic
    re-check of a verified domain starts the 14-day grace; a failed one once the grace has
    passed makes it lapsed. A failed "Check now" changes nothing: only the re-check every 30
    days (daily during the grace) takes the mark away."""
    if proved:
        return DomainState.VERIFIED
    if kind is CheckKind.MANUAL:
        return state
    if state is DomainState.VERIFIED:
        return DomainState.GRACE
    if state is DomainState.GRACE and grace_ends_at is not None and now >= grace_ends_at:
        return DomainState.LAPSED
    return state


def _current_claim(db: Session, organization_id: int) -> DomainClaim | None:
    return db.scalar(
        select(DomainClaim).where(
            DomainClaim.organization_id == organization_id, DomainClaim.ended_at.is_(None)
        )
    )


def _last_check(db: Session, claim_id: int) -> CheckRecord | None:
    row = db.scalar(
        select(DomainCheck)
        .where(DomainCheck.claim_id == claim_id)
        .order_by(DomainCheck.at.desc(), DomainCheck.id.desc())
        .limit(1)
    )
    if row is None:
        return None
    return CheckRecord(
        at=row.at,
        kind=CheckKind(row.kind),
        dns_proved=row.dns_proved,
        dns_detail=row.dns_detail,
        file_proved=row.file_proved,
        file_detail=row.file_detail,
        state_after=DomainState(row.state_after),
    )


def _status(db: Session, claim: DomainClaim) -> DomainStatus:
    return DomainStatus(
        organization_id=claim.organization_id,
        domain=claim.domain,
        state=DomainState(claim.state),
        token=claim.token,
        txt_name=txt_name(claim.domain),
        txt_value=proof_value(claim.token),
        file_url=well_known_url(claim.domain),
        named_at=claim.named_at,
        proved_by=ProofWay(claim.proved_by) if claim.proved_by else None,
        verified_at=claim.verified_at,
        next_check_at=claim.next_check_at,
        grace_ends_at=claim.grace_ends_at,
        lapsed_at=claim.lapsed_at,
        last_check=_last_check(db, claim.id),
    )


@dataclass(frozen=True, slots=True)
class PublisherDomain:
    """An organization's current domain as the store shows it: its name and whether it carries
    the verified mark (verified, or in its grace)."""

    domain: str
    verified: bool


def publisher_domains(db: Session, organization_ids: Iterable[int]) -> dict[int, PublisherDomain]:
    """The current domain of each of these organizations that named one, in one statement: the
    store lists thousands of plug-ins, and a statement per publisher grew its every read with
    them (issue 33)."""
    ids = sorted(set(organization_ids))
    if not ids:
        return {}
    rows = db.execute(
        select(DomainClaim.organization_id, DomainClaim.domain, DomainClaim.state).where(
            DomainClaim.organization_id.in_(ids), DomainClaim.ended_at.is_(None)
        )
    )
    return {
        org: PublisherDomain(domain, DomainState(state) in VERIFIED_MARK)
        for org, domain, state in rows
    }


def current_domain(db: Session, organization_id: int) -> DomainStatus | None:
    """The organization's current domain claim, or None when none was named."""
    claim = _current_claim(db, organization_id)
    return None if claim is None else _status(db, claim)


def domain_status(db: Session, organization_id: int, viewer: Account) -> DomainStatus:
    """The current domain for a member to see; NOT-FOUND when none was named."""
    require_member(db, organization_id, viewer)
    status = current_domain(db, organization_id)
    if status is None:
        raise NotFound("the organization has named no domain yet; an owner or admin names one")
    return status


def _verified_elsewhere(db: Session, domain: str, organization_id: int) -> bool:
    found = db.scalar(
        select(func.count())
        .select_from(DomainClaim)
        .where(
            DomainClaim.domain == domain,
            DomainClaim.organization_id != organization_id,
            DomainClaim.ended_at.is_(None),
            DomainClaim.state.in_([s.value for s in VERIFIED_MARK]),
        )
    )
    return bool(found)


def _taken(domain: str) -> Conflict:
    return Conflict(
        f"domain: {domain} is verified by another organization; a domain proves one publisher",
        code="DOMAIN-TAKEN",
    )


def name_domain(
    db: Session, organization_id: int, actor: Account, domain: str, now: datetime
) -> DomainStatus:
    """An owner or admin names the organization's domain ("Authentication" 2) and gets the
    token of its proof. Naming the current domain again changes nothing; naming another ends
    the current claim (and its verified mark) and starts an unverified one with a new token.
    Refused: the forms `claimable_domain` refuses, and a domain another organization has
    verified (DOMAIN-TAKEN)."""
    require_manager(db, organization_id, actor, "name the organization's domain")
    name = claimable_domain(domain)
    current = _current_claim(db, organization_id)
    if current is not None and current.domain == name:
        return _status(db, current)
    if _verified_elsewhere(db, name, organization_id):
        raise _taken(name)
    if current is not None:
        current.ended_at = now
        db.flush()
    claim = DomainClaim(
        organization_id=organization_id,
        domain=name,
        token=secrets.token_urlsafe(24),
        state=DomainState.UNVERIFIED,
        named_by=actor.id,
        named_at=now,
    )
    db.add(claim)
    organization = db.get(Organization, organization_id)
    assert organization is not None
    organization.domain = name
    db.flush()
    log.info("organization %s named a domain (claim %s)", organization_id, claim.id)
    return _status(db, claim)


def claim_to_check(db: Session, organization_id: int, actor: Account) -> ClaimToCheck:
    """The claim an owner or admin asks to check now; NOT-FOUND when no domain is named."""
    require_manager(db, organization_id, actor, "verify the organization's domain")
    claim = _current_claim(db, organization_id)
    if claim is None:
        raise NotFound("name the organization's domain before checking it")
    return ClaimToCheck(claim.id, organization_id, claim.domain, claim.token)


def _mail_for(
    db: Session, claim: DomainClaim, before: DomainState, after: DomainState
) -> tuple[MailMessage, ...]:
    """The e-mail a move sends to the owners and admins ("Events" 1: the grace is told by
    e-mail; the lapse is told too, since it takes the verified mark away)."""
    if before == after or after not in (DomainState.GRACE, DomainState.LAPSED):
        return ()
    organization = db.get(Organization, claim.organization_id)
    assert organization is not None
    value = proof_value(claim.token)
    if after is DomainState.GRACE:
        assert claim.grace_ends_at is not None
        subject = f"Almanac could not verify {claim.domain}: 14 days to restore the proof"
        body = (
            f"The periodic check of {claim.domain}, the domain of {organization.name}, found "
            f"no proof.\n\nRestore one of them before {claim.grace_ends_at:%Y-%m-%d %H:%M} "
            f"UTC:\n- a TXT record at {txt_name(claim.domain)} holding {value}\n"
            f"- a file at {well_known_url(claim.domain)} holding {value}\n\n"
            "Until then the domain stays verified and Almanac checks it each day. After that "
            "it lapses: published plug-ins keep running without the verified mark, and the "
            "domain must be verified again before the next submission.\n"
        )
    else:
        subject = f"The domain {claim.domain} has lapsed on Almanac"
        body = (
            f"{claim.domain}, the domain of {organization.name}, was not proved during its "
            "14 days of grace and has lapsed. Published plug-ins keep running without the "
            "verified mark. Verify the domain again in the portal (Check now) before the "
            f"next submission: a TXT record at {txt_name(claim.domain)} or a file at "
            f"{well_known_url(claim.domain)}, holding {value}.\n"
        )
    return tuple(
        MailMessage(to=address, subject=subject, body=body)
        for address in manager_addresses(db, claim.organization_id)
    )


def record_check(
    db: Session,
    claim: ClaimToCheck,
    result: ProofResult,
    kind: CheckKind,
    now: datetime,
    by: Account | None = None,
) -> CheckOutcome:
    """Keep a check of both ways and move the claim by `next_domain_state`. A proof of a
    domain another organization verified meanwhile is DOMAIN-TAKEN; a claim ended or given a
    new token meanwhile is left as it is (NOT-FOUND for a check by hand)."""
    row = db.get(DomainClaim, claim.claim_id, with_for_update=True, populate_existing=True)
    if row is None or row.ended_at is not None or row.token != claim.token:
        raise NotFound("the organization named another domain meanwhile; check it again")
    before = DomainState(row.state)
    proved_by = result.proved_by
    if proved_by is not None and _verified_elsewhere(db, row.domain, row.organization_id):
        raise _taken(row.domain)
    after = next_domain_state(before, proved_by is not None, kind, row.grace_ends_at, now)
    if proved_by is not None:
        row.proved_by = proved_by
        row.last_proved_at = now
        if before is not DomainState.VERIFIED:
            row.verified_at = now
        row.next_check_at = now + RECHECK_EVERY
        row.grace_started_at = row.grace_ends_at = row.lapsed_at = None
    elif after is DomainState.GRACE and before is DomainState.VERIFIED:
        row.grace_started_at = now
        row.grace_ends_at = now + GRACE
        row.next_check_at = now + GRACE_RECHECK_EVERY
    elif after is DomainState.GRACE and kind is CheckKind.PERIODIC:
        assert row.grace_ends_at is not None
        row.next_check_at = min(now + GRACE_RECHECK_EVERY, row.grace_ends_at)
    elif after is DomainState.LAPSED and before is not DomainState.LAPSED:
        row.lapsed_at = now
        row.next_check_at = None
        row.proved_by = None
    row.state = after
    db.add(
        DomainCheck(
            claim_id=row.id,
            at=now,
            kind=kind,
            by_account_id=by.id if by is not None else None,
            dns_proved=result.dns.proved,
            dns_detail=result.dns.detail,
            file_proved=result.file.proved,
            file_detail=result.file.detail,
            state_after=after,
        )
    )
    try:
        db.flush()
    except IntegrityError:
        # Another organization's proof of the same domain was kept at the same moment.
        raise _taken(row.domain) from None
    if before != after:
        log.info("domain claim %s: %s -> %s (%s)", row.id, before, after, kind)
    return CheckOutcome(_status(db, row), before, _mail_for(db, row, before, after))


def check_now(
    db: Session, organization_id: int, actor: Account, prover: DomainProver, now: datetime
) -> DomainStatus:
    """ "Check now": an owner or admin has both ways tried, and the one that proved the domain
    is recorded. At most 10 an hour per organization (`DOMAIN_CHECKS_PER_ORGANIZATION`;
    DOMAIN-CHECK-LIMITED past it, before any look-up). The request's transaction is committed
    before the look-ups, so none is held open while DNS and HTTPS answer; the caller commits
    the check."""
    claim = claim_to_check(db, organization_id, actor)
    count_attempt(db, [(DOMAIN_CHECKS_PER_ORGANIZATION, str(organization_id))], now)
    db.commit()
    result = prover.prove(claim.domain, claim.token, now)
    return record_check(db, claim, result, CheckKind.MANUAL, now, by=actor).status


def due_claims(db: Session, now: datetime) -> list[int]:
    """ "Limits", Domain re-verification: the claims whose periodic re-check is due, verified
    ones 30 days after their last proof, those in grace each day until the grace ends."""
    return list(
        db.scalars(
            select(DomainClaim.id)
            .where(
                DomainClaim.ended_at.is_(None),
                DomainClaim.state.in_([s.value for s in VERIFIED_MARK]),
                DomainClaim.next_check_at <= now,
            )
            .order_by(DomainClaim.next_check_at, DomainClaim.id)
        )
    )


def run_rechecks(
    sessions: sessionmaker[Session], prover: DomainProver, mailer: Mailer, now: datetime
) -> RecheckSummary:
    """One pass of the periodic re-check at `now`: each due claim is read, proved by both ways
    with no transaction open, and its check kept in a transaction of its own; the owners and
    admins are mailed once that is committed. A claim that fails is logged and left due."""
    with sessions() as db:
        due = due_claims(db, now)
    checked = verified = grace = lapsed = failed = 0
    for claim_id in due:
        try:
            with sessions() as db:
                row = db.get(DomainClaim, claim_id)
                if row is None or row.ended_at is not None:
                    continue
                claim = ClaimToCheck(row.id, row.organization_id, row.domain, row.token)
                db.commit()
                result = prover.prove(claim.domain, claim.token, now)
                outcome = record_check(db, claim, result, CheckKind.PERIODIC, now)
                db.commit()
        except Exception:
            log.exception("the re-check of domain claim %s failed", claim_id)
            failed += 1
            continue
        checked += 1
        after = outcome.status.state
        verified += after is DomainState.VERIFIED
        grace += after is DomainState.GRACE and outcome.before is DomainState.VERIFIED
        lapsed += after is DomainState.LAPSED and outcome.before is not DomainState.LAPSED
        send_all(mailer, outcome.mail, now)
    return RecheckSummary(checked, verified, grace, lapsed, failed)
