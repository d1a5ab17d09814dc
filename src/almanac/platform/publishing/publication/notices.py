"""What the portal tells an organization ("Events" 1): a notice kept for the portal and the same
words mailed to its owners and admins."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import select
from sqlalchemy.orm import Session

from almanac.platform.accounts.models import Account
from almanac.platform.mail import MailMessage
from almanac.platform.publishing.identity.roles import manager_addresses, require_member
from almanac.platform.publishing.models import PortalNotice

NOTICES_SHOWN = 100


@dataclass(frozen=True, slots=True)
class Notice:
    """One notice of the portal: what it is about, its words, and when."""

    id: int
    plugin_id: str
    upload_id: int | None
    kind: str
    subject: str
    body: str
    at: datetime


def tell_managers(
    db: Session,
    organization_id: int,
    *,
    plugin_id: str,
    upload_id: int | None,
    kind: str,
    subject: str,
    body: str,
    now: datetime,
) -> list[MailMessage]:
    """Keep a notice for the organization's portal; answers the mail for each present owner and
    admin, to send once the transaction is committed."""
    db.add(
        PortalNotice(
            organization_id=organization_id,
            plugin_id=plugin_id,
            upload_id=upload_id,
            kind=kind,
            subject=subject,
            body=body,
            at=now,
        )
    )
    db.flush()
    return [
        MailMessage(to=address, subject=subject, body=body)
        for address in manager_addresses(db, organization_id)
    ]


def organization_notices(db: Session, organization_id: int, viewer: Account) -> list[Notice]:
    """The organization's newest notices first, for its members."""
    require_member(db, organization_id, viewer)
    rows = db.scalars(
        select(PortalNotice)
        .where(PortalNotice.organization_id == organization_id)
        .order_by(PortalNotice.at.desc(), PortalNotice.id.desc())
        .limit(NOTICES_SHOWN)
    )
    return [Notice(r.id, r.plugin_id, r.upload_id, r.kind, r.subject, r.body, r.at) for r in rows]
