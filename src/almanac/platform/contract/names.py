"""Names objects (spec "Names": an object keyed by language code) and the one a reader sees in
their language ("Reader presentation rules" 2)."""

from __future__ import annotations

import re
from collections.abc import Mapping

_SUBTAG_SEPARATOR = re.compile(r"[-_]")


def language_key(language: str | None) -> str:
    """The key the app looks a reader's language up by: its first subtag, lowercased
    (`es-DO` reads `es`; rule 2: "the app looks up two letters only"); no language reads `en`."""
    return _SUBTAG_SEPARATOR.split((language or "en").lower())[0]


def pick_name(names: Mapping[str, str] | None, language: str | None) -> str | None:
    """The name a reader sees (rule 2): their language, then `en`, then the first listed
    (in the manifest's own order). None when there is no name at all."""
    if not names:
        return None
    name = names.get(language_key(language))
    if isinstance(name, str):
        return name
    english = names.get("en")
    if isinstance(english, str):
        return english
    return next(iter(names.values()))
