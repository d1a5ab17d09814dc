"""Readers' reports about a plug-in ("Other resources", Report): a category, a note and the day.
The publisher (an owner or admin of the publishing organization) and the service (operators
and reviewers) read every report, never who sent it."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date, datetime

from sqlalchemy import insert, select
from sqlalchemy.orm import Session

from almanac.platform.accounts.models import Account
from almanac.platform.accounts.organizations import MANAGERS, current_membership
from almanac.platform.accounts.staff import staff_roles
from almanac.platform.audience.models import ReportCategory
from almanac.platform.audience.tables import reports
from almanac.platform.audience.visibility import not_found, readable_plugin
from almanac.platform.errors import Forbidden, Invalid, NotFound
from almanac.platform.store.tables import plugins

NOTE_LENGTH = 2000


@dataclass(frozen=True, slots=True)
class ReportView:
    """A report as the publisher and the service read it: there is no sender field to leak."""

    id: int
    plugin_id: str
    category: str
    note: str
    day: date | None
    created_at: datetime


def file_report(
    db: Session,
    account: Account,
    plugin_id: str,
    *,
    category: str,
    note: str,
    day: date | None,
    now: datetime,
) -> ReportView:
    """A reader who may read the plug-in reports it (NOT-FOUND otherwise). The category is one
    of the six; the note is plain text of at most 2,000 characters."""
    readable_plugin(db, account, plugin_id)
    if category not in {c.value for c in ReportCategory}:
        allowed = ", ".join(c.value for c in ReportCategory)
        raise Invalid(f"category: {category!r} is not one of {allowed}")
    note = note.strip()
    if len(note) > NOTE_LENGTH:
        raise Invalid(f"note: {len(note)} characters; at most {NOTE_LENGTH}")
    report_id = db.execute(
        insert(reports)
        .values(
            plugin_id=plugin_id,
            account_id=account.id,
            category=category,
            note=note,
            day=day,
            created_at=now,
        )
        .returning(reports.c.id)
    ).scalar_one()
    return ReportView(report_id, plugin_id, category, note, day, now)


def may_read_reports(db: Session, account: Account, plugin_id: str) -> bool:
    """Staff (operator or reviewer) and the publisher's owners and admins read reports."""
    if staff_roles(db, account):
        return True
    publisher = db.scalar(
        select(plugins.c.publisher_organization_id).where(plugins.c.id == plugin_id)
    )
    if publisher is None:
        return False
    mine = current_membership(db, publisher, account.id)
    return mine is not None and mine.role in MANAGERS


def plugin_reports(db: Session, account: Account, plugin_id: str) -> list[ReportView]:
    """Every report about the plug-in, newest first, without the sender. A reader who is
    neither publisher nor staff is FORBIDDEN when the plug-in is readable to them, and told it
    does not exist otherwise (as an unknown id is)."""
    known = db.scalar(select(plugins.c.id).where(plugins.c.id == plugin_id))
    if known is None:
        raise not_found(plugin_id)
    if not may_read_reports(db, account, plugin_id):
        readable_plugin(db, account, plugin_id)
        raise Forbidden("only the publisher's owners and admins and the service read reports")
    rows = db.execute(
        select(
            reports.c.id,
            reports.c.plugin_id,
            reports.c.category,
            reports.c.note,
            reports.c.day,
            reports.c.created_at,
        )
        .where(reports.c.plugin_id == plugin_id)
        .order_by(reports.c.created_at.desc(), reports.c.id.desc())
    )
    return [ReportView(*row) for row in rows]


def publisher_reports(
    db: Session, organization_id: int, account: Account, plugin_id: str
) -> list[ReportView]:
    """The reports on a plug-in the organization publishes, for its owners and admins (the
    portal's view of `plugin_reports`); NOT-FOUND when the organization does not publish it."""
    publisher = db.scalar(
        select(plugins.c.publisher_organization_id).where(plugins.c.id == plugin_id)
    )
    if publisher is None or publisher != organization_id:
        raise NotFound(f"the organization publishes no plug-in {plugin_id!r}")
    return plugin_reports(db, account, plugin_id)
