"""Readers' calendar feeds (issue 20): the iCalendar files (`text/calendar`) a calendar app
subscribes to, and a signed-in reader's own feed address.

- `GET /api/v1/feeds/{secret}.ics`: a reader's private feed, no sign-in (the secret in the path
  is the credential); an unknown or revoked address is 404 with the same body.
- `GET /api/v1/feeds/plugins/{plugin_id}.ics`: a public plug-in's feed, for anyone; a private,
  local, taken-down, removed or unknown id is 404 with the same body.
- `GET|POST|DELETE /api/v1/reader/feed`: whether the reader has an address (never its secret
  again); make one, revoking the one before, answered once (a password session only: a leaked
  token must not make a lasting way in); revoke it.

Both feeds take `language` (names in that language), `past` and `ahead` (days either side of
the reader's today, by default 62 and 366; today is the UTC date of the request, as for the
reader's days). Each answer carries a strong ETag; `If-None-Match` with it is 304 with no body,
decided before any record is read.
"""

from __future__ import annotations

from typing import Annotated
from urllib.parse import urlsplit

from fastapi import APIRouter, Header, Path, Query, status
from fastapi.responses import Response

from almanac.api.deps import Context, CurrentAccount, Db, Now, SessionAccount
from almanac.api.schemas.feeds import ReaderFeedCreatedOut, ReaderFeedOut
from almanac.platform import feeds
from almanac.platform.feeds import FeedPlan

router = APIRouter(prefix="/feeds", tags=["feeds"])
reader_router = APIRouter(prefix="/reader", tags=["reader"])

CALENDAR = "text/calendar; charset=utf-8"


Language = Annotated[
    str, Query(max_length=35, description="The language of names, such as en or es-DO.")
]
Past = Annotated[
    int,
    Query(ge=0, le=feeds.MAX_PAST, description="Days before the reader's today in the feed."),
]
Ahead = Annotated[
    int,
    Query(ge=0, le=feeds.MAX_AHEAD, description="Days after the reader's today in the feed."),
]
IfNoneMatch = Annotated[
    str | None,
    Header(description="The ETag of the copy the client holds: 304 when it is still current."),
]
CALENDAR_RESPONSES: dict[int | str, dict[str, object]] = {
    200: {
        "description": "An iCalendar file (RFC 5545 with RFC 7986 properties).",
        "content": {"text/calendar": {"schema": {"type": "string"}}},
    },
    304: {"description": "The copy named by If-None-Match is current."},
}


def _domain(ctx: Context) -> str:
    """The right side of every UID: the service's host."""
    return urlsplit(ctx.settings.base_url).hostname or "almanac"


def _answer(db: Db, plan: FeedPlan, if_none_match: str | None, cache: str) -> Response:
    headers = {"Cache-Control": cache}
    known = plan.etag
    if known is not None and feeds.etag_matches(if_none_match, known):
        return Response(status_code=304, headers={**headers, "ETag": known})
    rendered = feeds.render_feed(db, plan)
    headers["ETag"] = rendered.etag
    if feeds.etag_matches(if_none_match, rendered.etag):
        return Response(status_code=304, headers=headers)
    return Response(rendered.body, media_type=CALENDAR, headers=headers)


@router.get("/plugins/{plugin_id}.ics", response_class=Response, responses=CALENDAR_RESPONSES)
def plugin_feed(
    plugin_id: Annotated[str, Path(max_length=48)],
    ctx: Context,
    db: Db,
    now: Now,
    language: Language = "en",
    past: Past = feeds.DEFAULT_PAST,
    ahead: Ahead = feeds.DEFAULT_AHEAD,
    if_none_match: IfNoneMatch = None,
) -> Response:
    """A public plug-in's days as a calendar, for anyone."""
    window = feeds.window_of(now.date(), past, ahead)
    plan = feeds.plugin_feed(db, plugin_id, window=window, language=language, domain=_domain(ctx))
    return _answer(db, plan, if_none_match, "public, no-cache")


@router.get("/{secret}.ics", response_class=Response, responses=CALENDAR_RESPONSES)
def reader_feed(
    secret: Annotated[str, Path(max_length=200)],
    ctx: Context,
    db: Db,
    now: Now,
    language: Language = "en",
    past: Past = feeds.DEFAULT_PAST,
    ahead: Ahead = feeds.DEFAULT_AHEAD,
    if_none_match: IfNoneMatch = None,
) -> Response:
    """A reader's shown plug-ins as a calendar, at the private address only they were given."""
    window = feeds.window_of(now.date(), past, ahead)
    plan = feeds.reader_feed(db, secret, window=window, language=language, domain=_domain(ctx))
    return _answer(db, plan, if_none_match, "private, no-cache")


@reader_router.get("/feed", response_model=ReaderFeedOut)
def feed_status(account: CurrentAccount, db: Db) -> ReaderFeedOut:
    """Whether the reader has a calendar feed address; its secret is never shown again."""
    return ReaderFeedOut.of(feeds.current_feed(db, account))


@reader_router.post(
    "/feed", status_code=status.HTTP_201_CREATED, response_model=ReaderFeedCreatedOut
)
def make_feed(account: SessionAccount, ctx: Context, db: Db, now: Now) -> ReaderFeedCreatedOut:
    """A new calendar feed address, shown once; the reader's earlier one stops answering."""
    had = feeds.current_feed(db, account) is not None
    made = feeds.create_feed(db, account, now)
    db.commit()
    return ReaderFeedCreatedOut.of(made, ctx.settings.base_url, revoked_previous=had)


@reader_router.delete("/feed", status_code=status.HTTP_204_NO_CONTENT)
def revoke_feed(account: CurrentAccount, db: Db, now: Now) -> Response:
    """Revoke the reader's calendar feed address (nothing to do when there is none)."""
    feeds.revoke_feed(db, account, now)
    db.commit()
    return Response(status_code=status.HTTP_204_NO_CONTENT)
