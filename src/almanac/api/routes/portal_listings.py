"""The portal's publishing moves (DECISIONS 10, `portal` area): publish an approved version,
the published plug-ins' listings (unpublish, list again, retire with the typed id) and their
history, the portal's notices, and the reports on the organization's plug-ins."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter

from almanac.api.deps import Actor, Context, Db, Now, Reading, acting
from almanac.api.schemas import RowIdPath
from almanac.api.schemas.figures import PublisherFiguresOut
from almanac.api.schemas.portal import (
    ListingMoveOut,
    ListingOut,
    NoticeOut,
    RetiredOut,
    RetireIn,
    UploadOut,
)
from almanac.api.schemas.reader import ReportOut
from almanac.platform import audience, figures
from almanac.platform.agents import AgentAction
from almanac.platform.mail import send_all
from almanac.platform.publishing.publication import listings, notices, publication

router = APIRouter(prefix="/portal", tags=["portal"])

Publishing = Annotated[Actor, acting(AgentAction.PUBLISH)]
Unpublishing = Annotated[Actor, acting(AgentAction.UNPUBLISH)]
Relisting = Annotated[Actor, acting(AgentAction.RELIST)]
Retiring = Annotated[Actor, acting(AgentAction.RETIRE)]


@router.post(
    "/organizations/{organization_id}/uploads/{upload_id}/publish", response_model=UploadOut
)
def publish_upload(
    organization_id: RowIdPath,
    upload_id: RowIdPath,
    actor: Publishing,
    ctx: Context,
    db: Db,
    now: Now,
) -> UploadOut:
    """Publish an approved version (owners and admins): it becomes the plug-in's approved code
    at once, its first run is requested, and the version published before is superseded.
    409 STATE-CONFLICT unless approved; 409 REVIEW-CONTENT-CHANGED when it is not exactly the
    content approved."""
    published = publication.publish(
        db, organization_id, actor.account, upload_id, now, agent_name=actor.agent_name
    )
    db.commit()
    return UploadOut.of(published, ctx.settings.base_url)


@router.get("/organizations/{organization_id}/plugins", response_model=list[ListingOut])
def published_plugins(organization_id: RowIdPath, actor: Reading, db: Db) -> list[ListingOut]:
    """The organization's published plug-ins and their listings (members)."""
    return [
        ListingOut.model_validate(v)
        for v in listings.organization_listings(db, organization_id, actor.account)
    ]


@router.get("/organizations/{organization_id}/plugins/{plugin_id}", response_model=ListingOut)
def published_plugin(
    organization_id: RowIdPath, plugin_id: str, actor: Reading, db: Db
) -> ListingOut:
    """One published plug-in's listing (members)."""
    return ListingOut.model_validate(
        listings.show_listing(db, organization_id, actor.account, plugin_id)
    )


@router.get(
    "/organizations/{organization_id}/plugins/{plugin_id}/figures",
    response_model=PublisherFiguresOut,
)
def plugin_figures(
    organization_id: RowIdPath, plugin_id: str, actor: Reading, db: Db, now: Now, days: int = 30
) -> PublisherFiguresOut:
    """A published plug-in's figures over the last 30 or 365 days (members): readers who show
    it and installs per day, runs per day by outcome, records written and revised per run,
    check durations of its uploads, the review queue's median wait. Counts only, never who."""
    listings.show_listing(db, organization_id, actor.account, plugin_id)
    drawn = figures.publisher_figures(db.connection(), plugin_id, days, now)
    return PublisherFiguresOut.model_validate(drawn)


@router.post(
    "/organizations/{organization_id}/plugins/{plugin_id}/unpublish", response_model=ListingOut
)
def unpublish(
    organization_id: RowIdPath, plugin_id: str, actor: Unpublishing, db: Db, now: Now
) -> ListingOut:
    """Unpublish (owners and admins): nobody new installs it; it keeps running for its
    readers. Repeated, it does nothing."""
    view = listings.unpublish(
        db, organization_id, actor.account, plugin_id, now, agent_name=actor.agent_name
    )
    db.commit()
    return ListingOut.model_validate(view)


@router.post(
    "/organizations/{organization_id}/plugins/{plugin_id}/relist", response_model=ListingOut
)
def relist(
    organization_id: RowIdPath, plugin_id: str, actor: Relisting, db: Db, now: Now
) -> ListingOut:
    """List again after Unpublish (owners and admins); 409 LISTING-NOT-RELISTABLE after a
    takedown, the service's shelf or retirement. Repeated, it does nothing."""
    view = listings.relist(
        db, organization_id, actor.account, plugin_id, now, agent_name=actor.agent_name
    )
    db.commit()
    return ListingOut.model_validate(view)


@router.post(
    "/organizations/{organization_id}/plugins/{plugin_id}/retire", response_model=RetiredOut
)
def retire(
    organization_id: RowIdPath,
    plugin_id: str,
    body: RetireIn,
    actor: Retiring,
    ctx: Context,
    db: Db,
    now: Now,
) -> RetiredOut:
    """Retire, typing the id in `confirm` (else PLG-RETIRE-CONFIRM): runs stop for good,
    readers keep the records, the id is never used again, versions in review are withdrawn,
    owners and admins are e-mailed."""
    done = listings.retire(db, organization_id, actor.account, plugin_id, body.confirm, now)
    db.commit()
    send_all(ctx.mailer, done.mails, now)
    return RetiredOut.of(done)


@router.get(
    "/organizations/{organization_id}/plugins/{plugin_id}/history",
    response_model=list[ListingMoveOut],
)
def listing_history(
    organization_id: RowIdPath, plugin_id: str, actor: Reading, db: Db
) -> list[ListingMoveOut]:
    """Every move of the plug-in's listing, oldest first, with who made it (members)."""
    return [
        ListingMoveOut.model_validate(m)
        for m in listings.listing_history(db, organization_id, actor.account, plugin_id)
    ]


@router.get(
    "/organizations/{organization_id}/plugins/{plugin_id}/reports",
    response_model=list[ReportOut],
)
def plugin_reports(
    organization_id: RowIdPath, plugin_id: str, actor: Reading, db: Db
) -> list[ReportOut]:
    """Every report on one of the organization's plug-ins, newest first, never who sent it
    (owners and admins)."""
    return [
        ReportOut.of(r)
        for r in audience.publisher_reports(db, organization_id, actor.account, plugin_id)
    ]


@router.get("/organizations/{organization_id}/notices", response_model=list[NoticeOut])
def organization_notices(organization_id: RowIdPath, actor: Reading, db: Db) -> list[NoticeOut]:
    """What the portal told the organization, newest first (members): each reviewer's
    decision, each retirement."""
    return [
        NoticeOut.model_validate(n)
        for n in notices.organization_notices(db, organization_id, actor.account)
    ]
