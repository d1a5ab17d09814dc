"""The listing check (Listing table) and the icon read from its bytes."""

from __future__ import annotations

import copy
import json
import struct
import zlib
from datetime import date
from pathlib import Path

import pytest

from almanac.platform.contract.listing import CATEGORIES, check_listing, icon_problem
from almanac.platform.contract.manifest import Manifest, parse_manifest

MANIFEST = {
    "contract": 1, "id": "ecb-rates", "name": {"en": "ECB reference rates"}, "version": "1.0.0",
    "timezone": "Europe/Berlin", "audience": "public", "schedule": "0 17 * * 1-5",
    "backfill": "1y",
    "sources": [
        {"name": "daily", "url": "https://www.ecb.europa.eu/stats/eurofxref/eurofxref-daily.xml"},
        {"name": "hist", "url": "https://www.ecb.europa.eu/stats/eurofxref/eurofxref-hist.xml"},
    ],
    "series": [{"key": "usd", "kind": "value", "cadence": "business-day",
                "dates": "observation", "name": {"en": "USD"}, "unit": "USD",
                "fields": ["rate"]}],
    "licence": {"holder": "European Central Bank", "terms": "Reuse allowed", "retain": "yes"},
}  # fmt: skip

LISTING = {
    "listing": 1,
    "plugin": "ecb-rates",
    "publisher": {"domain": "example.org"},
    "tagline": {"en": "Euro reference rates on the day they apply", "de": "Euro-Referenzkurse"},
    "description": {"en": "The ECB publishes reference rates each working day.\n\nOne row a day."},
    "category": "central-banks",
    "keywords": ["euro", "exchange rates", "ECB"],
    "links": {
        "privacy": "https://example.org/privacy",
        "support": {"url": "https://example.org/support", "email": "plugins@example.org"},
    },
    "sources": [
        {"name": "daily", "title": "Euro foreign exchange reference rates",
         "page": "https://www.ecb.europa.eu/stats/policy_and_exchange_rates/",
         "licence": {"name": "ECB copyright", "url": "https://www.ecb.europa.eu/services/disclaimer/"}},
        {"name": "hist", "title": "History of the rates",
         "page": "https://www.ecb.europa.eu/stats/policy_and_exchange_rates/",
         "licence": {"name": "ECB copyright", "url": "https://www.ecb.europa.eu/services/disclaimer/"}},
    ],
    "examples": [{"date": "2024-05-10", "caption": {"en": "A Friday's rates"}}],
}  # fmt: skip

DAYS = {date(2024, 5, 9), date(2024, 5, 10)}


def png(width: int = 256, height: int = 256, *, padding: int = 0, colour: int = 2) -> bytes:
    """A solid PNG built with zlib: `padding` bytes of a tEXt chunk make it as large as needed."""

    def chunk(kind: bytes, body: bytes) -> bytes:
        return (
            struct.pack(">I", len(body)) + kind + body + struct.pack(">I", zlib.crc32(kind + body))
        )

    channels = {0: 1, 2: 3, 6: 4}[colour]
    row = b"\x00" + bytes([0x20, 0x60, 0xA0, 0xFF][:channels]) * width
    out = b"\x89PNG\r\n\x1a\n" + chunk(
        b"IHDR", struct.pack(">IIBBBBB", width, height, 8, colour, 0, 0, 0)
    )
    if padding:
        out += chunk(b"tEXt", b"Comment\x00" + b"a" * padding)
    return out + chunk(b"IDAT", zlib.compress(row * height)) + chunk(b"IEND", b"")


def manifest() -> Manifest:
    result = parse_manifest(copy.deepcopy(MANIFEST))
    assert result.manifest is not None, result.problems
    return result.manifest


def found(listing, icon=None, days=DAYS, **kw) -> set[tuple[str, str | None]]:
    icon = png() if icon is None else icon
    return {
        (p.code, p.path)
        for p in check_listing(listing, manifest(), icon=icon, fixture_dates=days, **kw)
    }


def changed(**changes) -> dict:
    doc = copy.deepcopy(LISTING)
    for path, value in changes.items():
        obj = doc
        keys = path.split("__")
        for key in keys[:-1]:
            obj = obj[int(key)] if isinstance(obj, list) else obj[key]
        last = keys[-1]
        if value is ...:
            del obj[last]
        else:
            obj[int(last) if isinstance(obj, list) else last] = value
    return doc


def test_a_good_listing_passes_as_object_text_and_bytes() -> None:
    assert found(LISTING) == set()
    assert found(json.dumps(LISTING)) == set()
    assert found(json.dumps(LISTING).encode()) == set()
    assert found(LISTING, verified_domain="example.org") == set()


def test_the_generated_icon_is_a_real_png(tmp_path: Path) -> None:
    assert icon_problem(png()) is None
    assert icon_problem(png(colour=6)) is None
    assert len(png()) < 2000


@pytest.mark.parametrize(
    ("doc", "expected"),
    [
        ("{", {("PLG-LISTING-INVALID", None)}),
        ([], {("PLG-LISTING-INVALID", None)}),
        (changed(listing=2), {("PLG-LISTING-INVALID", "listing")}),
        (changed(listing=True), {("PLG-LISTING-INVALID", "listing")}),
        (changed(colour="red"), {("PLG-LISTING-INVALID", "colour")}),
        (changed(links__support__phone="+1"), {("PLG-LISTING-INVALID", "links.support.phone")}),
        (changed(plugin="other"), {("PLG-LISTING-ID", "plugin")}),
        (changed(publisher=...), {("PLG-LISTING-PUBLISHER", "publisher.domain")}),
        (
            changed(publisher={"domain": "Example.org"}),
            {("PLG-LISTING-PUBLISHER", "publisher.domain")},
        ),
        (changed(tagline=...), {("PLG-LISTING-TAGLINE", "tagline")}),
        (changed(tagline__en="x" * 81), {("PLG-LISTING-TAGLINE", "tagline.en")}),
        (changed(tagline__en="two\nlines"), {("PLG-LISTING-TAGLINE", "tagline.en")}),
        (changed(tagline__de="<b>Kurse</b>"), {("PLG-LISTING-TAGLINE", "tagline.de")}),
        (changed(tagline__EN="x"), {("PLG-LISTING-TAGLINE", "tagline.EN")}),
        (changed(tagline__en=...), {("PLG-LISTING-LANGUAGE-MISSING", "tagline.en")}),
        (changed(description=...), {("PLG-LISTING-DESCRIPTION", "description")}),
        (changed(description__en="x" * 2001), {("PLG-LISTING-DESCRIPTION", "description.en")}),
        (changed(description__en="<p>Rates</p>"), {("PLG-LISTING-DESCRIPTION", "description.en")}),
        (
            changed(description={"es": "Tasas"}),
            {("PLG-LISTING-LANGUAGE-MISSING", "description.en")},
        ),
        (changed(category="finances"), {("PLG-LISTING-CATEGORY", "category")}),
        (changed(category=...), {("PLG-LISTING-CATEGORY", "category")}),
        (changed(keywords=["k"] * 13), {("PLG-LISTING-KEYWORDS", "keywords")}),
        (changed(keywords=["x" * 31]), {("PLG-LISTING-KEYWORDS", "keywords[0]")}),
        (changed(keywords="euro"), {("PLG-LISTING-KEYWORDS", "keywords")}),
        (
            changed(links__privacy="http://example.org/privacy"),
            {("PLG-LISTING-LINK", "links.privacy")},
        ),
        (changed(links__privacy=...), {("PLG-NO-PRIVACY-POLICY", "links.privacy")}),
        (
            changed(links=...),
            {
                ("PLG-NO-PRIVACY-POLICY", "links.privacy"),
                ("PLG-NO-SUPPORT-CONTACT", "links.support"),
            },
        ),
        (changed(links__support={}), {("PLG-NO-SUPPORT-CONTACT", "links.support")}),
        (changed(links__support={"email": "help@example.org"}), set()),
        (changed(links__support={"url": "https://example.org/help"}), set()),
        (
            changed(links__support={"email": "not an address"}),
            {("PLG-NO-SUPPORT-CONTACT", "links.support.email")},
        ),
        (
            changed(links__support__url="ftp://example.org"),
            {("PLG-LISTING-LINK", "links.support.url")},
        ),
        (
            changed(links__support__url="https://user:pw@example.org/"),
            {("PLG-LISTING-LINK", "links.support.url")},
        ),
        (
            changed(links__support__url="https://127.0.0.1/"),
            {("PLG-LISTING-LINK", "links.support.url")},
        ),
        (
            changed(sources__0__page="http://www.ecb.europa.eu/"),
            {("PLG-LISTING-LINK", "sources[0].page")},
        ),
        (
            changed(sources__1__licence__url="http://x.org/"),
            {("PLG-LISTING-LINK", "sources[1].licence.url")},
        ),
        (
            changed(sources__1__name="monthly"),
            {("PLG-LISTING-SOURCE", "sources[1].name"), ("PLG-LISTING-SOURCE", "sources")},
        ),
        (
            changed(sources__1__name="daily"),
            {("PLG-LISTING-SOURCE", "sources[1].name"), ("PLG-LISTING-SOURCE", "sources")},
        ),
        (changed(sources__0__title=...), {("PLG-LISTING-SOURCE", "sources[0].title")}),
        (
            changed(sources__0__licence__name=...),
            {("PLG-LISTING-SOURCE", "sources[0].licence.name")},
        ),
        (changed(sources__0__licence=...), {("PLG-LISTING-SOURCE", "sources[0].licence")}),
        (changed(sources=...), {("PLG-LISTING-SOURCE", "sources")}),
        (changed(examples=[]), {("PLG-LISTING-EXAMPLE", "examples")}),
        (
            changed(examples=[{"date": "2024-05-09", "caption": {"en": "x"}}] * 4),
            {
                ("PLG-LISTING-EXAMPLE", "examples"),
                ("PLG-LISTING-EXAMPLE", "examples[1].date"),
                ("PLG-LISTING-EXAMPLE", "examples[2].date"),
                ("PLG-LISTING-EXAMPLE", "examples[3].date"),
            },
        ),
        (changed(examples__0__date="2024-05-11"), {("PLG-LISTING-EXAMPLE", "examples[0].date")}),
        (changed(examples__0__date="2024-02-30"), {("PLG-LISTING-EXAMPLE", "examples[0].date")}),
        (
            changed(examples__0__caption={"de": "Kurse"}),
            {("PLG-LISTING-EXAMPLE", "examples[0].caption.en")},
        ),
    ],
)
def test_listing_faults(doc, expected) -> None:
    assert found(doc) == expected


def test_publisher_must_be_the_verified_domain() -> None:
    assert found(LISTING, verified_domain="other.org") == {
        ("PLG-LISTING-PUBLISHER", "publisher.domain")
    }


def test_every_category_is_accepted() -> None:
    for category in CATEGORIES:
        assert found(changed(category=category)) == set()


def test_a_manifest_without_sources_needs_no_listing_sources() -> None:
    doc = copy.deepcopy(MANIFEST)
    doc["sources"] = []
    m = parse_manifest(doc).manifest
    assert m is not None
    listing = changed(sources=...)
    assert check_listing(listing, m, icon=png(), fixture_dates=DAYS) == []


@pytest.mark.parametrize(
    ("icon", "reason"),
    [
        (None, "missing"),
        (png(255, 256), "255x256"),
        (png(512, 512), "512x512"),
        (png(padding=70_000), "at most 65536"),
        (png()[:-12], "cut-off"),
        (b"GIF89a" + b"\x00" * 100, "signature"),
        (png()[:30] + b"\xff" + png()[31:], "CRC"),
        (b"\x89PNG\r\n\x1a\n", "cut-off"),
    ],
)
def test_icon_faults_are_read_from_the_bytes(icon, reason) -> None:
    problems = check_listing(LISTING, manifest(), icon=icon, fixture_dates=DAYS)
    assert [(p.code, p.path) for p in problems] == [("PLG-LISTING-ICON", "listing/icon.png")]
    assert reason in problems[0].message


def test_icon_just_under_the_limit_passes() -> None:
    icon = png(padding=65_536 - len(png()) - 20)
    assert len(icon) <= 65_536
    assert icon_problem(icon) is None
    assert icon_problem(png(padding=65_536 - len(png()) - 19)) is not None


def test_icon_whose_data_is_not_its_size_is_refused() -> None:
    good = png(16, 16)
    short = good.replace(
        b"IHDR" + struct.pack(">II", 16, 16), b"IHDR" + struct.pack(">II", 256, 256)
    )
    # re-sign the changed header so only the image data is wrong
    start = short.index(b"IHDR")
    body = short[start + 4 : start + 17]
    short = (
        short[: start + 17] + struct.pack(">I", zlib.crc32(b"IHDR" + body)) + short[start + 21 :]
    )
    assert "not the size" in (icon_problem(short) or "")
