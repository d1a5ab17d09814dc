"""Windows relative to a run's today (spec "Window" and "Snapshot")."""

from __future__ import annotations

from datetime import date

import pytest

from almanac.platform.contract.manifest import Snapshot
from almanac.platform.contract.windows import (
    Window,
    parse_window,
    snapshot_range,
    window_end,
    window_start,
)


@pytest.mark.parametrize(
    ("text", "window"),
    [("90d", Window(90, "d")), ("2y", Window(2, "y")), ("0d", Window(0, "d")),
     ("9999y", Window(9999, "y")), ("0007d", Window(7, "d"))],
)  # fmt: skip
def test_parse_window(text: str, window: Window) -> None:
    assert parse_window(text) == window
    assert str(parse_window(text)) == f"{window.count}{window.unit}"


@pytest.mark.parametrize(
    "text", ["10000d", "d", "90", "-1d", "90D", "1w", " 90d", "90d\n", "٩٠d", "", "1.5y", 90, None]
)
def test_parse_window_refuses(text: object) -> None:
    with pytest.raises(ValueError, match="not a window"):
        parse_window(text)  # type: ignore[arg-type]


def test_days_count_back_from_today() -> None:
    assert window_start(date(2024, 5, 10), Window(90, "d")) == date(2024, 2, 10)
    assert window_start(date(2024, 3, 1), Window(1, "d")) == date(2024, 2, 29)
    assert window_start(date(2024, 5, 10), Window(0, "d")) == date(2024, 5, 10)


def test_years_keep_month_and_day() -> None:
    assert window_start(date(2024, 5, 10), Window(2, "y")) == date(2022, 5, 10)
    assert window_start(date(2024, 3, 1), Window(1, "y")) == date(2023, 3, 1)


def test_leap_day_becomes_28_february() -> None:
    assert window_start(date(2024, 2, 29), Window(1, "y")) == date(2023, 2, 28)
    assert window_start(date(2024, 2, 29), Window(4, "y")) == date(2020, 2, 29)
    assert window_end(date(2024, 2, 29), Window(1, "y")) == date(2025, 2, 28)
    assert window_end(date(2024, 2, 29), Window(4, "y")) == date(2028, 2, 29)


def test_far_windows_clamp_to_the_calendar() -> None:
    assert window_start(date(2024, 5, 10), Window(9999, "y")) == date.min
    assert window_start(date(2, 1, 1), Window(9999, "d")) == date.min
    assert window_end(date(9999, 1, 1), Window(1, "y")) == date.max
    assert window_end(date(9999, 12, 1), Window(9999, "d")) == date.max


def test_snapshot_range_includes_both_ends() -> None:
    today = date(2024, 5, 10)
    assert snapshot_range(today, Snapshot(Window(90, "d"), Window(0, "d"))) == (
        date(2024, 2, 10),
        today,
    )
    assert snapshot_range(today, Snapshot(Window(1, "y"), Window(3, "y"))) == (
        date(2023, 5, 10),
        date(2027, 5, 10),
    )
