"""Windows of dates relative to a run's today (spec "Resources and their fields": Window, Snapshot).

A Window is a string of 1 to 4 digits followed by `d` (days) or `y` (years). A year window
goes back to the same month and day N years earlier; a 29 February with no such day in the
target year becomes 28 February.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import date, timedelta
from typing import TYPE_CHECKING, Literal

if TYPE_CHECKING:
    from almanac.platform.contract.manifest import Snapshot

WINDOW_PATTERN = re.compile(r"[0-9]{1,4}[dy]")

WindowUnit = Literal["d", "y"]


@dataclass(frozen=True, slots=True)
class Window:
    """A span of `count` days (`unit` "d") or years (`unit` "y")."""

    count: int
    unit: WindowUnit

    def __str__(self) -> str:
        return f"{self.count}{self.unit}"


def parse_window(text: str) -> Window:
    """The Window written as `text` ("90d", "2y"); ValueError naming the rule otherwise.

    Spec "Window": 1 to 4 digits followed by `d` or `y`.
    """
    if not isinstance(text, str) or WINDOW_PATTERN.fullmatch(text) is None:
        raise ValueError(
            f"{text!r} is not a window: write 1 to 4 digits followed by d (days) or y (years)"
        )
    return Window(count=int(text[:-1]), unit=text[-1])  # type: ignore[arg-type]


def _shift_years(day: date, years: int) -> date:
    year = day.year + years
    if not 1 <= year <= 9999:
        return date.min if years < 0 else date.max
    try:
        return day.replace(year=year)
    except ValueError:
        # 29 February in a year without one.
        return day.replace(year=year, day=28)


def window_start(today: date, window: Window) -> date:
    """The first date of `window` counted back from `today` (Window rule).

    Days: `today - count` days. Years: the same month and day `count` years earlier
    (29 February -> 28 February). Clamped to `date.min` far in the past.
    """
    if window.unit == "d":
        try:
            return today - timedelta(days=window.count)
        except OverflowError:
            return date.min
    return _shift_years(today, -window.count)


def window_end(today: date, window: Window) -> date:
    """The last date of `window` counted forward from `today` (the `ahead` side of a Snapshot)."""
    if window.unit == "d":
        try:
            return today + timedelta(days=window.count)
        except OverflowError:
            return date.max
    return _shift_years(today, window.count)


def snapshot_range(today: date, snapshot: Snapshot) -> tuple[date, date]:
    """The dates a snapshot run restates in full: [today - back, today + ahead], both included.

    Spec "Snapshot": the window of dates from today minus `back` to today plus `ahead`.
    """
    return window_start(today, snapshot.back), window_end(today, snapshot.ahead)
