"""Publishing an approved version ("Version in the portal", approved -> publish): it becomes the
plug-in's approved code for running, its listing the one the store shows, and the version
published before it is superseded."""

from __future__ import annotations

import json
import logging
from collections.abc import Mapping
from datetime import datetime

from sqlalchemy import select
from sqlalchemy.orm import Session

from almanac.platform.accounts.models import Account
from almanac.platform.contract.pack import check_code, read_pack
from almanac.platform.errors import Conflict, Invalid
from almanac.platform.hosting import register_code
from almanac.platform.publishing.identity.roles import require_manager, who
from almanac.platform.publishing.models import (
    PortalUpload,
    ReviewDecision,
    Rollout,
    RolloutState,
    UploadState,
    Verdict,
)
from almanac.platform.publishing.publication.rollout_states import end_under_way, move_rollout
from almanac.platform.publishing.publication.storefront import listing_words
from almanac.platform.publishing.uploads.review_information import reviewed_digest
from almanac.platform.publishing.uploads.upload_states import move
from almanac.platform.publishing.uploads.uploads import (
    ICON_FILE,
    LISTING_FILE,
    UploadView,
    upload_row,
)
from almanac.platform.publishing.uploads.uploads import upload_view as _upload_view
from almanac.platform.store import moves
from almanac.platform.store.history import log_move
from almanac.platform.store.models import StoreListing
from almanac.platform.store.plugins import plugin_status
from almanac.platform.store.tables import plugins

log = logging.getLogger(__name__)

SHADOW_MOST = 5
"""The longest shadow period, in runs (README, Rollouts)."""
LIVE_STATES = ("approved", "failing")
"""The plug-in states in which an approved version runs on its schedule."""


def _approval(db: Session, upload: PortalUpload) -> ReviewDecision:
    decision = db.scalars(
        select(ReviewDecision)
        .where(ReviewDecision.upload_id == upload.id)
        .order_by(ReviewDecision.id.desc())
        .limit(1)
    ).first()
    if (
        upload.state != UploadState.APPROVED
        or decision is None
        or decision.decision != Verdict.APPROVE
    ):
        raise Conflict(
            f"upload {upload.id} is {upload.state}; only an approved version is published",
            code="STATE-CONFLICT",
        )
    return decision


def publishable(db: Session, upload: PortalUpload) -> ReviewDecision:
    """The reviewer's approval of `upload`, once it may be published now: refused when its
    content is not exactly what the reviewer approved (REVIEW-CONTENT-CHANGED), and when the
    plug-in is retired, taken down or removed at the host (STATE-CONFLICT)."""
    decision = _approval(db, upload)
    if decision.reviewed != reviewed_digest(db, upload):
        raise Conflict(
            f"upload {upload.id} changed after its review: the approval named "
            f"{decision.reviewed}; only exactly the reviewed content is published",
            code="REVIEW-CONTENT-CHANGED",
        )
    flags = (
        db.connection()
        .execute(
            select(plugins.c.retired, plugins.c.taken_down, plugins.c.state).where(
                plugins.c.id == upload.plugin_id
            )
        )
        .first()
    )
    if flags is not None and (flags.retired or flags.taken_down or flags.state == "removed"):
        what = "retired" if flags.retired else "taken down" if flags.taken_down else "removed"
        raise Conflict(
            f"plug-in {upload.plugin_id} is {what}; it is not published again",
            code="STATE-CONFLICT",
        )
    return decision


def show_in_listing(
    listing: StoreListing, upload: PortalUpload, files: Mapping[str, bytes]
) -> None:
    """The store shows this published upload: its listing.json, icon, category and the words a
    search finds it by (at publish, and again when a publisher rolls back to it)."""
    raw_listing = files.get(LISTING_FILE)
    listing_doc = None if raw_listing is None else json.loads(raw_listing)
    listing.upload_id = upload.id
    listing.listing = listing_doc
    listing.icon = files.get(ICON_FILE)
    listing.category = None if listing_doc is None else listing_doc.get("category")
    listing.words = listing_words(listing_doc, upload.plugin_id, upload.manifest.get("name"))


def publish_approved(
    db: Session, upload: PortalUpload, by: str, now: datetime, *, rollout_id: int | None = None
) -> None:
    """Publish an approved upload, by a person or automatically (`by` says who: the publisher,
    and its agent), once `publishable`; a rollout of the plug-in under way other than
    `rollout_id`'s is stopped, replaced by this version (recorded). The code is registered
    (by `by`) and approved by the digest the reviewer approved in the same transaction: the
    reviewer's approval of that digest is the person's approval of "What the service does" 4,
    kept in the host's history as the reviewer's, so the run starts at once and readers move
    to it with that run."""
    decision = publishable(db, upload)
    conn = db.connection()
    unpacked = read_pack(upload.archive)
    code = check_code(unpacked.folder, unpacked.files, unpacked.pack_info)
    assert code.digest == upload.digest, "an upload's archive is kept as sent"
    registered = register_code(
        conn,
        code,
        origin="portal",
        by=by,
        now=now,
        publisher_organization_id=upload.organization_id,
    )
    status = plugin_status(conn, upload.plugin_id)
    if status.approved_version_id != registered.version_id:
        # The person who approved this code is the reviewer: the host's history says so, and
        # the publisher (`by`) is named on the registration and the publish move.
        moves.approve(
            conn, upload.plugin_id, digest_shown=code.digest, by=decision.reviewer, now=now
        )
    for earlier in db.scalars(
        select(PortalUpload).where(
            PortalUpload.plugin_id == upload.plugin_id,
            PortalUpload.state == UploadState.PUBLISHED,
            PortalUpload.id != upload.id,
        )
    ):
        move(earlier, UploadState.SUPERSEDED)
    move(upload, UploadState.PUBLISHED)
    end_under_way(
        db,
        upload.plugin_id,
        reason=f"version {upload.version} (upload {upload.id}) was published in its place",
        by=by,
        now=now,
        keep=rollout_id,
    )
    upload.published_by = by
    upload.published_at = now
    listing = db.get(StoreListing, upload.plugin_id)
    if listing is None:
        listing = StoreListing(
            plugin_id=upload.plugin_id,
            organization_id=upload.organization_id,
            listed=True,
        )
        db.add(listing)
    show_in_listing(listing, upload, unpacked.files)
    listing.published_at = now
    db.flush()
    log_move(
        conn,
        upload.plugin_id,
        "publish",
        by,
        now,
        version_id=registered.version_id,
        detail={"upload": upload.id, "version": upload.version, "reviewed": decision.reviewed},
    )
    log.info("upload %s published: %s %s by %s", upload.id, upload.plugin_id, upload.version, by)


def publish(
    db: Session,
    organization_id: int,
    actor: Account,
    upload_id: int,
    now: datetime,
    *,
    agent_name: str | None = None,
    shadow: int = 0,
) -> UploadView:
    """Owners and admins (or an agent allowed to publish, `agent_name`) publish an approved
    upload: at once, or with a shadow period of `shadow` runs (1 to 5) when it updates a live
    plug-in (README, Rollouts)."""
    require_manager(db, organization_id, actor, "publish versions")
    upload = upload_row(db, organization_id, upload_id)
    if shadow:
        start_rollout(db, upload, shadow, who(actor, agent_name), now)
    else:
        publish_approved(db, upload, who(actor, agent_name), now)
    return _upload_view(db, upload)


def start_rollout(db: Session, upload: PortalUpload, shadow: int, by: str, now: datetime) -> None:
    """Publish `upload` with a shadow period: for the plug-in's next `shadow` runs (1 to 5) its
    current version runs and writes as always, and this version runs beside it on the same
    downloads, writing nothing, until promoted, held or stopped (README, Rollouts). Refused
    (STATE-CONFLICT) unless the plug-in is live (an approved version that runs) and the upload
    `publishable`; a rollout already under way is replaced (recorded)."""
    if not 1 <= shadow <= SHADOW_MOST:
        raise Invalid(
            f"shadow: a shadow period is 1 to {SHADOW_MOST} runs (0 publishes at once), "
            f"not {shadow}"
        )
    publishable(db, upload)
    conn = db.connection()
    live = conn.execute(
        select(plugins.c.approved_version_id, plugins.c.state).where(
            plugins.c.id == upload.plugin_id
        )
    ).first()
    if live is None or live.approved_version_id is None or live.state not in LIVE_STATES:
        raise Conflict(
            f"plug-in {upload.plugin_id} is not live: a shadow period compares an update with "
            "the running version; publish it without one",
            code="STATE-CONFLICT",
        )
    replaced = end_under_way(
        db,
        upload.plugin_id,
        reason=f"version {upload.version} (upload {upload.id}) was published in its place",
        by=by,
        now=now,
    )
    rollout = Rollout(
        organization_id=upload.organization_id,
        plugin_id=upload.plugin_id,
        upload_id=upload.id,
        version=upload.version,
        digest=upload.digest,
        from_version_id=live.approved_version_id,
        shadow_runs=shadow,
        started_by=by,
        started_at=now,
    )
    move_rollout(rollout, RolloutState.SHADOWING)
    db.add(rollout)
    db.flush()
    log_move(
        conn,
        upload.plugin_id,
        "rollout-shadowing",
        by,
        now,
        detail={
            "rollout": rollout.id,
            "upload": upload.id,
            "version": upload.version,
            "shadow_runs": shadow,
            "replaced": [r.id for r in replaced],
        },
    )
    log.info("upload %s shadows %s for %s runs", upload.id, upload.plugin_id, shadow)
