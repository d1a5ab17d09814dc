"""The app's own words and how a screen reader says a unit (spec "Reader presentation rules"
8 and 10). English only at present; the same words as the tool's `WORDS` and `UNIT_WORDS`."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType


@dataclass(frozen=True, slots=True)
class AppWords:
    """The app's own words (rule 10: English only at present)."""

    scheduled: str = "Scheduled"
    last_rate: str = "Last rate"
    rate_of: str = "Rate of"
    moved_to: str = "Moved to"
    cancelled: str = "Cancelled"
    was: str = "Was"
    held: str = "Held"
    could_not_refresh_since: str = "Could not refresh since"
    could_not_refresh: str = "Could not refresh"
    could_not_reach: str = "Could not reach Almanac"
    not_updating: str = "Not updating"


WORDS = AppWords()

UNIT_WORDS: Mapping[str, str] = MappingProxyType(
    {"DOP": "Dominican pesos", "USD": "US dollars", "EUR": "euros", "%": "percent"}
)
"""Units a screen reader says as words (rule 8); any other unit is said as written."""


def spoken(text: str, unit: str | None) -> str:
    """What a screen reader says for a figure: its two-decimal text, then the unit in words
    (rule 8: `DOP`, `USD`, `EUR` and `%` as words, others as written); no unit: the text."""
    if not unit:
        return text
    return f"{text} {UNIT_WORDS.get(unit, unit)}"
