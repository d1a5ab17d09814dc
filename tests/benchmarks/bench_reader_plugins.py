"""Curve: a reader's 62-day read against the plug-ins the reader shows (issue 33). One database
holds the five examples registered again and again under fresh ids (the largest size's count),
each with its real fixture records written by the store's write (the set-up of
bench_reader_days.py); one reader per size shows the first N of them. The API (one uvicorn
worker) answers `GET /api/v1/reader/days` for 62 days; wrk, one connection. Goal: linear or
better (p95 per plug-in shown not growing), and at 50 plug-ins p95 under 100 ms. Prints the
API worker's resident memory after each size's reads.

Run: ALMANAC_TEST_DATABASE_URL=postgresql+psycopg://postgres@127.0.0.1:5432/postgres \
     .venv/bin/python tests/benchmarks/bench_reader_plugins.py [--quick] [--sizes 1,10,50]
Sizes 1, 10, 50 (--quick: 1 and 10). Needs `wrk`.
"""

from __future__ import annotations

import itertools
import sys
from datetime import timedelta
from pathlib import Path

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from almanac.platform.store.engine import make_engine, upgrade_database
from tests.audience.helpers import example_plugin, example_records
from tests.benchmarks.bench_reader_days import EXAMPLES, FIRST, T0, TODAY, shifted
from tests.benchmarks.bench_reader_records import reader_cookie
from tests.benchmarks.sweep import api_server, arguments, emit, scratch_database, table, wrk

GOAL_MS = 100.0


def main() -> None:
    args = arguments(__doc__ or "", [1, 10, 50], [1, 10])
    params = {"from": FIRST.isoformat(), "to": TODAY.isoformat(), "today": TODAY.isoformat()}
    rows = []
    points = []
    with scratch_database("reader_plugins", args.store) as url:
        upgrade_database(url)
        engine = make_engine(url)
        ids = []
        stored = 0
        for n in range(max(args.sizes)):
            name = EXAMPLES[n % len(EXAMPLES)]
            plugin = example_plugin(engine, name, T0 + timedelta(hours=n))
            records, fixture_today = example_records(name)
            plugin.write(shifted(records, TODAY - fixture_today), TODAY)
            ids.append(plugin.id)
            stored += len(records)
        cookies = {size: reader_cookie(engine, ids[:size]) for size in args.sizes}
        engine.dispose()
        with api_server(url) as api:
            days_url = str(httpx.URL(f"{api.base}/api/v1/reader/days", params=params))
            for size in args.sizes:
                with httpx.Client(cookies={"almanac_session": cookies[size]}, timeout=60) as c:
                    for _ in range(20):  # warm-up: manifests parsed, connections pooled
                        answer = c.get(days_url)
                        assert answer.status_code == 200, answer.text[:300]
                shown = len(answer.json()["plugins"])
                assert shown == size, (shown, size)
                c1 = wrk(
                    days_url,
                    seconds=args.seconds,
                    headers={"Cookie": f"almanac_session={cookies[size]}"},
                )
                rss = api.rss_mb()
                points.append(
                    {"plugins": size, "answer_bytes": len(answer.content), "p50_ms": c1.p50_ms,
                     "p95_ms": c1.p95_ms, "p95_ms_per_plugin": c1.p95_ms / size,
                     "per_second": c1.per_second, "requests": c1.requests, "api_rss_mb": rss}
                )  # fmt: skip
                rows.append(
                    [size, len(answer.content), c1.p50_ms, c1.p95_ms, c1.p95_ms / size,
                     c1.per_second, c1.requests, rss]
                )  # fmt: skip
                print(f"  {size} plug-ins: p95 {c1.p95_ms:.2f} ms", flush=True)
    print(
        f"\nreader's 62-day read vs plug-ins shown (the five examples, {stored:,} records "
        f"stored in all), {args.store}, wrk 1 connection {args.seconds} s"
    )
    table(
        ["plug-ins", "bytes", "p50 ms", "p95 ms", "p95 ms/plug-in", "reads/s", "reads",
         "API RSS MiB"],
        rows,
    )  # fmt: skip
    last = points[-1]
    per = [p["p95_ms_per_plugin"] for p in points]
    # Linear or better: from each size to the next the p95 grows at most as the count does.
    linear = all(
        b["p95_ms"] / a["p95_ms"] <= b["plugins"] / a["plugins"] * 1.1
        for a, b in itertools.pairwise(points)
    )
    print(
        f"p95 at {last['plugins']} plug-ins {last['p95_ms']:.1f} ms (goal under {GOAL_MS:g} ms "
        f"at 50: {'met' if last['p95_ms'] < GOAL_MS else 'MISSED'}); per plug-in "
        + " -> ".join(f"{p:.2f}" for p in per)
        + f" ms ({'linear or better' if linear else 'worse than linear'})"
    )
    emit(
        f"reader_plugins_{args.store}",
        args,
        {"store": args.store, "x": "plugins", "points": points, "goal_ms": GOAL_MS},
    )


if __name__ == "__main__":
    main()
