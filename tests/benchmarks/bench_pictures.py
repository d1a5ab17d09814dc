"""Figures for issue 37 (a reader's pictures), measured in one run on one database: a year's
chart data read (one series of a 10-series daily plug-in, filled by the reader rules) and an
as-of days read (a month of all 10 series drawn from the records as they stood at a past
moment), each against today's days read of the same month (`day_sources` + `render_days`,
uncached), the baseline. The plug-in holds `--sizes` days of history (default 730) for each
series, written in a first run and then revised by 3 more runs, so every record has 4
contents; the as-of moment is after the second run. Prints the median and p95 of each read
(milliseconds) and the ratio of the medians to the baseline.

Run: ALMANAC_TEST_DATABASE_URL=postgresql+psycopg://postgres@127.0.0.1:5432/postgres \
     .venv/bin/python tests/benchmarks/bench_pictures.py [--store sqlite] [--sizes 730]
"""

from __future__ import annotations

import statistics
import sys
import time
from collections.abc import Callable
from datetime import date, timedelta
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from almanac.platform.audience.days import day_sources, wanted_series
from almanac.platform.audience.visibility import ReadablePlugin
from almanac.platform.reader import from_stored, render_days
from almanac.platform.reader.chart import chart_span, series_chart
from almanac.platform.store.engine import make_engine, upgrade_database
from almanac.platform.store.reading import records_for_days_as_of, series_chart_records
from tests.benchmarks.sweep import (
    ValuePlugin,
    analyze,
    arguments,
    emit,
    scratch_database,
    table,
    value_batch,
)

SERIES = 10
TODAY = date(2026, 6, 30)
FIRST = date(2026, 6, 1)
REPEATS = 40


def timed(read: Callable[[], object]) -> tuple[float, float]:
    read()
    spent = []
    for _ in range(REPEATS):
        start = time.perf_counter()
        read()
        spent.append((time.perf_counter() - start) * 1000)
    spent.sort()
    return statistics.median(spent), spent[int(len(spent) * 0.95) - 1]


def main() -> None:
    args = arguments(__doc__ or "", [730], [365])
    days = args.sizes[0]
    with scratch_database("pictures", args.store) as url:
        upgrade_database(url)
        engine = make_engine(url)
        plugin = ValuePlugin.approved(engine, "bench-pictures", SERIES)
        plugin.write(value_batch(SERIES, days, TODAY), TODAY)
        plugin.write(value_batch(SERIES, days, TODAY, revise_every=3, bump=0.1), TODAY)
        moment = plugin.stored.moment + timedelta(seconds=30)
        for n in (2, 3):
            plugin.write(value_batch(SERIES, days, TODAY, revise_every=3, bump=n / 10), TODAY)
        analyze(url)
        readable = ReadablePlugin(
            plugin.id, "approved", "public", plugin.stored.version_id, plugin.stored.doc, False,
            None,
        )  # fmt: skip
        manifest = plugin.manifest
        series = manifest.series[0]

        def today_days() -> object:
            with engine.connect() as conn:
                found = day_sources(conn, [readable], FIRST, TODAY, TODAY)
                return render_days(manifest, found.records_of(plugin.id), from_date=FIRST,
                                   to_date=TODAY, today=TODAY)  # fmt: skip

        def as_of_days() -> object:
            with engine.connect() as conn:
                wanted = wanted_series([readable], {})
                stood = records_for_days_as_of(
                    conn, [plugin.id], wanted, FIRST, TODAY, TODAY, moment
                )
                return render_days(manifest, [from_stored(r) for r in stood], from_date=FIRST,
                                   to_date=TODAY, today=TODAY)  # fmt: skip

        def year_chart() -> object:
            first, last = chart_span(series, "year", TODAY, None)
            with engine.connect() as conn:
                stored = series_chart_records(conn, plugin.id, series.key, "value", first, last)
            shaped = [from_stored(r) for r in stored]
            return series_chart(
                manifest, shaped, series=series, field=None, span="year", first=first, last=last,
                today=TODAY,
            )  # fmt: skip

        baseline = timed(today_days)
        as_of = timed(as_of_days)
        chart = timed(year_chart)
        engine.dispose()
    rows = [
        ["today's days (a month, 10 series)", *baseline, 1.0],
        ["as-of days (same month)", *as_of, as_of[0] / baseline[0]],
        ["a year's chart data (1 series)", *chart, chart[0] / baseline[0]],
    ]
    print(f"store {args.store}; {SERIES} series x {days} days, 4 contents a record")
    table(["read", "median ms", "p95 ms", "x baseline"], rows)
    emit(
        "pictures",
        args,
        {
            "store": args.store,
            "days": days,
            "today_days_ms": round(baseline[0], 2),
            "as_of_days_ms": round(as_of[0], 2),
            "year_chart_ms": round(chart[0], 2),
        },
    )


if __name__ == "__main__":
    main()
