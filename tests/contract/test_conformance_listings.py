"""Runs every shared listing case in tests/conformance/listings/ (Listing table).

`icon` is null (no listing/icon.png), `{"base64": ...}` (the bytes) or `{"png": {"width",
"height", "padding"}}`: a generated PNG (8-bit RGB, one solid colour, non-interlaced, zlib
image data) with, when `padding` is given, a tEXt chunk `Comment\\0` followed by that many
`a` bytes after IHDR.
"""

from __future__ import annotations

import base64
import json
import struct
import zlib
from datetime import date
from pathlib import Path

import pytest

from almanac.platform.contract.listing import check_listing
from almanac.platform.contract.manifest import parse_manifest
from tests.conftest import CONFORMANCE

CASES = sorted((CONFORMANCE / "listings").glob("*.json"))


def generated_png(width: int, height: int, padding: int = 0) -> bytes:
    def chunk(kind: bytes, body: bytes) -> bytes:
        crc = struct.pack(">I", zlib.crc32(kind + body))
        return struct.pack(">I", len(body)) + kind + body + crc

    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    rows = (b"\x00" + b"\x20\x60\xa0" * width) * height
    out = b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header)
    if padding:
        out += chunk(b"tEXt", b"Comment\x00" + b"a" * padding)
    return out + chunk(b"IDAT", zlib.compress(rows)) + chunk(b"IEND", b"")


def icon_bytes(spec: dict | None) -> bytes | None:
    if spec is None:
        return None
    if "base64" in spec:
        return base64.b64decode(spec["base64"], validate=True)
    return generated_png(**spec["png"])


def test_there_are_cases() -> None:
    assert len(CASES) >= 10


@pytest.mark.parametrize("case_file", CASES, ids=lambda p: p.stem)
def test_listing_case(case_file: Path) -> None:
    case = json.loads(case_file.read_text(encoding="utf-8"))
    manifest = parse_manifest(case["manifest"])
    assert manifest.manifest is not None, manifest.problems
    listing = case["raw"] if "raw" in case else case["listing"]
    problems = check_listing(
        listing,
        manifest.manifest,
        icon=icon_bytes(case["icon"]),
        fixture_dates={date.fromisoformat(d) for d in case["fixtureDates"]},
        verified_domain=case.get("verifiedDomain"),
    )
    assert {(p.code, p.path) for p in problems} == {(e["code"], e["path"]) for e in case["expect"]}
    # An expectation with a message holds the tool to the same words.
    for wanted in (e for e in case["expect"] if "message" in e):
        said = {p.message for p in problems if (p.code, p.path) == (wanted["code"], wanted["path"])}
        assert wanted["message"] in said, (wanted, said)
