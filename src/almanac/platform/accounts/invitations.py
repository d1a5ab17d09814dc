"""Requests to be invited to publish ("Endpoints", POST /api/developers/invitations; "Limits").

No credentials; one request per domain is open at a time; at most 5 requests a day per address;
nothing is mailed until someone is invited. The caller answers the same way whether or not the
domain is known or already asked for, so the answer tells nothing about other publishers.
"""

from __future__ import annotations

import ipaddress
import logging
import re
from datetime import datetime

from sqlalchemy import select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from almanac.platform.accounts.identity import normalize_email
from almanac.platform.accounts.models import InvitationRequest, InvitationStatus
from almanac.platform.errors import Invalid
from almanac.platform.limits import INVITATION_REQUESTS_PER_EMAIL, count_attempt

log = logging.getLogger(__name__)

MAX_NOTE = 2000
MAX_ORGANIZATION = 200
_LABEL = re.compile(r"^(?!-)[a-z0-9-]{1,63}(?<!-)$")


def normalize_domain(domain: str) -> str:
    """The domain in lower-case ASCII (IDNA) without a final dot; refuses an IP address, a
    name with no dot and anything that is not a host name."""
    name = domain.strip().lower().rstrip(".")
    try:
        ipaddress.ip_address(name.strip("[]"))
    except ValueError:
        pass
    else:
        raise Invalid("domain: give a domain name, not an IP address")
    try:
        name = name.encode("idna").decode("ascii")
    except UnicodeError:
        raise Invalid("domain: not a valid domain name") from None
    labels = name.split(".")
    if len(labels) < 2 or len(name) > 253 or not all(_LABEL.match(label) for label in labels):
        raise Invalid("domain: give a domain name with a dot, such as example.org")
    if labels[-1].isdigit():
        raise Invalid("domain: the last label of a domain name is not a number")
    return name


def request_invitation(
    db: Session, *, email: str, organization: str, domain: str, note: str, now: datetime
) -> InvitationRequest:
    """Record an invitation request. A sixth request from the address within 24 hours is
    refused (`INVITATION_REQUESTS_PER_EMAIL`: RATE-LIMITED, with the wait); while the domain
    has an open request the new one is kept as a repeat."""
    address, key = normalize_email(email)
    organization = organization.strip()
    note = note.strip()
    if not 1 <= len(organization) <= MAX_ORGANIZATION:
        raise Invalid(f"organization: give 1 to {MAX_ORGANIZATION} characters")
    if len(note) > MAX_NOTE:
        raise Invalid(f"note: at most {MAX_NOTE} characters")
    host = normalize_domain(domain)
    count_attempt(db, [(INVITATION_REQUESTS_PER_EMAIL, key)], now)
    row = InvitationRequest(
        email=address,
        email_key=key,
        organization=organization,
        domain=host,
        note=note,
        status=InvitationStatus.OPEN,
        created_at=now,
    )
    open_one = db.scalar(
        select(InvitationRequest.id).where(
            InvitationRequest.domain == host, InvitationRequest.status == InvitationStatus.OPEN
        )
    )
    if open_one is not None:
        row.status = InvitationStatus.REPEAT
        db.add(row)
        db.flush()
        return row
    try:
        with db.begin_nested():
            db.add(row)
    except IntegrityError:
        # Another request for the domain was opened at the same moment.
        row = InvitationRequest(
            email=address,
            email_key=key,
            organization=organization,
            domain=host,
            note=note,
            status=InvitationStatus.REPEAT,
            created_at=now,
        )
        db.add(row)
        db.flush()
    log.info("invitation request %s for a domain (%s)", row.id, row.status)
    return row


def open_requests(db: Session) -> list[InvitationRequest]:
    """The open requests, oldest first (what the operators answer)."""
    return list(
        db.scalars(
            select(InvitationRequest)
            .where(InvitationRequest.status == InvitationStatus.OPEN)
            .order_by(InvitationRequest.created_at, InvitationRequest.id)
        )
    )
