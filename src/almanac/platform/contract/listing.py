"""The store listing's static check, one of the contract's rules (spec "Resources and their
fields": Listing; "Errors": Manifest and listing; "Limits": Listing).

Choices where the spec leaves room:
- `category` is one of CATEGORIES: finance, economy, central-banks, holidays, government,
  statistics, weather, science, transport, culture, sports, other. The spec lists none; these
  cover the kinds of dated public records a plug-in may carry, with `other` for the rest.
- Per-language texts (`tagline`, `description`, each example's `caption`) are objects keyed by
  a language code (`en`, `es`, `pt-BR`). A missing `en` in the tagline or description is
  PLG-LISTING-LANGUAGE-MISSING; a caption without `en` is PLG-LISTING-EXAMPLE.
- Plain text has no control characters (a description may hold line feeds), no HTML markup or
  character reference; a tagline and a caption are one line. A caption has at most 200
  characters, a source `title` and licence `name` 1 to 200, a keyword 1 to 30.
- Links (`links.privacy`, `links.support.url`, each source's `page` and `licence.url`) are https
  URLs of at most 1,000 characters with a host name (no IP address, user or password);
  anything else present there is PLG-LISTING-LINK. `links.support.email` is `local@domain`
  with a dot-atom local part of at most 64 characters and a host-name domain.
- The icon is judged from its bytes only: at most 65,536 bytes, the PNG signature, a first
  IHDR chunk of 256x256, chunks with good CRCs ending in IEND, and image data that inflates
  to the size the header promises (non-interlaced images).
"""

from __future__ import annotations

import json
import re
import struct
import zlib
from collections.abc import Mapping
from datetime import date
from typing import Any

from almanac.platform.contract.manifest import Manifest
from almanac.platform.contract.problems import Problem
from almanac.platform.contract.rules import (
    CONTROL_PATTERN,
    LANGUAGE_PATTERN,
    MARKUP_PATTERN,
    host_problem,
    parse_date,
    split_https_url,
)

CATEGORIES: tuple[str, ...] = (
    "finance", "economy", "central-banks", "holidays", "government", "statistics", "weather",
    "science", "transport", "culture", "sports", "other",
)  # fmt: skip
"""The store's categories; a listing names exactly one."""

LISTING_KEYS = (
    "listing", "plugin", "publisher", "tagline", "description", "category", "keywords", "links",
    "sources", "examples",
)  # fmt: skip
PUBLISHER_KEYS = ("domain",)
LINKS_KEYS = ("privacy", "support")
SUPPORT_KEYS = ("url", "email")
SOURCE_KEYS = ("name", "title", "page", "licence")
SOURCE_LICENCE_KEYS = ("name", "url")
EXAMPLE_KEYS = ("date", "caption")

MAX_TAGLINE = 80
MAX_DESCRIPTION = 2000
MAX_KEYWORDS = 12
MAX_KEYWORD = 30
MAX_CAPTION = 200
MAX_TITLE = 200
MAX_LINK = 1000
MIN_EXAMPLES, MAX_EXAMPLES = 1, 3
ICON_PATH = "listing/icon.png"
ICON_SIZE = 256
MAX_ICON_BYTES = 64 * 1024

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
_LINE_BREAKS = re.compile(r"[\n\r\u0085\u2028\u2029]")
_DESCRIPTION_CONTROL = re.compile(r"[\x00-\x09\x0b-\x1f\x7f]")
_LOCAL_PART = re.compile(r"[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+(?:\.[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+)*")
_CHANNELS = {0: 1, 2: 3, 3: 1, 4: 2, 6: 4}
_DEPTHS = {0: (1, 2, 4, 8, 16), 2: (8, 16), 3: (1, 2, 4, 8), 4: (8, 16), 6: (8, 16)}


def _show(value: Any) -> str:
    try:
        text = json.dumps(value, ensure_ascii=False)
    except (TypeError, ValueError):
        text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


class _Check:
    def __init__(self) -> None:
        self.problems: list[Problem] = []

    def add(self, code: str, path: str | None, detail: str) -> None:
        message = f"listing.json {path}: {detail}" if path else f"listing.json: {detail}"
        self.problems.append(Problem(code, message, path=path))

    def unknown(self, obj: Mapping[str, Any], known: tuple[str, ...], prefix: str) -> None:
        for key in obj:
            if key not in known:
                path = f"{prefix}.{key}" if prefix else str(key)
                self.add("PLG-LISTING-INVALID", path, "is not a listing key")

    def link(self, value: Any, path: str) -> bool:
        """Report a link that is not an https URL with a host name; True when it is one."""
        reason = link_problem(value)
        if reason is not None:
            self.add("PLG-LISTING-LINK", path, f"{_show(value)} {reason}")
            return False
        return True


def link_problem(value: Any) -> str | None:
    """Why a listing link is not an https URL of at most 1,000 characters with a host name."""
    if not isinstance(value, str):
        return "must be an https URL string"
    if len(value) > MAX_LINK:
        return f"is {len(value)} characters long; at most {MAX_LINK}"
    parts = split_https_url(value)
    if isinstance(parts, str):
        return parts
    reason = host_problem(parts[0].lower())
    return None if reason is None else f"host {reason}"


def email_problem(value: Any) -> str | None:
    """Why a support e-mail is not `local@domain` (dot-atom local part, host-name domain)."""
    if not isinstance(value, str) or value.count("@") != 1:
        return "is not an e-mail address"
    local, domain = value.split("@")
    if len(local) > 64 or _LOCAL_PART.fullmatch(local) is None:
        return "has a bad part before @"
    if host_problem(domain.lower()) is not None:
        return "has a domain that is not a host name"
    return None


def _texts(
    check: _Check,
    value: Any,
    path: str,
    code: str,
    high: int,
    one_line: bool,
    missing_en: str,
) -> None:
    if value is None:
        check.add(code, path, "is missing")
        return
    if not isinstance(value, Mapping) or not value:
        check.add(code, path, "must be an object of language code to text, with en")
        return
    for lang, text in value.items():
        at = f"{path}.{lang}"
        if not isinstance(lang, str) or LANGUAGE_PATTERN.fullmatch(lang) is None:
            check.add(code, at, f"{_show(lang)} is not a language code such as en or pt-BR")
        elif not isinstance(text, str) or not text.strip():
            check.add(code, at, "must be a non-empty string")
        elif len(text) > high:
            check.add(code, at, f"is {len(text)} characters long; at most {high}")
        elif one_line and _LINE_BREAKS.search(text):
            check.add(code, at, "must be one line")
        elif (CONTROL_PATTERN if one_line else _DESCRIPTION_CONTROL).search(text):
            check.add(code, at, "holds a control character")
        elif MARKUP_PATTERN.search(text):
            check.add(code, at, "must be plain text, without HTML markup or references")
    if "en" not in value:
        check.add(missing_en, f"{path}.en", "has no English (en) text")


def icon_problem(icon: bytes) -> str | None:
    """Why the icon bytes are not a 256x256 PNG of at most 64 KB, or None."""
    if len(icon) > MAX_ICON_BYTES:
        return f"is {len(icon)} bytes; at most {MAX_ICON_BYTES}"
    if not icon.startswith(PNG_SIGNATURE):
        return "is not a PNG (no PNG signature)"
    offset, index, header, data = len(PNG_SIGNATURE), 0, None, []
    while True:
        if offset + 12 > len(icon):
            return "is a cut-off PNG (no IEND chunk)"
        length, kind = struct.unpack(">I4s", icon[offset : offset + 8])
        end = offset + 12 + length
        if end > len(icon):
            return f"is a cut-off PNG (chunk {kind!r} runs past the end)"
        body = icon[offset + 8 : end - 4]
        (crc,) = struct.unpack(">I", icon[end - 4 : end])
        if zlib.crc32(kind + body) != crc:
            return f"is a damaged PNG (bad CRC in chunk {kind.decode('latin-1')})"
        if index == 0:
            if kind != b"IHDR" or length != 13:
                return "is not a PNG (the first chunk is not IHDR)"
            header = struct.unpack(">IIBBBBB", body)
        elif kind == b"IDAT":
            data.append(body)
        elif kind == b"IEND":
            break
        offset, index = end, index + 1
    if header is None:  # the loop leaves only at IEND, and the first chunk was IHDR
        return "is not a PNG (the first chunk is not IHDR)"
    width, height, depth, colour, _compression, _filter, interlace = header
    if (width, height) != (ICON_SIZE, ICON_SIZE):
        return f"is {width}x{height}; it must be {ICON_SIZE}x{ICON_SIZE}"
    if depth not in _DEPTHS.get(colour, ()):
        return f"has an invalid colour type {colour} with bit depth {depth}"
    if not data:
        return "is a PNG with no image data"
    expected = height * (1 + (width * _CHANNELS[colour] * depth + 7) // 8)
    inflater = zlib.decompressobj()
    try:
        raw = inflater.decompress(b"".join(data), expected + 1)
    except zlib.error:
        return "is a damaged PNG (image data does not inflate)"
    if interlace == 0 and len(raw) != expected:
        return "is a damaged PNG (image data is not the size its header gives)"
    return None


def _check_sources(check: _Check, value: Any, manifest: Manifest) -> None:
    declared = [source.name for source in manifest.sources]
    if value is None:
        if declared:
            check.add("PLG-LISTING-SOURCE", "sources", "is missing; list every declared source")
        return
    if not isinstance(value, list):
        check.add("PLG-LISTING-SOURCE", "sources", "must be an array, one entry per source")
        return
    listed: set[str] = set()
    for index, entry in enumerate(value):
        at = f"sources[{index}]"
        if not isinstance(entry, Mapping):
            check.add("PLG-LISTING-SOURCE", at, "must be an object {name, title, page, licence}")
            continue
        check.unknown(entry, SOURCE_KEYS, at)
        name = entry.get("name")
        if name not in declared:
            check.add(
                "PLG-LISTING-SOURCE",
                f"{at}.name",
                f"is missing; name a declared source ({', '.join(declared)})"
                if name is None
                else f"{_show(name)} is not a declared source",
            )
        elif name in listed:
            check.add("PLG-LISTING-SOURCE", f"{at}.name", f"{name} is listed twice")
        else:
            listed.add(name)
        title = entry.get("title")
        if not isinstance(title, str) or not title.strip() or len(title) > MAX_TITLE:
            check.add("PLG-LISTING-SOURCE", f"{at}.title", f"must be 1 to {MAX_TITLE} characters")
        elif CONTROL_PATTERN.search(title) or MARKUP_PATTERN.search(title):
            check.add("PLG-LISTING-SOURCE", f"{at}.title", "must be one line of plain text")
        if "page" not in entry:
            check.add("PLG-LISTING-SOURCE", f"{at}.page", "is missing")
        else:
            check.link(entry["page"], f"{at}.page")
        licence = entry.get("licence")
        if not isinstance(licence, Mapping):
            check.add("PLG-LISTING-SOURCE", f"{at}.licence", "must be an object {name, url}")
            continue
        check.unknown(licence, SOURCE_LICENCE_KEYS, f"{at}.licence")
        lname = licence.get("name")
        if not isinstance(lname, str) or not lname.strip() or len(lname) > MAX_TITLE:
            check.add(
                "PLG-LISTING-SOURCE", f"{at}.licence.name", f"must be 1 to {MAX_TITLE} characters"
            )
        if "url" not in licence:
            check.add("PLG-LISTING-SOURCE", f"{at}.licence.url", "is missing")
        else:
            check.link(licence["url"], f"{at}.licence.url")
    for name in declared:
        if name not in listed:
            check.add("PLG-LISTING-SOURCE", "sources", f"declared source {name} is not listed")


def _check_links(check: _Check, value: Any) -> None:
    if value is None:
        check.add("PLG-NO-PRIVACY-POLICY", "links.privacy", "is missing")
        check.add("PLG-NO-SUPPORT-CONTACT", "links.support", "is missing")
        return
    if not isinstance(value, Mapping):
        check.add("PLG-LISTING-INVALID", "links", "must be an object {privacy, support}")
        return
    check.unknown(value, LINKS_KEYS, "links")
    privacy = value.get("privacy")
    if privacy is None or privacy == "":
        check.add("PLG-NO-PRIVACY-POLICY", "links.privacy", "is missing")
    else:
        check.link(privacy, "links.privacy")
    support = value.get("support")
    if not isinstance(support, Mapping):
        detail = "is missing" if support is None else "must be an object with url, email or both"
        check.add("PLG-NO-SUPPORT-CONTACT", "links.support", detail)
        return
    check.unknown(support, SUPPORT_KEYS, "links.support")
    url, email = support.get("url"), support.get("email")
    if url is None and email is None:
        check.add("PLG-NO-SUPPORT-CONTACT", "links.support", "has neither url nor email")
    if url is not None:
        check.link(url, "links.support.url")
    if email is not None:
        reason = email_problem(email)
        if reason is not None:
            check.add("PLG-NO-SUPPORT-CONTACT", "links.support.email", f"{_show(email)} {reason}")


def _check_examples(check: _Check, value: Any, fixture_dates: set[date]) -> None:
    code = "PLG-LISTING-EXAMPLE"
    if not isinstance(value, list) or not MIN_EXAMPLES <= len(value) <= MAX_EXAMPLES:
        check.add(code, "examples", f"must be an array of {MIN_EXAMPLES} to {MAX_EXAMPLES} days")
        if not isinstance(value, list):
            return
    seen: set[date] = set()
    for index, entry in enumerate(value):
        at = f"examples[{index}]"
        if not isinstance(entry, Mapping):
            check.add(code, at, "must be an object {date, caption}")
            continue
        check.unknown(entry, EXAMPLE_KEYS, at)
        day = parse_date(entry.get("date"))
        if day is None:
            given = entry.get("date")
            check.add(
                code,
                f"{at}.date",
                "is missing; give a day the fixtures cover, YYYY-MM-DD"
                if given is None
                else f"{_show(given)} is not a date YYYY-MM-DD",
            )
        elif day not in fixture_dates:
            check.add(code, f"{at}.date", f"{day} is not a day the fixtures cover")
        elif day in seen:
            check.add(code, f"{at}.date", f"{day} is shown twice")
        else:
            seen.add(day)
        _texts(check, entry.get("caption"), f"{at}.caption", code, MAX_CAPTION, True, code)


def check_listing(
    listing: bytes | str | Mapping[str, Any],
    manifest: Manifest,
    *,
    icon: bytes | None,
    fixture_dates: set[date],
    verified_domain: str | None = None,
) -> list[Problem]:
    """Every problem of a listing (the text or bytes of listing.json, or its parsed object) for
    this manifest, its icon bytes (None when listing/icon.png is absent) and the days the
    fixtures cover. `verified_domain`, when given, must equal `publisher.domain`."""
    check = _Check()
    doc: Any = listing
    if isinstance(listing, str | bytes):
        try:
            doc = json.loads(listing)
        except (ValueError, UnicodeDecodeError) as error:
            check.add("PLG-LISTING-INVALID", None, f"is not JSON ({error})")
            return check.problems
    if not isinstance(doc, Mapping):
        check.add("PLG-LISTING-INVALID", None, f"must be one JSON object, not {_show(doc)}")
        return check.problems
    check.unknown(doc, LISTING_KEYS, "")
    if doc.get("listing") != 1 or isinstance(doc.get("listing"), bool):
        check.add("PLG-LISTING-INVALID", "listing", "must be 1")
    if doc.get("plugin") != manifest.id:
        plugin = doc.get("plugin")
        check.add(
            "PLG-LISTING-ID",
            "plugin",
            f"is missing; set it to {manifest.id}"
            if plugin is None
            else f"{_show(plugin)} is not {manifest.id}",
        )
    publisher = doc.get("publisher")
    if not isinstance(publisher, Mapping):
        check.add("PLG-LISTING-PUBLISHER", "publisher.domain", "is missing")
    else:
        check.unknown(publisher, PUBLISHER_KEYS, "publisher")
        domain = publisher.get("domain")
        reason = host_problem(domain) if domain is not None else "is missing"
        if reason is not None:
            check.add("PLG-LISTING-PUBLISHER", "publisher.domain", reason)
        elif verified_domain is not None and domain != verified_domain:
            check.add(
                "PLG-LISTING-PUBLISHER",
                "publisher.domain",
                f"{domain} is not the organization's verified domain {verified_domain}",
            )
    _texts(
        check,
        doc.get("tagline"),
        "tagline",
        "PLG-LISTING-TAGLINE",
        MAX_TAGLINE,
        True,
        "PLG-LISTING-LANGUAGE-MISSING",
    )
    _texts(
        check,
        doc.get("description"),
        "description",
        "PLG-LISTING-DESCRIPTION",
        MAX_DESCRIPTION,
        False,
        "PLG-LISTING-LANGUAGE-MISSING",
    )
    category = doc.get("category")
    if category not in CATEGORIES:
        check.add(
            "PLG-LISTING-CATEGORY",
            "category",
            f"{'is missing; choose' if category is None else f'{_show(category)} is not'} one of "
            f"{', '.join(CATEGORIES)}",
        )
    if "keywords" in doc:
        keywords = doc["keywords"]
        if not isinstance(keywords, list):
            check.add("PLG-LISTING-KEYWORDS", "keywords", "must be an array of strings")
        else:
            if len(keywords) > MAX_KEYWORDS:
                check.add(
                    "PLG-LISTING-KEYWORDS",
                    "keywords",
                    f"has {len(keywords)} entries; at most {MAX_KEYWORDS}",
                )
            for index, word in enumerate(keywords):
                if not isinstance(word, str) or not word.strip() or len(word) > MAX_KEYWORD:
                    check.add(
                        "PLG-LISTING-KEYWORDS",
                        f"keywords[{index}]",
                        f"{_show(word)} must be 1 to {MAX_KEYWORD} characters",
                    )
                elif CONTROL_PATTERN.search(word) or MARKUP_PATTERN.search(word):
                    check.add("PLG-LISTING-KEYWORDS", f"keywords[{index}]", "must be plain text")
    _check_links(check, doc.get("links"))
    _check_sources(check, doc.get("sources"), manifest)
    _check_examples(check, doc.get("examples"), fixture_dates)
    reason = "is missing" if icon is None else icon_problem(icon)
    if reason is not None:
        check.problems.append(Problem("PLG-LISTING-ICON", f"{ICON_PATH} {reason}", path=ICON_PATH))
    return check.problems
