"""Differential test: figures and changes written by `two_decimals` and `change_of` and by the
tool's `twoDecimals` and `changeOf` under real Node 24 are the same text, for numbers of every
size (random bit patterns: tiny, huge, subnormal) and half-way decimals, both rounded on the
number's decimal text."""

from __future__ import annotations

import math
import random
import struct
from pathlib import Path

from almanac.platform.reader.numbers import change_of, two_decimals
from tests.reader.tool import call_tool

SEED = 20260613
HALF_WAYS = [15.905, 67.095, 2.675, -2.675, 1.005, 0.125, 0.005, -0.005, 99.995, 1e21, 1e-7]


def numbers(rng: random.Random, count: int) -> list[float]:
    out: list[float] = list(HALF_WAYS)
    while len(out) < count:
        pick = rng.random()
        if pick < 0.3:
            x = struct.unpack("<d", struct.pack("<Q", rng.getrandbits(64)))[0]
            if not math.isfinite(x):
                continue
        elif pick < 0.7:
            x = round(rng.uniform(-1e6, 1e6), rng.randint(0, 4)) + rng.choice([0, 0.005, -0.005])
        else:
            x = rng.uniform(-1, 1) * 10 ** rng.randint(-10, 25)
        out.append(x)
    return out


def test_figures_and_changes_are_written_alike(node: Path) -> None:
    rng = random.Random(SEED)
    xs = numbers(rng, 5000)
    assert call_tool(node, "twoDecimals", [[x] for x in xs]) == [two_decimals(x) for x in xs]
    pairs = [(rng.choice(xs), rng.choice(xs), rng.choice(["%", "USD", None])) for _ in range(3000)]
    tool = call_tool(node, "changeOf", [[cur, prev, unit] for cur, prev, unit in pairs])
    assert tool == [change_of(cur, prev, unit) for cur, prev, unit in pairs]
    assert two_decimals(15.905) == "15.91" and two_decimals(67.095) == "67.10"
