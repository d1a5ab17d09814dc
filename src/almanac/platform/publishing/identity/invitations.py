"""Staff's answers to invitation requests, and which domains are invited."""

from __future__ import annotations

import logging
from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from almanac.platform.accounts.models import Account, InvitationRequest, InvitationStatus
from almanac.platform.errors import Conflict, NotFound
from almanac.platform.mail import Mailer, MailError, MailMessage
from almanac.platform.publishing.models import Decision, InvitationDecision

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class DecisionMade:
    """Staff's answer to a request, and the mail to send once it is committed (none for a
    decline)."""

    request_id: int
    domain: str
    decision: Decision
    decided_at: datetime
    mail: tuple[MailMessage, ...] = ()


def _open_request(db: Session, request_id: int) -> InvitationRequest:
    row = db.get(InvitationRequest, request_id, with_for_update=True, populate_existing=True)
    if row is None:
        raise NotFound(f"no invitation request {request_id}")
    if row.status != InvitationStatus.OPEN:
        raise Conflict(
            f"invitation request {request_id} is {row.status}, not open; only an open request "
            "is answered",
            code="INVITATION-NOT-OPEN",
        )
    return row


def _invitation_mail(row: InvitationRequest, base_url: str) -> MailMessage:
    portal = f"{base_url.rstrip('/')}/portal"
    return MailMessage(
        to=row.email,
        subject=f"You are invited to publish plug-ins on Almanac for {row.domain}",
        body=(
            f"Almanac has invited {row.domain} to publish plug-ins, as {row.organization} "
            "asked.\n\nThe invitation belongs to the domain. To submit a plug-in for review, "
            "go to the portal:\n\n"
            f"{portal}\n\n"
            "There:\n"
            "1. sign up and verify your e-mail address, and create your organization;\n"
            f"2. name {row.domain} as its domain and prove it (a DNS TXT record or a file, "
            "as the portal shows);\n"
            "3. accept the Developer Agreement in effect.\n"
        ),
    )


def invite(
    db: Session, request_id: int, staff: Account, now: datetime, base_url: str
) -> DecisionMade:
    """ "Endpoints", invitations: invite the domain of an open request (the invitation belongs
    to the domain); the requester is mailed, and only now (after the caller commits). Only an
    open request is answered (INVITATION-NOT-OPEN)."""
    row = _open_request(db, request_id)
    row.status = InvitationStatus.INVITED
    db.add(
        InvitationDecision(
            request_id=row.id,
            domain=row.domain,
            decision=Decision.INVITED,
            decided_by=staff.id,
            decided_at=now,
        )
    )
    db.flush()
    log.info("invitation request %s: the domain is invited by account %s", row.id, staff.id)
    return DecisionMade(
        row.id, row.domain, Decision.INVITED, now, (_invitation_mail(row, base_url),)
    )


def decline(db: Session, request_id: int, staff: Account, now: datetime) -> DecisionMade:
    """Decline an open request; nobody is mailed."""
    row = _open_request(db, request_id)
    row.status = InvitationStatus.DECLINED
    db.add(
        InvitationDecision(
            request_id=row.id,
            domain=row.domain,
            decision=Decision.DECLINED,
            decided_by=staff.id,
            decided_at=now,
        )
    )
    db.flush()
    log.info("invitation request %s declined by account %s", row.id, staff.id)
    return DecisionMade(row.id, row.domain, Decision.DECLINED, now)


def send_decision_mail(mailer: Mailer, made: DecisionMade, now: datetime) -> bool:
    """Hand over the mail a decision sends, once its transaction is committed; whether the
    requester was mailed (never, for a decline). A mail that cannot be handed over is logged:
    the decision stands."""
    mailed = bool(made.mail)
    for message in made.mail:
        try:
            mailer.send(message, now)
        except MailError as exc:
            mailed = False
            log.warning("invitation mail for request %s not sent: %s", made.request_id, exc)
    return mailed


def is_invited(db: Session, domain: str) -> bool:
    """ "Authentication" 3: whether an invitation exists for the domain."""
    found = db.scalar(
        select(func.count())
        .select_from(InvitationDecision)
        .where(
            InvitationDecision.domain == domain,
            InvitationDecision.decision == Decision.INVITED,
        )
    )
    return bool(found)
