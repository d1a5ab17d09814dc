"""Whether a published plug-in is in the store, where readers find it and may newly install it
("Listing of a published plug-in"): one rule, beneath both publishing (its listings and the
storefront) and the audience (the `shown` preference a reader turns on)."""

from __future__ import annotations

from collections.abc import Iterable

from sqlalchemy import ColumnElement, Text, and_, cast, select
from sqlalchemy.orm import Session

from almanac.platform.store.models import StoreListing
from almanac.platform.store.tables import plugins


def in_store_clause() -> ColumnElement[bool]:
    """SQL of `ListingView.in_store` over `store_listings` joined to `plugins`. A plug-in
    published without listing.json ("optional; required to list in the store") is never in
    it: its listing is SQL NULL, or JSON null in rows written before that was so."""
    return and_(
        StoreListing.listed.is_(True),
        StoreListing.listing.is_not(None),
        cast(StoreListing.listing, Text) != "null",
        StoreListing.retired_at.is_(None),
        plugins.c.shelved.is_(False),
        plugins.c.taken_down.is_(False),
        plugins.c.retired.is_(False),
    )


def not_newly_installable(db: Session, plugin_ids: Iterable[str]) -> set[str]:
    """ "Listing of a published plug-in", Unpublish: of these ids, the plug-ins published
    through the portal that nobody new may install (unlisted, shelved, taken down, retired, or
    published without a listing). The service's own plug-ins are not in the set."""
    ids = list(plugin_ids)
    if not ids:
        return set()
    listed = select(StoreListing.plugin_id).join(plugins, plugins.c.id == StoreListing.plugin_id)
    published = set(
        db.scalars(select(StoreListing.plugin_id).where(StoreListing.plugin_id.in_(ids)))
    )
    installable = set(db.scalars(listed.where(StoreListing.plugin_id.in_(ids), in_store_clause())))
    return published - installable
