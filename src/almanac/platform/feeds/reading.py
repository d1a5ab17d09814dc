"""Which plug-ins a feed holds, over which days, its ETag, and its bytes (kept by ETag).

- A reader's private feed (`reader_feed`): the account of the address's secret, and the
  plug-ins its days show (`audience.shown_plugins`: visibility, then the `shown` preference),
  decided anew on every read, so a private plug-in is only in the feed of a reader who may read
  it now. A taken-down one is a notice without records, as on the reader's days.
- A plug-in's public feed (`plugin_feed`): a public, approved, not taken-down plug-in, for
  anyone; every other id (private, local, taken down, removed, unknown) is the one NOT-FOUND.
- The window (`window_of`): by default 62 days back and 366 ahead of the reader's today, which
  the caller gives (every clock read comes in as an argument).
- The ETag: drawing is a pure function of the plug-ins' records, approved versions, statuses,
  the window and the language, and every write of a plug-in's records renews its
  `records_stamp` in the same transaction (see `audience.days`). So the ETag is a SHA-256 of
  those, known before any record is read: an unchanged feed costs a client's poll the reads of
  the address and the plug-ins. The bytes are kept by it (`FEEDS`), so a client that does not
  send `If-None-Match` is answered without drawing again. A plug-in never stamped (no write
  since the stamp came) has no such ETag: the feed is drawn and its ETag is the hash of the
  bytes, and nothing is kept.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from datetime import date, timedelta
from typing import Any, Literal

from sqlalchemy.orm import Session

from almanac.platform.audience import check_language, public_plugin, shown_plugins
from almanac.platform.audience.days import DrawnDays, day_sources
from almanac.platform.audience.visibility import ReadablePlugin
from almanac.platform.errors import Invalid, NotFound
from almanac.platform.feeds.addresses import feed_account
from almanac.platform.feeds.calendar import (
    FEED_COLOR,
    FeedPlugin,
    RecordKey,
    Window,
    build_calendar,
    color_of,
    record_key,
)
from almanac.platform.reader import from_stored
from almanac.platform.store.reading import RecordStamp, record_stamps

DEFAULT_PAST = 62
DEFAULT_AHEAD = 366
MAX_PAST = 731
MAX_AHEAD = 731
"""At most two years on either side of today."""
FEED_FORMAT = "feed-2"
"""Part of every ETag: a change to how feeds are drawn changes it (raise it then)."""
READER_FEED_NAME = "Almanac"
NO_PUBLIC_FEED = "no public calendar feed for this plug-in"


def window_of(today: date, past: int = DEFAULT_PAST, ahead: int = DEFAULT_AHEAD) -> Window:
    """The days `today - past` .. `today + ahead`; REQUEST-INVALID outside 0..731."""
    if not 0 <= past <= MAX_PAST:
        raise Invalid(f"past: give 0 to {MAX_PAST} days")
    if not 0 <= ahead <= MAX_AHEAD:
        raise Invalid(f"ahead: give 0 to {MAX_AHEAD} days")
    return Window(today - timedelta(days=past), today + timedelta(days=ahead), today)


@dataclass(frozen=True, slots=True)
class FeedPlan:
    """What a feed's bytes are made of, read before any record is."""

    kind: Literal["reader", "plugin"]
    name: str
    color: str
    uid: str | None
    plugins: tuple[ReadablePlugin, ...]
    window: Window
    language: str
    domain: str

    @property
    def etag(self) -> str | None:
        """A strong ETag from everything the bytes depend on; None when a plug-in's records
        were never stamped (then only the bytes tell)."""
        parts = [
            FEED_FORMAT,
            self.kind,
            self.name,
            self.color,
            self.uid or "",
            self.domain,
            self.language,
            self.window.first.isoformat(),
            self.window.last.isoformat(),
            self.window.today.isoformat(),
        ]
        for plugin in self.plugins:
            if plugin.taken_down:
                notice = plugin.takedown_message or ""
                parts += [plugin.id, str(plugin.version_id), "taken-down", notice]
                continue
            if plugin.records_stamp is None:
                return None
            parts += [plugin.id, str(plugin.version_id), plugin.records_stamp, plugin.state]
        return _etag("\x1f".join(parts).encode("utf-8"))


def _etag(data: bytes) -> str:
    return f'"{hashlib.sha256(data).hexdigest()[:40]}"'


def reader_feed(
    db: Session, secret: str, *, window: Window, language: str, domain: str
) -> FeedPlan:
    """The private feed of the address `secret`: the plug-ins its reader's days show now.
    NOT-FOUND for an unknown or revoked address (`addresses.feed_account`)."""
    account = feed_account(db, secret)
    check_language(language)
    return FeedPlan(
        kind="reader",
        name=READER_FEED_NAME,
        color=FEED_COLOR,
        uid=None,
        plugins=tuple(shown_plugins(db, account)),
        window=window,
        language=language,
        domain=domain,
    )


def plugin_feed(
    db: Session, plugin_id: str, *, window: Window, language: str, domain: str
) -> FeedPlan:
    """The public feed of a public plug-in; NOT-FOUND for any other id, with one detail that
    does not even name the id, so every refusal is the same bytes."""
    try:
        plugin = public_plugin(db, plugin_id)
    except NotFound:
        raise NotFound(NO_PUBLIC_FEED) from None
    check_language(language)
    return FeedPlan(
        kind="plugin",
        name=plugin.display_name(language),
        color=color_of(plugin.id),
        uid=f"plugins/{plugin.id}@{domain}",
        plugins=(plugin,),
        window=window,
        language=language,
        domain=domain,
    )


@dataclass(frozen=True, slots=True)
class RenderedFeed:
    etag: str
    body: bytes


FEEDS: DrawnDays[str] = DrawnDays(max_bytes=32 * 1024 * 1024)
"""The process's drawn feeds by ETag."""


def _feed_plugins(db: Session, plan: FeedPlan) -> list[FeedPlugin]:
    """Each plug-in with what its days over the window are drawn from (`audience.day_sources`,
    as the reader's days read it), and the stamps (current since, revision count) of the
    records dated in the window."""
    drawn = [p for p in plan.plugins if not p.taken_down]
    window = plan.window
    conn = db.connection()
    sources = day_sources(conn, drawn, window.first, window.last, window.today)
    stored = [s for found in sources.records.values() for s in found]
    in_window = [s for s in stored if window.first <= s.date <= window.last]
    stamps = record_stamps(conn, [s.record_id for s in in_window])
    records: dict[str, list[dict[str, Any]]] = {}
    keyed: dict[str, dict[RecordKey, RecordStamp]] = {}
    for s in stored:
        record = from_stored(s)
        records.setdefault(s.plugin_id, []).append(record)
        stamp = stamps.get(s.record_id)
        if stamp is not None:
            keyed.setdefault(s.plugin_id, {})[record_key(record)] = stamp
    return [
        FeedPlugin(
            id=p.id,
            manifest=p.manifest,
            status=p.status,
            notice=(p.takedown_message or "") if p.taken_down else None,
            records=records.get(p.id, []),
            stamps=keyed.get(p.id, {}),
            kept=sources.kept.get(p.id, ()),
        )
        for p in plan.plugins
    ]


def render_feed(db: Session, plan: FeedPlan) -> RenderedFeed:
    """The feed's bytes and ETag: kept ones when the ETag is known and they were drawn
    before, else drawn now (and kept when the ETag is known)."""
    etag = plan.etag
    if etag is not None:
        kept = FEEDS.get(etag)
        if kept is not None:
            return RenderedFeed(etag, kept)
    body = build_calendar(
        name=plan.name,
        plugins=_feed_plugins(db, plan),
        window=plan.window,
        language=plan.language,
        domain=plan.domain,
        color=plan.color,
        uid=plan.uid,
    )
    if etag is None:
        return RenderedFeed(_etag(body), body)
    FEEDS.put(etag, body)
    return RenderedFeed(etag, body)


def etag_matches(if_none_match: str | None, etag: str) -> bool:
    """RFC 9110 13.1.2: `*`, or any listed tag equal to `etag` by weak comparison."""
    if if_none_match is None:
        return False
    if if_none_match.strip() == "*":
        return True
    bare = etag.removeprefix("W/")
    return any(tag.strip().removeprefix("W/") == bare for tag in if_none_match.split(","))
