"""Which plug-ins an account may read ("Authentication" 1, audience table; "Other error
behaviour" 5): public ones to anyone signed in; private ones to the listed people (by verified
account e-mail) and the active members of the listed organizations; `local` never.

A plug-in reaches readers once a version of it was approved and until it is Removed ("plug-in
leaves the app"); the approved version's manifest decides its audience and how it is drawn,
since a version awaiting approval is not what readers see. Every other plug-in is answered as
not existing, exactly like an unknown id.
"""

from __future__ import annotations

import functools
import json
import threading
from collections import OrderedDict
from collections.abc import Collection, Mapping
from dataclasses import dataclass
from typing import Any, Literal

from sqlalchemy import (
    BindParameter,
    ColumnElement,
    Integer,
    Select,
    String,
    Subquery,
    and_,
    bindparam,
    exists,
    false,
    or_,
    select,
)
from sqlalchemy.orm import Session

from almanac.platform.accounts.models import Account
from almanac.platform.accounts.organizations import in_audience_as_member
from almanac.platform.accounts.tables import memberships
from almanac.platform.audience.tables import reader_list_organizations as listed_organizations
from almanac.platform.audience.tables import reader_list_people as listed_people
from almanac.platform.contract.manifest import Manifest, Names, parse_manifest
from almanac.platform.contract.names import pick_name
from almanac.platform.errors import NotFound
from almanac.platform.lifecycle import State
from almanac.platform.store.tables import plugins, versions

READER_STATUS: dict[str, str] = {
    State.APPROVED: "running",
    State.FAILING: "failing",
    State.PAUSED: "paused",
    State.PENDING: "pending",
}
"""Reader presentation rule 9 by approval state. Failing is the state exactly when the last run
failed after the last success (a backfill run changes no state, DECISIONS 8); Pending here is
always a new version awaiting approval, since a plug-in never approved is not readable."""


@dataclass(frozen=True, slots=True)
class ReadablePlugin:
    """A plug-in as a reader may see it: its approved manifest and its status for rule 9."""

    id: str
    state: str
    audience: str
    version_id: int
    manifest_doc: Mapping[str, Any]
    taken_down: bool
    takedown_message: str | None
    records_stamp: str | None = None
    """Changes with every write of the plug-in's records (`store.plugins.mark_records_changed`);
    None: never stamped, so nothing drawn from its records may be kept."""

    @property
    def status(self) -> str:
        return READER_STATUS[self.state]

    @property
    def manifest(self) -> Manifest:
        return checked_manifest(self.manifest_doc)

    @property
    def names(self) -> Names:
        """The approved manifest's names, read from the stored manifest without checking it
        whole again: lists name every plug-in a reader may read, and a check costs far more."""
        names: Names = self.manifest_doc.get("name") or {}
        return names

    def display_name(self, language: str | None = None) -> str:
        """The name a reader sees, picked as `Manifest.display_name` picks it (rule 2)."""
        name = pick_name(self.names, language)
        return self.id if name is None else name


def not_found(plugin_id: str) -> NotFound:
    """The one answer for an unknown id and for a plug-in the account may not read."""
    return NotFound(f"no plug-in {plugin_id}")


# The readable query is built once per kind of reader and run with the account bound: building
# it (and its cache key) anew took longer than running it.
_ACCOUNT_ID = bindparam("reader_account_id", type_=Integer)
_EMAIL_KEY = bindparam("reader_email_key", type_=String)
_PLUGIN_ID = bindparam("readable_plugin_id", type_=String)
_AMONG: BindParameter[list[str]] = bindparam("readable_among", expanding=True)
_ORGANIZATION_ID = bindparam("reader_organization_id", type_=Integer)
Reader = Literal["verified", "unverified", "anyone", "organization"]


def _listed(reader: Reader) -> ColumnElement[bool]:
    """The account is on the plug-in's reader list: by its verified e-mail (an unverified
    address proves nothing), or as an active member (never a guest or former member) of a
    listed organization."""
    if reader == "anyone":
        return false()
    if reader == "organization":
        return exists().where(
            listed_organizations.c.plugin_id == plugins.c.id,
            listed_organizations.c.organization_id == _ORGANIZATION_ID,
        )
    person: ColumnElement[bool] = false()
    if reader == "verified":
        person = exists().where(
            listed_people.c.plugin_id == plugins.c.id,
            listed_people.c.email_key == _EMAIL_KEY,
        )
    organization = exists().where(
        listed_organizations.c.plugin_id == plugins.c.id,
        memberships.c.organization_id == listed_organizations.c.organization_id,
        in_audience_as_member(_ACCOUNT_ID),
    )
    return or_(person, organization)


@functools.cache
def _readable_query(reader: Reader, one: bool = False, among: bool = False) -> Select[Any]:
    """The readable plug-ins of a `reader` (bound by `_bound`), by id; "anyone": the public
    ones alone. `one`: only the plug-in bound as `readable_plugin_id`; `among`: only those
    bound as `readable_among`."""
    # The column alone (migration 0017 filled it for every version stored before it): a
    # COALESCE with the manifest's field hid the column's statistics from PostgreSQL's
    # planner, which then took the public plug-ins for 0.5% of them and joined the store's
    # listings to them one by one (a search of 10,000 listings: 180 ms; 23 ms after).
    audience = versions.c.audience
    query = (
        select(
            plugins.c.id,
            plugins.c.state,
            plugins.c.taken_down,
            plugins.c.takedown_message,
            plugins.c.records_stamp,
            versions.c.id.label("version_id"),
            versions.c.manifest,
            audience.label("audience"),
        )
        .join(versions, versions.c.id == plugins.c.approved_version_id)
        .where(
            plugins.c.ever_approved.is_(True),
            plugins.c.state != str(State.REMOVED),
            or_(audience == "public", and_(audience == "private", _listed(reader))),
        )
        .order_by(plugins.c.id)
    )
    if among:
        query = query.where(plugins.c.id.in_(_AMONG))
    return query.where(plugins.c.id == _PLUGIN_ID) if one else query


def _bound(account: Account) -> tuple[Reader, dict[str, Any]]:
    """The kind of reader the account is and its values for `_readable_query`."""
    reader: Reader = "verified" if account.verified else "unverified"
    return reader, {_ACCOUNT_ID.key: account.id, _EMAIL_KEY.key: account.email_key}


def _readable(row: Any) -> ReadablePlugin:
    return ReadablePlugin(
        id=row.id,
        state=row.state,
        audience=row.audience,
        version_id=row.version_id,
        manifest_doc=row.manifest,
        taken_down=bool(row.taken_down),
        takedown_message=row.takedown_message,
        records_stamp=row.records_stamp,
    )


def visible_plugins(
    db: Session, account: Account, among: Collection[str] | None = None
) -> list[ReadablePlugin]:
    """Every plug-in the account may read, by id; of `among` alone when given (a store of
    thousands of public plug-ins makes "every" thousands of manifests)."""
    reader, values = _bound(account)
    if among is None:
        return [_readable(row) for row in db.execute(_readable_query(reader), values)]
    if not among:
        return []
    values[_AMONG.key] = sorted(among)
    return [_readable(row) for row in db.execute(_readable_query(reader, among=True), values)]


def organization_plugins(
    db: Session, organization_id: int, among: Collection[str] | None = None
) -> list[ReadablePlugin]:
    """The plug-ins an organization may see, by id (of `among` alone when given): the public
    ones and the private ones listing it (what every member in its audience may read; issue
    38's organization endpoints)."""
    values: dict[str, Any] = {_ORGANIZATION_ID.key: organization_id}
    if among is None:
        return [_readable(row) for row in db.execute(_readable_query("organization"), values)]
    if not among:
        return []
    values[_AMONG.key] = sorted(among)
    query = _readable_query("organization", among=True)
    return [_readable(row) for row in db.execute(query, values)]


def readable_plugin(db: Session, account: Account, plugin_id: str) -> ReadablePlugin:
    """The plug-in when the account may read it; NOT-FOUND otherwise, the same answer as for
    an id nobody has."""
    reader, values = _bound(account)
    values[_PLUGIN_ID.key] = plugin_id
    row = db.execute(_readable_query(reader, one=True), values).first()
    if row is None:
        raise not_found(plugin_id)
    return _readable(row)


def readable_by_anyone() -> Subquery:
    """The plug-ins anyone may read (public, approved, not removed), as a subquery with the
    columns of `_readable_query` (`id`, `version_id`, `manifest`, ...): for a statement that
    joins them, such as the store's, which lists public plug-ins alone."""
    return _readable_query("anyone").order_by(None).subquery("readable")


def public_plugin(db: Session, plugin_id: str) -> ReadablePlugin:
    """The plug-in when anyone may read it: public, approved, not removed and not taken down
    (a public calendar feed shows no notice). NOT-FOUND otherwise, the one answer for a
    private, local, taken-down or unknown id."""
    row = db.execute(_readable_query("anyone", one=True), {_PLUGIN_ID.key: plugin_id}).first()
    if row is None or row.taken_down:
        raise not_found(plugin_id)
    return _readable(row)


_MANIFESTS: OrderedDict[str, Manifest] = OrderedDict()
_MANIFESTS_KEPT = 256
_MANIFESTS_LOCK = threading.Lock()


def checked_manifest(doc: Mapping[str, Any]) -> Manifest:
    """The typed manifest of a stored version. Checking a manifest costs far more than a read
    of the days, and a version's manifest never changes, so parsed ones are kept by their
    text (key order included: rule 2's "first listed" name depends on it)."""
    key = json.dumps(doc, ensure_ascii=False)
    with _MANIFESTS_LOCK:
        manifest = _MANIFESTS.get(key)
        if manifest is not None:
            _MANIFESTS.move_to_end(key)
            return manifest
    result = parse_manifest(doc)
    if result.manifest is None:
        raise ValueError(f"stored manifest of {doc.get('id')!r} does not pass the contract")
    with _MANIFESTS_LOCK:
        _MANIFESTS[key] = result.manifest
        if len(_MANIFESTS) > _MANIFESTS_KEPT:
            _MANIFESTS.popitem(last=False)
    return result.manifest
