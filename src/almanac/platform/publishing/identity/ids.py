"""Plug-in ids and who holds them: bound for good by a first upload or reservation."""

from __future__ import annotations

import logging
from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from almanac.platform.accounts.models import Account
from almanac.platform.contract.manifest import is_reserved_id
from almanac.platform.contract.rules import ID_PATTERN
from almanac.platform.errors import Conflict, Forbidden, Invalid
from almanac.platform.publishing.identity.domains import current_domain
from almanac.platform.publishing.identity.roles import require_manager, require_member
from almanac.platform.publishing.models import BindingKind, PluginIdBinding
from almanac.platform.store.models import Plugin

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class IdBinding:
    """Who holds an id: an organization, or the service itself (`organization_id` None)."""

    plugin_id: str
    organization_id: int | None
    kind: BindingKind
    bound_at: datetime
    retired_at: datetime | None

    @property
    def retired(self) -> bool:
        return self.retired_at is not None


def _binding(row: PluginIdBinding) -> IdBinding:
    return IdBinding(
        row.plugin_id, row.organization_id, BindingKind(row.kind), row.bound_at, row.retired_at
    )


def id_holder(db: Session, plugin_id: str) -> IdBinding | None:
    """Who holds the id: its binding, else the plug-in registered at the host (its publisher
    organization, or the service when it has none), else nobody."""
    row = db.get(PluginIdBinding, plugin_id)
    if row is not None:
        return _binding(row)
    plugin = db.get(Plugin, plugin_id)
    if plugin is not None:
        return IdBinding(
            plugin_id,
            plugin.publisher_organization_id,
            BindingKind.HOST,
            plugin.registered_at,
            None,
        )
    return None


def check_id_form(plugin_id: str) -> None:
    """The id rule (PLG-MANIFEST-ID) and the reserved words (PLG-ID-RESERVED, DECISIONS 1)."""
    if not ID_PATTERN.fullmatch(plugin_id):
        raise Invalid(
            f"id: {plugin_id[:60]!r} is not an id (2 to 48 lowercase letters, digits and "
            "hyphens, starting with a letter)",
            code="PLG-MANIFEST-ID",
        )
    if is_reserved_id(plugin_id):
        raise Invalid(
            f"id: {plugin_id!r} is reserved for Almanac's own addresses", code="PLG-ID-RESERVED"
        )


def _judge_holder(holder: IdBinding, organization_id: int) -> IdBinding:
    if holder.retired:
        raise Conflict(
            f"id: {holder.plugin_id!r} was retired and is never used again; choose another id",
            code="PLG-ID-RETIRED",
        )
    if holder.organization_id != organization_id:
        raise Conflict(
            f"id: another publisher has {holder.plugin_id!r}; choose another id",
            code="PLG-ID-TAKEN",
        )
    return holder


def bind_id(
    db: Session,
    organization_id: int,
    plugin_id: str,
    kind: BindingKind,
    by: str,
    now: datetime,
) -> IdBinding:
    """ "Versioning" 6 and "Upload": the first upload or reservation of an id binds it to the
    organization for good; binding it again for the same organization changes nothing.
    Refused: a malformed or reserved id, an id another organization or the service holds
    (PLG-ID-TAKEN), a retired id (PLG-ID-RETIRED)."""
    check_id_form(plugin_id)
    holder = id_holder(db, plugin_id)
    if holder is not None:
        return _judge_holder(holder, organization_id)
    row = PluginIdBinding(
        plugin_id=plugin_id, organization_id=organization_id, kind=kind, bound_by=by, bound_at=now
    )
    try:
        with db.begin_nested():
            db.add(row)
    except IntegrityError:
        # Bound by someone else at the same moment: judge that binding.
        held = id_holder(db, plugin_id)
        assert held is not None
        return _judge_holder(held, organization_id)
    log.info("plug-in id %s bound to organization %s (%s)", plugin_id, organization_id, kind)
    return _binding(row)


def reserve_id(
    db: Session, organization_id: int, actor: Account, plugin_id: str, now: datetime
) -> IdBinding:
    """ "Authentication" 3: an owner or admin of an organization with a verified domain
    reserves an id before uploading (DOMAIN-NOT-VERIFIED otherwise)."""
    require_manager(db, organization_id, actor, "reserve plug-in ids")
    domain = current_domain(db, organization_id)
    if domain is None or not domain.verified:
        raise Forbidden(
            "only an organization with a verified domain reserves ids; verify the domain first "
            "(an unverified organization's first upload binds the id)",
            code="DOMAIN-NOT-VERIFIED",
        )
    return bind_id(db, organization_id, plugin_id, BindingKind.RESERVATION, actor.email, now)


def bind_on_upload(
    db: Session, organization_id: int, plugin_id: str, by: str, now: datetime
) -> IdBinding:
    """The id of an uploaded version, bound to its organization on its first upload."""
    return bind_id(db, organization_id, plugin_id, BindingKind.UPLOAD, by, now)


def retire_id(db: Session, plugin_id: str, by: str, now: datetime) -> IdBinding:
    """Mark a held id retired ("Listing of a published plug-in", Retire): nobody uses it again.
    Retiring it again keeps the first moment."""
    row = db.get(PluginIdBinding, plugin_id)
    if row is None:
        holder = id_holder(db, plugin_id)
        if holder is None:
            raise Invalid(f"id: nobody holds {plugin_id!r}; there is nothing to retire")
        row = PluginIdBinding(
            plugin_id=plugin_id,
            organization_id=holder.organization_id,
            kind=holder.kind,
            bound_by=by,
            bound_at=holder.bound_at,
        )
        db.add(row)
    if row.retired_at is None:
        row.retired_at = now
    db.flush()
    log.info("plug-in id %s retired", plugin_id)
    return _binding(row)


def organization_ids(db: Session, organization_id: int, viewer: Account) -> list[IdBinding]:
    """The ids bound to the organization (uploads and reservations), for a member to see."""
    require_member(db, organization_id, viewer)
    rows = db.scalars(
        select(PluginIdBinding)
        .where(PluginIdBinding.organization_id == organization_id)
        .order_by(PluginIdBinding.bound_at, PluginIdBinding.plugin_id)
    )
    return [_binding(row) for row in rows]
