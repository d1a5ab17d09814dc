"""The manifest check and the typed Manifest (spec "Manifest (plugin.json)" and its tables)."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest

from almanac.platform.contract.manifest import (
    RESERVED_IDS,
    Licence,
    Limits,
    Links,
    Manifest,
    Series,
    Snapshot,
    Source,
    is_reserved_id,
    parse_manifest,
)
from almanac.platform.contract.problems import CATALOG
from almanac.platform.contract.windows import Window
from tests.conftest import CONFORMANCE, REPO

EXAMPLES = sorted(path.parent for path in (REPO / "examples").glob("*/plugin.json"))


def ecb_document() -> dict:
    case = json.loads((CONFORMANCE / "manifests" / "valid-small.json").read_text("utf-8"))
    return case["manifest"]


@pytest.mark.parametrize("folder", EXAMPLES, ids=lambda p: p.name)
def test_every_example_plugin_passes(folder: Path) -> None:
    result = parse_manifest((folder / "plugin.json").read_bytes(), folder_name=folder.name)
    assert result.problems == []
    assert result.ok and result.manifest is not None
    assert result.manifest.id == folder.name


def test_text_bytes_and_object_give_the_same_manifest() -> None:
    document = ecb_document()
    text = json.dumps(document)
    from_text = parse_manifest(text).manifest
    from_bytes = parse_manifest(text.encode("utf-8")).manifest
    from_object = parse_manifest(document).manifest
    assert from_text is not None
    assert from_text == from_bytes == from_object


def test_typed_manifest() -> None:
    manifest = parse_manifest(ecb_document()).manifest
    assert isinstance(manifest, Manifest)
    assert manifest.contract == 1
    assert manifest.version_tuple == (1, 0, 0)
    assert manifest.backfill == Window(90, "d")
    assert manifest.sources == (
        Source(
            name="ecb-90d",
            url="https://www.ecb.europa.eu/stats/eurofxref/eurofxref-hist-90d.xml",
            max_bytes=1_048_576,
        ),
    )
    (usd,) = manifest.series
    assert isinstance(usd, Series)
    assert (usd.key, usd.kind, usd.cadence, usd.dates) == (
        "usd",
        "value",
        "business-day",
        "observation",
    )
    assert usd.fields == ("rate",)
    assert dict(usd.field_names["rate"]) == {"en": "USD per euro", "de": "USD je Euro"}
    assert usd.change == "rate" and usd.unit == "USD"
    assert usd.snapshot == Snapshot(back=Window(90, "d"), ahead=Window(0, "d"))
    assert manifest.licence == Licence(
        holder="European Central Bank",
        attribution="ECB",
        terms="ECB statistics may be reproduced free of charge provided the source is "
        "acknowledged.",
        retain="yes",
    )
    assert manifest.links is None
    assert manifest.limits == Limits(seconds=120, megabytes=256)
    assert manifest.source_hosts() == {"www.ecb.europa.eu"}
    assert manifest.raw["id"] == "ecb-reference-rates"
    assert manifest.series_by_key() == {"usd": usd}
    with pytest.raises(dataclasses.FrozenInstanceError):
        manifest.id = "other"  # type: ignore[misc]


def test_defaults_and_optional_blocks() -> None:
    document = ecb_document()
    document["backfill"] = "all"
    document["sources"][0].pop("maxBytes")
    document["links"] = {"hosts": ["www.bundesbank.de"]}
    document["limits"] = {"seconds": 30}
    document["licence"] = {"holder": "ECB", "terms": None, "retain": "unknown"}
    manifest = parse_manifest(document).manifest
    assert manifest is not None
    assert manifest.backfill == "all"
    assert manifest.sources[0].max_bytes == 20_971_520
    assert manifest.links == Links(hosts=("www.bundesbank.de",))
    assert manifest.link_hosts() == {"www.ecb.europa.eu", "www.bundesbank.de"}
    assert manifest.limits == Limits(seconds=30, megabytes=256)
    assert manifest.licence.terms is None and manifest.licence.attribution is None


def test_problem_names_path_code_and_fix() -> None:
    document = ecb_document()
    document["sources"][0]["url"] = "http://www.ecb.europa.eu/x.xml"
    document["series"][0]["fieldNames"]["rate"]["en"] = "x" * 81
    result = parse_manifest(document)
    assert result.manifest is None and not result.ok
    by_path = {problem.path: problem for problem in result.problems}
    assert set(by_path) == {"sources[0].url", "series[0].fieldNames.rate.en"}
    url = by_path["sources[0].url"]
    assert url.code == "PLG-MANIFEST-SOURCE-URL"
    assert url.message == "sources[0].url: must start with https://"
    assert url.fix == CATALOG["PLG-MANIFEST-SOURCE-URL"].fix
    name = by_path["series[0].fieldNames.rate.en"]
    assert name.code == "PLG-MANIFEST-NAME"
    assert name.message.startswith("series[0].fieldNames.rate.en: must be 1 to 80 characters")


def test_every_problem_in_one_pass() -> None:
    document = ecb_document()
    document["sources"] = [{"name": "a", "url": "https://10.1.1.1/"} for _ in range(3)]
    document["series"] = [
        dict(ecb_document()["series"][0], key=f"s{i}", unit="x" * 17) for i in range(5)
    ]
    result = parse_manifest(document)
    paths = sorted(problem.path for problem in result.problems)
    assert paths == sorted(
        [f"sources[{i}].url" for i in range(3)]
        + ["sources[1].name", "sources[2].name"]
        + [f"series[{i}].unit" for i in range(5)]
    )


def test_not_utf8_and_byte_order_mark_are_not_json() -> None:
    text = json.dumps(ecb_document()).encode("utf-8")
    for raw in (b"\xff" + text, "\ufeff".encode() + text):
        result = parse_manifest(raw)
        assert [p.code for p in result.problems] == ["PLG-MANIFEST-INVALID-JSON"]
        assert result.problems[0].path is None


def test_reserved_ids() -> None:
    for word in ("store", "publish", "search", "markets", "api", "portal", "host", "reader",
                 "docs", "tool", "static", "login", "admin", "health"):  # fmt: skip
        assert word in RESERVED_IDS
        assert is_reserved_id(word)
    for plugin_id in ("almanac-rates", "almanacx", "alm-x", "chk-x", "test-x"):
        assert is_reserved_id(plugin_id)
    for plugin_id in ("alma", "al-m", "checks", "testing", "storefront", "ecb-reference-rates"):
        assert not is_reserved_id(plugin_id)


def test_reserved_words_are_valid_ids() -> None:
    # Each reserved word could otherwise be taken: it passes the id rule.
    document = ecb_document()
    for word in RESERVED_IDS:
        document["id"] = word
        codes = {p.code for p in parse_manifest(document).problems}
        assert codes == {"PLG-ID-RESERVED"}, word


def test_schedule_frequency_is_read_in_the_zone() -> None:
    document = ecb_document()
    document["schedule"] = "0 * * * *"
    assert parse_manifest(document).ok
    document["schedule"] = "0,30 * * * *"
    result = parse_manifest(document)
    assert [(p.code, p.path) for p in result.problems] == [
        ("PLG-SCHEDULE-TOO-FREQUENT", "schedule")
    ]
    assert "48 times a day" in result.problems[0].message


def test_an_offset_is_not_a_zone() -> None:
    document = ecb_document()
    for zone in ("+01:00", "UTC+01:00", "CET+1", "Europe/Nowhere", "localtime", "Factory"):
        document["timezone"] = zone
        codes = [p.code for p in parse_manifest(document).problems]
        assert codes == ["PLG-MANIFEST-TIMEZONE"], zone


def test_raw_is_a_json_ready_copy() -> None:
    document = ecb_document()
    manifest = parse_manifest(document).manifest
    assert manifest is not None
    document["series"][0]["key"] = "changed"
    assert json.loads(json.dumps(manifest.raw))["series"][0]["key"] == "usd"


def test_the_display_name_is_the_readers_language_then_english_then_the_first_listed() -> None:
    document = ecb_document()
    manifest = parse_manifest(document).manifest
    assert manifest is not None
    assert manifest.display_name("de-AT") == "EZB-Referenzkurse des Euro"
    assert manifest.display_name("fr") == manifest.display_name() == "ECB euro reference rates"
    document["name"] = {"es": "Tasas del BCE", "de": "EZB-Referenzkurse des Euro"}
    without_english = parse_manifest(document).manifest
    assert without_english is not None
    assert without_english.display_name("fr") == "Tasas del BCE"
