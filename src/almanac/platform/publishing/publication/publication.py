"""Publishing an approved version ("Version in the portal", approved -> publish): it becomes the
plug-in's approved code for running, its listing the one the store shows, and the version
published before it is superseded."""

from __future__ import annotations

import json
import logging
from datetime import datetime

from sqlalchemy import select
from sqlalchemy.orm import Session

from almanac.platform.accounts.models import Account
from almanac.platform.contract.pack import check_code, read_pack
from almanac.platform.errors import Conflict
from almanac.platform.hosting import register_code
from almanac.platform.publishing.identity.roles import require_manager, who
from almanac.platform.publishing.models import (
    PortalUpload,
    ReviewDecision,
    UploadState,
    Verdict,
)
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


def publish_approved(db: Session, upload: PortalUpload, by: str, now: datetime) -> None:
    """Publish an approved upload, by a person or automatically (`by` says who: the publisher,
    and its agent). Refused when its content is not exactly what the reviewer approved
    (REVIEW-CONTENT-CHANGED), and when the plug-in is retired, taken down or removed at the
    host (STATE-CONFLICT). The code is registered (by `by`) and approved by the digest the
    reviewer approved in the same transaction: the reviewer's approval of that digest is the
    person's approval of "What the service does" 4, kept in the host's history as the
    reviewer's, so the run starts at once and readers move to it with that run."""
    decision = _approval(db, upload)
    if decision.reviewed != reviewed_digest(db, upload):
        raise Conflict(
            f"upload {upload.id} changed after its review: the approval named "
            f"{decision.reviewed}; only exactly the reviewed content is published",
            code="REVIEW-CONTENT-CHANGED",
        )
    conn = db.connection()
    flags = conn.execute(
        select(plugins.c.retired, plugins.c.taken_down, plugins.c.state).where(
            plugins.c.id == upload.plugin_id
        )
    ).first()
    if flags is not None and (flags.retired or flags.taken_down or flags.state == "removed"):
        what = "retired" if flags.retired else "taken down" if flags.taken_down else "removed"
        raise Conflict(
            f"plug-in {upload.plugin_id} is {what}; it is not published again",
            code="STATE-CONFLICT",
        )
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
    upload.published_by = by
    upload.published_at = now
    raw_listing = unpacked.files.get(LISTING_FILE)
    listing_doc = None if raw_listing is None else json.loads(raw_listing)
    listing = db.get(StoreListing, upload.plugin_id)
    if listing is None:
        listing = StoreListing(
            plugin_id=upload.plugin_id,
            organization_id=upload.organization_id,
            listed=True,
        )
        db.add(listing)
    listing.upload_id = upload.id
    listing.listing = listing_doc
    listing.icon = unpacked.files.get(ICON_FILE)
    listing.category = None if listing_doc is None else listing_doc.get("category")
    listing.words = listing_words(listing_doc, upload.plugin_id, code.manifest.raw.get("name"))
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
) -> UploadView:
    """Owners and admins (or an agent allowed to publish, `agent_name`) publish an approved
    upload."""
    require_manager(db, organization_id, actor, "publish versions")
    upload = upload_row(db, organization_id, upload_id)
    publish_approved(db, upload, who(actor, agent_name), now)
    return _upload_view(db, upload)
