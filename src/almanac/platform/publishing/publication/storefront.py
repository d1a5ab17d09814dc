"""The store readers browse ("What the service does" 5; "Listing"): published, listed, public
plug-ins found by words and category, each plug-in's page, and installing (the reader's
`plugins.<id>.shown` preference: readers install a plug-in, never a version)."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import date, datetime
from typing import Any

from sqlalchemy import ColumnElement, Row, Select, func, or_, select
from sqlalchemy.orm import Session

from almanac.platform.accounts.models import Account
from almanac.platform.audience.preferences import chosen_shown, set_shown, shown_key, shown_of
from almanac.platform.audience.visibility import (
    ReadablePlugin,
    not_found,
    readable_by_anyone,
    readable_plugin,
)
from almanac.platform.contract.listing import CATEGORIES
from almanac.platform.contract.names import pick_name
from almanac.platform.contract.pack import read_pack
from almanac.platform.errors import Invalid
from almanac.platform.publishing.identity.domains import PublisherDomain, publisher_domains
from almanac.platform.publishing.models import DomainClaim, PortalUpload
from almanac.platform.publishing.publication.listings import ListingView, listing_view
from almanac.platform.publishing.uploads.uploads import RECORDS_FILE
from almanac.platform.reader.chart import SeriesChart, example_chart
from almanac.platform.reader.render import Day, Record, render_days
from almanac.platform.reader.words import schedule_words
from almanac.platform.store.installable import in_store_clause
from almanac.platform.store.models import StoreListing
from almanac.platform.store.tables import plugins, runs, versions

CONTEXT_FILE = "fixtures/context.json"


@dataclass(frozen=True, slots=True)
class StoreEntry:
    """A plug-in as the store lists it, in the reader's language."""

    plugin_id: str
    name: str
    tagline: str
    category: str
    publisher_domain: str | None
    verified: bool
    has_icon: bool
    installed: bool


@dataclass(frozen=True, slots=True)
class ExampleDay:
    """A listing example: its caption and the day drawn as a reader sees it."""

    date: date
    caption: str
    day: Day


@dataclass(frozen=True, slots=True)
class StorePage:
    """Everything a plug-in's store page shows. `listing_state` is listed, unlisted, shelved,
    taken-down or retired; a taken-down plug-in carries its public message."""

    entry: StoreEntry
    description: str
    keywords: tuple[str, ...]
    links: Mapping[str, Any]
    sources: tuple[Mapping[str, Any], ...]
    examples: tuple[ExampleDay, ...]
    chart: SeriesChart | None
    schedule: str
    timezone: str
    schedule_words: str
    version: str
    last_success: datetime | None
    listing_state: str
    in_store: bool
    takedown_message: str | None


def _check_category(category: str | None) -> None:
    if category is not None and category not in CATEGORIES:
        raise Invalid(f"category: {category!r} is not one of {', '.join(CATEGORIES)}")


def _words(text: str) -> list[str]:
    return [w for w in text.casefold().split() if w]


def _names(value: Any) -> list[str]:
    return [v for v in value.values() if isinstance(v, str)] if isinstance(value, dict) else []


def listing_words(listing: Mapping[str, Any] | None, plugin_id: str, names: Any) -> str:
    """ "Listing": the words a search finds a published listing by, kept in
    `store_listings.words` at publish: the plug-in's id and names, the tagline, description,
    keywords and category in every language, case folded. Not the publisher's domain, which
    may change after; `search_store` matches it apart."""
    doc = listing or {}
    parts = [plugin_id, str(doc.get("category", ""))]
    parts += _names(names)
    parts += _names(doc.get("tagline")) + _names(doc.get("description"))
    parts += [k for k in doc.get("keywords", []) if isinstance(k, str)]
    return " ".join(parts).casefold()


def _entry(
    listing: StoreListing,
    readable: ReadablePlugin,
    domain: PublisherDomain | None,
    language: str,
    installed: bool,
) -> StoreEntry:
    doc = listing.listing or {}
    name = readable.display_name(language)
    return StoreEntry(
        plugin_id=readable.id,
        name=name,
        tagline=pick_name(doc.get("tagline"), language) or "",
        category=str(doc.get("category", "")),
        publisher_domain=None if domain is None else domain.domain,
        verified=domain is not None and domain.verified,
        has_icon=listing.icon is not None,
        installed=installed,
    )


STORE_PAGE_SIZE = 50
"""Listings in one answer of the store when the asker names no `limit`: a store of thousands
answered whole made each search megabytes (issue 33)."""
STORE_PAGE_MOST = 200


@dataclass(frozen=True, slots=True)
class StoreFound:
    """One page of the store's listings by id, and the id to ask for the next page after
    (None on the last page)."""

    entries: tuple[StoreEntry, ...]
    next_after: str | None


def _in_store() -> Select[Any]:
    """The listings in the store (`in_store_clause`) of plug-ins anyone may read, by id, with
    what an entry shows: the approved version's names, the listing's document."""
    readable = readable_by_anyone()
    return (
        select(
            StoreListing.plugin_id,
            StoreListing.organization_id,
            StoreListing.listing,
            StoreListing.icon.is_not(None).label("has_icon"),
            versions.c.manifest["name"].label("names"),
        )
        .join(readable, readable.c.id == StoreListing.plugin_id)
        .join(plugins, plugins.c.id == StoreListing.plugin_id)
        .join(versions, versions.c.id == readable.c.version_id)
        .where(in_store_clause())
        .order_by(StoreListing.plugin_id)
    )


def _found_by(word: str) -> ColumnElement[bool]:
    """A listing whose kept words, or whose publisher's current domain, hold `word`."""
    by_domain = select(DomainClaim.organization_id).where(
        DomainClaim.ended_at.is_(None),
        func.lower(DomainClaim.domain).contains(word, autoescape=True),
    )
    return or_(
        StoreListing.words.contains(word, autoescape=True),
        StoreListing.organization_id.in_(by_domain),
    )


def _check_page(limit: int | None) -> int:
    if limit is None:
        return STORE_PAGE_SIZE
    if not 1 <= limit <= STORE_PAGE_MOST:
        raise Invalid(f"limit: {limit} is not from 1 to {STORE_PAGE_MOST}")
    return limit


def search_store(
    db: Session,
    reader: Account,
    *,
    words: str | None = None,
    category: str | None = None,
    language: str = "en",
    after: str | None = None,
    limit: int | None = None,
) -> StoreFound:
    """The plug-ins in the store (published, listed, public, not shelved, taken down or
    retired), by id, a page at a time (`limit`, 50 unless named, at most 200; the next page
    starts `after` the last id); `words` must each occur in the plug-in's id, names, tagline,
    description, keywords, category or publisher domain (any language, case ignored);
    `category` one of the store's categories (else REQUEST-INVALID)."""
    _check_category(category)
    size = _check_page(limit)
    query = _in_store().limit(size + 1)
    for word in _words(words or ""):
        query = query.where(_found_by(word))
    if category is not None:
        query = query.where(StoreListing.category == category)
    if after is not None:
        query = query.where(StoreListing.plugin_id > after)
    rows = db.execute(query).all()
    page = rows[:size]
    domains = publisher_domains(db, (row.organization_id for row in page))
    installed = chosen_shown(db, reader)
    entries = tuple(
        _found(row, domains.get(row.organization_id), language, installed) for row in page
    )
    return StoreFound(entries, page[-1].plugin_id if len(rows) > size else None)


def _found(
    row: Row[Any], domain: PublisherDomain | None, language: str, installed: set[str]
) -> StoreEntry:
    doc = row.listing or {}
    name = pick_name(row.names or {}, language)
    return StoreEntry(
        plugin_id=row.plugin_id,
        name=row.plugin_id if name is None else name,
        tagline=pick_name(doc.get("tagline"), language) or "",
        category=str(doc.get("category", "")),
        publisher_domain=None if domain is None else domain.domain,
        verified=domain is not None and domain.verified,
        has_icon=bool(row.has_icon),
        installed=row.plugin_id in installed,
    )


@dataclass(frozen=True, slots=True)
class _Fixtures:
    """The published version's fixture records and the reader's today they were made for."""

    records: list[Record]
    today: date | None


def _fixtures(listing: StoreListing, db: Session) -> _Fixtures:
    upload = db.get(PortalUpload, listing.upload_id)
    assert upload is not None
    files = read_pack(upload.archive).files
    records: list[Record] = [
        json.loads(line)
        for line in files.get(RECORDS_FILE, b"").decode("utf-8", "replace").splitlines()
        if line.strip()
    ]
    context = json.loads(files[CONTEXT_FILE]) if CONTEXT_FILE in files else {}
    today = context.get("today")
    return _Fixtures(records, date.fromisoformat(today) if isinstance(today, str) else None)


def _example_days(
    listing: StoreListing, readable: ReadablePlugin, language: str, fixtures: _Fixtures
) -> list[ExampleDay]:
    """The listing's example days drawn from the published version's fixture records by the
    readers' own renderer, as a reader whose today is the fixtures' today sees them."""
    doc = listing.listing or {}
    examples = [e for e in doc.get("examples", []) if isinstance(e, dict)]
    days = []
    for example in examples:
        day = date.fromisoformat(str(example["date"]))
        drawn = render_days(
            readable.manifest, fixtures.records, from_date=day, to_date=day,
            today=(fixtures.today or day).isoformat(), language=language,
        )  # fmt: skip
        caption = pick_name(example.get("caption"), language) or ""
        days.append(ExampleDay(day, caption, drawn[0]))
    return days


def _example_chart(
    listing: StoreListing, readable: ReadablePlugin, language: str, fixtures: _Fixtures
) -> SeriesChart | None:
    """A listing with example days also draws a chart of a value series from the same
    fixture records, to the fixtures' today (or their newest day)."""
    doc = listing.listing or {}
    if not any(isinstance(e, dict) for e in doc.get("examples", [])):
        return None
    dates = [str(r["date"]) for r in fixtures.records if isinstance(r.get("date"), str)]
    today = fixtures.today or (date.fromisoformat(max(dates)) if dates else None)
    if today is None:
        return None
    return example_chart(readable.manifest, fixtures.records, today, language)


def _last_success(db: Session, plugin_id: str) -> datetime | None:
    at: datetime | None = db.scalar(
        select(func.max(runs.c.ended_at)).where(
            runs.c.plugin_id == plugin_id, runs.c.outcome == "success"
        )
    )
    return at


@dataclass(frozen=True, slots=True)
class _Visible:
    listing: StoreListing
    readable: ReadablePlugin
    view: ListingView
    installed: bool


def _visible(db: Session, reader: Account, plugin_id: str) -> _Visible:
    """A plug-in's store page is seen when it is in the store, and by a reader who installed
    it even when it is no longer listed; NOT-FOUND otherwise, as for an unknown id."""
    listing = db.get(StoreListing, plugin_id)
    if listing is None or listing.listing is None:
        raise not_found(plugin_id)
    readable = readable_plugin(db, reader, plugin_id)
    if readable.audience != "public":
        raise not_found(plugin_id)
    view = listing_view(db, listing)
    installed = shown_of(db, reader, [readable])[plugin_id].shown
    if not view.in_store and not installed:
        raise not_found(plugin_id)
    return _Visible(listing, readable, view, installed)


def store_page(db: Session, reader: Account, plugin_id: str, language: str = "en") -> StorePage:
    """A plug-in's store page (see `_visible` for who sees it): a reader who installed a plug-in
    no longer listed sees that it is unlisted, or the public message of its takedown."""
    seen = _visible(db, reader, plugin_id)
    listing, readable = seen.listing, seen.readable
    doc = listing.listing or {}
    upload = db.get(PortalUpload, listing.upload_id)
    assert upload is not None
    manifest = readable.manifest
    domain = publisher_domains(db, [listing.organization_id]).get(listing.organization_id)
    fixtures = _fixtures(listing, db)
    return StorePage(
        entry=_entry(listing, readable, domain, language, seen.installed),
        description=pick_name(doc.get("description"), language) or "",
        keywords=tuple(k for k in doc.get("keywords", []) if isinstance(k, str)),
        links=doc.get("links", {}),
        sources=tuple(s for s in doc.get("sources", []) if isinstance(s, dict)),
        examples=tuple(_example_days(listing, readable, language, fixtures)),
        chart=_example_chart(listing, readable, language, fixtures),
        schedule=manifest.schedule,
        timezone=manifest.timezone,
        schedule_words=schedule_words(manifest.schedule, manifest.timezone),
        version=upload.version,
        last_success=_last_success(db, plugin_id),
        listing_state=seen.view.state,
        in_store=seen.view.in_store,
        takedown_message=seen.view.takedown_message,
    )


def store_icon(db: Session, reader: Account, plugin_id: str) -> bytes:
    """The listing's icon (PNG) of a plug-in whose store page the reader may see."""
    icon = _visible(db, reader, plugin_id).listing.icon
    if icon is None:
        raise not_found(plugin_id)
    return icon


def install(
    db: Session, reader: Account, plugin_id: str, now: datetime, language: str = "en"
) -> StorePage:
    """Install: the reader's `shown` becomes true. Only a plug-in in the store is newly
    installed (STORE-NOT-LISTED for an unlisted, shelved, taken-down or retired one the reader
    has not installed); installing it again changes nothing."""
    set_shown(db, reader, {shown_key(plugin_id): True}, now)
    return store_page(db, reader, plugin_id, language)


def uninstall(db: Session, reader: Account, plugin_id: str, now: datetime) -> None:
    """Uninstall: the reader's `shown` becomes false (their records stay with the plug-in)."""
    set_shown(db, reader, {shown_key(plugin_id): False}, now)
