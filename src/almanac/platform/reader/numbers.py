"""Figures and changes as a reader sees them (spec "Reader presentation rules" 4, 6 and 8).

Figures are rounded on the decimal the source printed, not on the binary value the number is
stored as: 15.905 is stored as 15.904999999999999360..., yet a reader expects 15.91. The decimal
of a number is its shortest text that reads back as the same number (`repr` here, `String` in
the tool's JavaScript; the two agree digit for digit), which is what the source wrote whenever it
wrote at most 17 significant digits. It is rounded half away from zero with `Decimal` (Python's
`round` and `format` round half to even, on the binary value). The float arithmetic of a
change is done in the same order as the tool's, so both give the same text.
"""

from __future__ import annotations

import math
import re
from decimal import ROUND_HALF_UP, Context, Decimal
from typing import Any, Literal, TypedDict

# Wide enough for every digit of the largest double (309 before the point) with decimals.
_EXACT = Context(prec=400, rounding=ROUND_HALF_UP)
_CENT = Decimal("0.01")
_MILLIONTH = Decimal("0.000001")
_ONE = Decimal(1)
_ZERO = re.compile(r"0(\.0+)?")


class Change(TypedDict):
    """A change as drawn: `+0.50%` (unit `percent`) or `+25 bp` (unit `bp`)."""

    text: str
    unit: Literal["percent", "bp"]


def is_number(value: Any) -> bool:
    """A JSON number (JavaScript's `typeof value === "number"`); booleans are not numbers."""
    return isinstance(value, int | float) and not isinstance(value, bool)


def _half_away(x: float, step: Decimal) -> Decimal:
    """`x` rounded to `step`, half away from zero, on its shortest decimal text (`repr`)."""
    return Decimal(repr(float(x))).quantize(step, rounding=ROUND_HALF_UP, context=_EXACT)


def two_decimals(x: float) -> str:
    """Two decimals, half away from zero on the decimal text (15.905 -> `15.91`), every digit
    written (never an exponent, as the row schema asks), no grouping, never `-0.00` (rule 4:
    each figure "rounded to two decimals")."""
    text = str(_half_away(x, _CENT))
    return "0.00" if text == "-0.00" else text


def _signed(text: str) -> str:
    """A plus sign before a change that is neither negative nor zero."""
    if text.startswith("-") or _ZERO.fullmatch(text):
        return text
    return f"+{text}"


def basis_points(cur: float, prev: float) -> Change | None:
    """The change of a `%` figure in basis points: `(cur - prev) * 100`, first rounded to 6
    decimals (so 5.75 - 5.5 is 25, not 24.999...), then to a whole number half away from
    zero; `+25 bp`, `-10 bp`, `0 bp` (rules 4 and 6). None when the difference overflows."""
    scaled = (float(cur) - float(prev)) * 100
    if not math.isfinite(scaled):
        return None
    steadied = float(_half_away(scaled, _MILLIONTH))
    points = int(_half_away(steadied, _ONE))
    return {"text": f"{_signed(str(points))} bp", "unit": "bp"}


def percent_change(cur: float, prev: float) -> Change | None:
    """The change as a signed percent with two decimals, `(cur - prev) / |prev| * 100`:
    `+0.50%`, `-0.67%`, `0.00%` (rule 4). None when the previous figure is 0 or the ratio
    overflows."""
    prev = float(prev)
    if prev == 0:
        return None
    ratio = ((float(cur) - prev) / abs(prev)) * 100
    if not math.isfinite(ratio):
        return None
    return {"text": f"{_signed(two_decimals(ratio))}%", "unit": "percent"}


def change_of(cur: Any, prev: Any, unit: str | None) -> Change | None:
    """The change from `prev` to `cur`, measured as the unit decides (rule 8): basis points
    when the unit is `%`, else a signed percent. None without both figures (rule 4)."""
    if not (is_number(cur) and is_number(prev)):
        return None
    if unit == "%":
        return basis_points(cur, prev)
    return percent_change(cur, prev)
