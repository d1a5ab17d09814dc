"""The listing of a plug-in published through the portal ("Listing of a published plug-in"):
its state and the publisher's moves (unpublish, list again, retire), each kept in the plug-in's
history with who made it. Who may newly install it is `store/installable.py`."""

from __future__ import annotations

import logging
from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import select
from sqlalchemy.orm import Session

from almanac.platform.accounts.models import Account
from almanac.platform.errors import Conflict, Invalid, NotFound
from almanac.platform.mail import MailMessage
from almanac.platform.publishing.identity.ids import retire_id
from almanac.platform.publishing.identity.roles import require_manager, require_member, who
from almanac.platform.publishing.models import PortalUpload, RolloutState, UploadState
from almanac.platform.publishing.publication.notices import tell_managers
from almanac.platform.publishing.publication.rollout_states import end_under_way
from almanac.platform.publishing.uploads.upload_states import move
from almanac.platform.store import moves
from almanac.platform.store.history import RecordedMove, log_move, plugin_moves
from almanac.platform.store.models import StoreListing
from almanac.platform.store.tables import plugins

log = logging.getLogger(__name__)

LISTING_MOVES = frozenset(
    {"publish", "unpublish", "relist", "retire", "shelve", "unshelve", "takedown", "restore"}
    | {f"rollout-{state.value.replace('_', '-')}" for state in RolloutState}
)
"""The moves of a plug-in's history that act on its listing."""

_LIVE_UPLOADS = (
    UploadState.CHECKING,
    UploadState.CHECKED,
    UploadState.IN_REVIEW,
    UploadState.APPROVED,
    UploadState.CHANGES_REQUESTED,
)


@dataclass(frozen=True, slots=True)
class ListingView:
    """A published plug-in's listing: whether its publisher lists it, and the service's shelf
    and takedown acting on it. `in_store` says readers find it and may newly install it."""

    plugin_id: str
    organization_id: int
    upload_id: int
    version: str
    listed: bool
    shelved: bool
    taken_down: bool
    retired: bool
    has_listing: bool
    published_at: datetime
    retired_at: datetime | None
    takedown_message: str | None

    @property
    def in_store(self) -> bool:
        return (
            self.listed
            and self.has_listing
            and not (self.shelved or self.taken_down or self.retired)
        )

    @property
    def state(self) -> str:
        """One word for the listing: retired, taken-down, shelved, unlisted or listed."""
        if self.retired:
            return "retired"
        if self.taken_down:
            return "taken-down"
        if self.shelved:
            return "shelved"
        return "listed" if self.listed else "unlisted"


def listing_view(db: Session, listing: StoreListing) -> ListingView:
    flags = db.execute(
        select(plugins.c.shelved, plugins.c.taken_down, plugins.c.takedown_message).where(
            plugins.c.id == listing.plugin_id
        )
    ).one()
    upload = db.get(PortalUpload, listing.upload_id)
    assert upload is not None
    return ListingView(
        plugin_id=listing.plugin_id,
        organization_id=listing.organization_id,
        upload_id=listing.upload_id,
        version=upload.version,
        listed=listing.listed,
        shelved=bool(flags.shelved),
        taken_down=bool(flags.taken_down),
        retired=listing.retired_at is not None,
        has_listing=listing.listing is not None,
        published_at=listing.published_at,
        retired_at=listing.retired_at,
        takedown_message=flags.takedown_message if flags.taken_down else None,
    )


def store_listing(db: Session, plugin_id: str) -> ListingView | None:
    """The plug-in's listing when it was published through the portal; None for a plug-in
    registered at the host only, which the store never shows (so no shelf acts on it)."""
    listing = db.get(StoreListing, plugin_id)
    return None if listing is None else listing_view(db, listing)


def _listing(db: Session, organization_id: int, plugin_id: str) -> StoreListing:
    listing = db.get(StoreListing, plugin_id)
    if listing is None or listing.organization_id != organization_id:
        raise NotFound(f"the organization has published no plug-in {plugin_id!r}")
    return listing


def organization_listings(db: Session, organization_id: int, viewer: Account) -> list[ListingView]:
    """The organization's published plug-ins and their listings, by id (members)."""
    require_member(db, organization_id, viewer)
    rows = db.scalars(
        select(StoreListing)
        .where(StoreListing.organization_id == organization_id)
        .order_by(StoreListing.plugin_id)
    )
    return [listing_view(db, row) for row in rows]


def show_listing(db: Session, organization_id: int, viewer: Account, plugin_id: str) -> ListingView:
    """One published plug-in's listing (members; NOT-FOUND for another organization's)."""
    require_member(db, organization_id, viewer)
    return listing_view(db, _listing(db, organization_id, plugin_id))


def unpublish(
    db: Session,
    organization_id: int,
    actor: Account,
    plugin_id: str,
    now: datetime,
    *,
    agent_name: str | None = None,
) -> ListingView:
    """Unpublish: nobody new can install it; it keeps running for its readers, who see that it
    is unlisted. Repeated, it does nothing (and records nothing) the second time. A retired
    plug-in is STATE-CONFLICT. An agent allowed to publish may make it (`agent_name`)."""
    require_manager(db, organization_id, actor, "unpublish plug-ins")
    listing = _listing(db, organization_id, plugin_id)
    if listing.retired_at is not None:
        raise Conflict(f"plug-in {plugin_id} is retired", code="STATE-CONFLICT")
    if listing.listed:
        listing.listed = False
        db.flush()
        log_move(db.connection(), plugin_id, "unpublish", who(actor, agent_name), now)
    return listing_view(db, listing)


def relist(
    db: Session,
    organization_id: int,
    actor: Account,
    plugin_id: str,
    now: datetime,
    *,
    agent_name: str | None = None,
) -> ListingView:
    """List again, only after Unpublish: never after a takedown, the service's shelf or
    retirement (LISTING-NOT-RELISTABLE). Repeated, it does nothing the second time."""
    require_manager(db, organization_id, actor, "list plug-ins again")
    listing = _listing(db, organization_id, plugin_id)
    view = listing_view(db, listing)
    if view.retired or view.taken_down or view.shelved:
        raise Conflict(
            f"plug-in {plugin_id} is {view.state}; only "
            + ("nobody" if view.retired else "the service")
            + " can list it again",
            code="LISTING-NOT-RELISTABLE",
        )
    if not listing.listed:
        listing.listed = True
        db.flush()
        log_move(db.connection(), plugin_id, "relist", who(actor, agent_name), now)
    return listing_view(db, listing)


@dataclass(frozen=True, slots=True)
class Retired:
    """The retired listing, the uploads withdrawn with it, and the mail to send."""

    listing: ListingView
    withdrawn: tuple[int, ...]
    mails: tuple[MailMessage, ...]


def retire(
    db: Session,
    organization_id: int,
    actor: Account,
    plugin_id: str,
    confirm: str,
    now: datetime,
) -> Retired:
    """Retire, typing the id (`confirm`, else PLG-RETIRE-CONFIRM): runs stop for good, readers
    keep its records, the id is never used again by anyone, every version of it in checks or
    review (or approved, not published) is withdrawn, and owners and admins are told. Retiring
    a retired plug-in does nothing."""
    require_manager(db, organization_id, actor, "retire plug-ins")
    listing = _listing(db, organization_id, plugin_id)
    if confirm != plugin_id:
        raise Invalid(
            f"confirm: type the plug-in id {plugin_id!r} to retire it", code="PLG-RETIRE-CONFIRM"
        )
    if listing.retired_at is not None:
        return Retired(listing_view(db, listing), (), ())
    listing.listed = False
    listing.retired_at = now
    listing.retired_by = actor.email
    withdrawn: list[int] = []
    for upload in db.scalars(
        select(PortalUpload).where(
            PortalUpload.plugin_id == plugin_id, PortalUpload.state.in_(_LIVE_UPLOADS)
        )
    ):
        move(upload, UploadState.WITHDRAWN)
        upload.withdrawn_by = actor.email
        upload.withdrawn_at = now
        withdrawn.append(upload.id)
    db.flush()
    end_under_way(db, plugin_id, reason="the plug-in was retired", by=actor.email, now=now)
    moves.retire(db.connection(), plugin_id, by=actor.email, now=now)
    retire_id(db, plugin_id, actor.email, now)
    body = (
        f"{actor.email} retired the plug-in {plugin_id} on {now:%Y-%m-%d %H:%M} UTC.\n\n"
        "Its runs have stopped for good; readers keep the records it wrote; the id "
        f"{plugin_id} is never used again."
        + (
            f"\nUploads withdrawn with it: {', '.join(str(i) for i in sorted(withdrawn))}."
            if withdrawn
            else ""
        )
        + "\n"
    )
    mails = tell_managers(
        db,
        organization_id,
        plugin_id=plugin_id,
        upload_id=None,
        kind="retired",
        subject=f"Retired: {plugin_id}",
        body=body,
        now=now,
    )
    log.info("plug-in %s retired by %s", plugin_id, actor.email)
    return Retired(listing_view(db, listing), tuple(sorted(withdrawn)), tuple(mails))


def listing_history(
    db: Session, organization_id: int, viewer: Account, plugin_id: str
) -> list[RecordedMove]:
    """Every move acting on the plug-in's listing, oldest first, with who made it (members)."""
    require_member(db, organization_id, viewer)
    _listing(db, organization_id, plugin_id)
    return [
        move for move in plugin_moves(db.connection(), plugin_id) if move.action in LISTING_MOVES
    ]
