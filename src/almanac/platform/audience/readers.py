"""The reader list of a private plug-in, set at the host ("Authentication" 1; "Limits": reader
set of a private plug-in, 500 people and 100 organizations). The list is replaced whole, and
every change is a move in the plug-in's history with who made it and when ("Every move is
recorded in history with who made it")."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import delete, insert, select
from sqlalchemy.orm import Session

from almanac.platform.accounts.identity import normalize_email
from almanac.platform.accounts.models import Organization
from almanac.platform.audience.tables import reader_list_organizations as organizations
from almanac.platform.audience.tables import reader_list_people as people
from almanac.platform.audience.visibility import not_found
from almanac.platform.errors import Conflict, Invalid
from almanac.platform.store.plugins import UnknownPlugin, lock_plugin
from almanac.platform.store.tables import moves, versions

MAX_PEOPLE = 500
MAX_ORGANIZATIONS = 100


@dataclass(frozen=True, slots=True)
class ReaderList:
    """The people (e-mail as written, by folded address) and organization ids of the list."""

    plugin_id: str
    emails: list[str]
    organization_ids: list[int]


def _is_private(db: Session, version_ids: Iterable[int | None]) -> bool:
    """A reader list belongs to a plug-in whose current or approved version is private: the
    host may prepare the list while the first private version awaits approval."""
    ids = [v for v in version_ids if v is not None]
    audiences = db.scalars(
        select(versions.c.manifest["audience"].as_string()).where(versions.c.id.in_(ids))
    )
    return "private" in set(audiences)


def _folded(emails: Sequence[str]) -> dict[str, str]:
    folded: dict[str, str] = {}
    for index, address in enumerate(emails):
        if not isinstance(address, str):
            raise Invalid(f"emails[{index}]: give an e-mail address")
        try:
            written, key = normalize_email(address)
        except Invalid as exc:
            raise Invalid(f"emails[{index}]: {exc.detail.removeprefix('email: ')}") from None
        folded.setdefault(key, written)
    return folded


def reader_list(db: Session, plugin_id: str) -> ReaderList:
    """The plug-in's reader list as it stands (people by address, organizations by id)."""
    emails = db.scalars(
        select(people.c.email).where(people.c.plugin_id == plugin_id).order_by(people.c.email_key)
    ).all()
    organization_ids = db.scalars(
        select(organizations.c.organization_id)
        .where(organizations.c.plugin_id == plugin_id)
        .order_by(organizations.c.organization_id)
    ).all()
    return ReaderList(plugin_id, list(emails), list(organization_ids))


def set_reader_list(
    db: Session,
    plugin_id: str,
    emails: Sequence[str],
    organization_ids: Sequence[int],
    *,
    by: str,
    now: datetime,
) -> ReaderList:
    """Replace the reader list of a private plug-in: at most 500 people (an address given twice,
    in any case, is one person) and 100 existing organizations. Refused with the field named:
    READER-LIST-TOO-LONG, REQUEST-INVALID (a malformed address, an unknown organization);
    AUDIENCE-NOT-PRIVATE for a plug-in that is not private; NOT-FOUND for an unknown id."""
    conn = db.connection()
    try:
        row = lock_plugin(conn, plugin_id)
    except UnknownPlugin:
        raise not_found(plugin_id) from None
    if not _is_private(db, (row["current_version_id"], row["approved_version_id"])):
        raise Conflict(
            f"plug-in {plugin_id} is not private: anyone signed in reads a public plug-in",
            code="AUDIENCE-NOT-PRIVATE",
        )
    folded = _folded(emails)
    if len(folded) > MAX_PEOPLE:
        raise Invalid(
            f"emails: {len(folded)} people listed; a private plug-in has at most {MAX_PEOPLE}",
            code="READER-LIST-TOO-LONG",
        )
    wanted = sorted(set(organization_ids))
    if len(wanted) > MAX_ORGANIZATIONS:
        raise Invalid(
            f"organizations: {len(wanted)} organizations listed; a private plug-in has at "
            f"most {MAX_ORGANIZATIONS}",
            code="READER-LIST-TOO-LONG",
        )
    known = set(db.scalars(select(Organization.id).where(Organization.id.in_(wanted))))
    unknown = [org for org in wanted if org not in known]
    if unknown:
        raise Invalid(f"organizations: no organization {unknown[0]}")

    before = reader_list(db, plugin_id)
    before_keys = {normalize_email(e)[1] for e in before.emails}
    conn.execute(delete(people).where(people.c.plugin_id == plugin_id))
    conn.execute(delete(organizations).where(organizations.c.plugin_id == plugin_id))
    if folded:
        conn.execute(
            insert(people),
            [{"plugin_id": plugin_id, "email_key": k, "email": e} for k, e in folded.items()],
        )
    if wanted:
        conn.execute(
            insert(organizations),
            [{"plugin_id": plugin_id, "organization_id": org} for org in wanted],
        )
    conn.execute(
        insert(moves).values(
            plugin_id=plugin_id,
            action="readers",
            by=by,
            at=now,
            detail={
                "people": len(folded),
                "people_added": sorted(set(folded) - before_keys),
                "people_removed": sorted(before_keys - set(folded)),
                "organizations": wanted,
            },
        )
    )
    return reader_list(db, plugin_id)
