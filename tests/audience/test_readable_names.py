"""A readable plug-in is named as its checked manifest names it: the reader lists read the
name without checking the whole manifest again, and must pick the same one (rule 2)."""

from __future__ import annotations

import json

import pytest

from almanac.platform.audience.visibility import ReadablePlugin
from tests.conftest import CONFORMANCE


def _readable(names: dict[str, str]) -> ReadablePlugin:
    case = json.loads((CONFORMANCE / "manifests" / "valid-small.json").read_text("utf-8"))
    doc = {**case["manifest"], "name": names}
    return ReadablePlugin(
        id=doc["id"],
        state="approved",
        audience="public",
        version_id=1,
        manifest_doc=doc,
        taken_down=False,
        takedown_message=None,
    )


@pytest.mark.parametrize(
    "names",
    [
        {"en": "ECB euro reference rates", "de": "EZB-Referenzkurse des Euro"},
        {"es": "Tasas del BCE", "de": "EZB-Referenzkurse des Euro"},
    ],
)
@pytest.mark.parametrize("language", ["en", "de-AT", "es_DO", "fr", None])
def test_a_readable_plugin_is_named_as_its_manifest_names_it(
    names: dict[str, str], language: str | None
) -> None:
    plugin = _readable(names)
    assert plugin.display_name(language) == plugin.manifest.display_name(language)
    assert dict(plugin.names) == dict(plugin.manifest.name)
