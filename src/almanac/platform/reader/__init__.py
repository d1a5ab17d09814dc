"""What a reader sees (spec "Reader presentation rules"): the rendered day rows the reader API
serves, the same rows as the tool's `renderDays`."""

from almanac.platform.reader.numbers import change_of, two_decimals
from almanac.platform.reader.records import from_stored
from almanac.platform.reader.render import (
    MAX_DAYS,
    STATUSES,
    Day,
    RenderRequestError,
    attribution_of,
    render_days,
)
from almanac.platform.reader.text import row_words
from almanac.platform.reader.words import UNIT_WORDS, WORDS, spoken

__all__ = [
    "MAX_DAYS",
    "STATUSES",
    "UNIT_WORDS",
    "WORDS",
    "Day",
    "RenderRequestError",
    "attribution_of",
    "change_of",
    "from_stored",
    "render_days",
    "row_words",
    "spoken",
    "two_decimals",
]
