"""Readers' calendar feeds (issue 20): a reader's private feed address (a secret kept as its
hash, revocable, regenerated on request) and the iCalendar files of a reader's shown plug-ins
and of a public plug-in, drawn from the reader's own rows. Free of FastAPI and Dagster; every
clock read comes in as an argument."""

from almanac.platform.feeds.addresses import (
    FEED_PREFIX,
    NO_FEED,
    NewFeed,
    create_feed,
    current_feed,
    feed_account,
    revoke_feed,
)
from almanac.platform.feeds.calendar import FeedPlugin, Window, build_calendar, uid_of
from almanac.platform.feeds.models import ReaderFeed
from almanac.platform.feeds.reading import (
    DEFAULT_AHEAD,
    DEFAULT_PAST,
    FEEDS,
    MAX_AHEAD,
    MAX_PAST,
    FeedPlan,
    RenderedFeed,
    etag_matches,
    plugin_feed,
    reader_feed,
    render_feed,
    window_of,
)

__all__ = [
    "DEFAULT_AHEAD",
    "DEFAULT_PAST",
    "FEEDS",
    "FEED_PREFIX",
    "MAX_AHEAD",
    "MAX_PAST",
    "NO_FEED",
    "FeedPlan",
    "FeedPlugin",
    "NewFeed",
    "ReaderFeed",
    "RenderedFeed",
    "Window",
    "build_calendar",
    "create_feed",
    "current_feed",
    "etag_matches",
    "feed_account",
    "plugin_feed",
    "reader_feed",
    "render_feed",
    "revoke_feed",
    "uid_of",
    "window_of",
]
