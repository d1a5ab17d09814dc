"""Curve: a reader's raw records `as_of` a moment against the revisions each record has (issue
33). For each size a fresh database holds one value plug-in of 10 daily series over 62 days
(620 records), written by the store's write: a first run, then N-1 runs that each revise every
record, so each record has N contents. The API (one uvicorn worker) answers
`GET /api/v1/reader/plugins/{id}/records` for the 62 days (wrk, one connection):
- as_of the first run: the records as they stood after it, the same answer at every size, so
  only the cost of finding it among the revisions grows (goal: p95 within 2x of 1 revision);
- as_of now: the records with every content they had, an answer N times as long (shown for
  scale; no goal).
Prints the API worker's resident memory after the reads.

Run: ALMANAC_TEST_DATABASE_URL=postgresql+psycopg://postgres@127.0.0.1:5432/postgres \
     .venv/bin/python tests/benchmarks/bench_records_as_of.py [--quick] [--sizes 1,10,100]
Sizes 1, 10, 100 (--quick: 1 and 10). Needs `wrk`.
"""

from __future__ import annotations

import sys
from datetime import timedelta
from pathlib import Path

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from almanac.platform.store.engine import make_engine, upgrade_database
from tests.benchmarks.bench_reader_records import FIRST, SERIES, TODAY, reader_cookie
from tests.benchmarks.sweep import (
    ValuePlugin,
    api_server,
    arguments,
    emit,
    scratch_database,
    table,
    value_batch,
    wrk,
)

GOAL = 2.0
DAYS = 62


def main() -> None:
    args = arguments(__doc__ or "", [1, 10, 100], [1, 10])
    rows = []
    points = []
    for size in args.sizes:
        with scratch_database("as_of", args.store) as url:
            upgrade_database(url)
            engine = make_engine(url)
            plugin = ValuePlugin.approved(engine, "bench-rates", SERIES)
            plugin.write(value_batch(SERIES, DAYS, TODAY), TODAY)
            first_run = plugin.stored.moment + timedelta(seconds=30)
            for n in range(1, size):
                batch = value_batch(SERIES, DAYS, TODAY, revise_every=1, bump=n / 100)
                counts = plugin.write(batch, TODAY).counts
                assert counts.revised == SERIES * DAYS, counts
            cookie = reader_cookie(engine, [plugin.id])
            engine.dispose()
            with api_server(url) as api:
                path = f"{api.base}/api/v1/reader/plugins/{plugin.id}/records"
                cases = {
                    "first": str(httpx.URL(path, params={
                        "from": FIRST.isoformat(), "to": TODAY.isoformat(),
                        "as_of": first_run.isoformat()})),
                    "now": str(httpx.URL(path, params={
                        "from": FIRST.isoformat(), "to": TODAY.isoformat(),
                        "as_of": (plugin.stored.moment + timedelta(days=1)).isoformat()})),
                }  # fmt: skip
                sizes = {}
                with httpx.Client(cookies={"almanac_session": cookie}, timeout=120) as client:
                    for key, case_url in cases.items():
                        for _ in range(5):  # warm-up
                            answer = client.get(case_url)
                            assert answer.status_code == 200, answer.text[:300]
                        sizes[key] = len(answer.content)
                        if key == "first":
                            shown = answer.json()["records"]
                            assert len(shown) == SERIES * DAYS
                            assert all(len(r["revisions"]) == 1 for r in shown)
                headers = {"Cookie": f"almanac_session={cookie}"}
                first = wrk(cases["first"], seconds=args.seconds, headers=headers)
                now = wrk(cases["now"], seconds=args.seconds, headers=headers)
                rss = api.rss_mb()
        points.append(
            {"revisions": size, "first_bytes": sizes["first"], "first_p50_ms": first.p50_ms,
             "first_p95_ms": first.p95_ms, "now_bytes": sizes["now"], "now_p50_ms": now.p50_ms,
             "now_p95_ms": now.p95_ms, "api_rss_mb": rss}
        )  # fmt: skip
        rows.append(
            [size, sizes["first"], first.p50_ms, first.p95_ms, sizes["now"], now.p50_ms,
             now.p95_ms, rss]
        )  # fmt: skip
        print(f"  {size} revisions a record: as_of first run p95 {first.p95_ms:.2f} ms", flush=True)
    print(
        f"\nraw records of one plug-in ({SERIES * DAYS} records over {DAYS} days) as_of a "
        f"moment, {args.store}, wrk 1 connection {args.seconds} s"
    )
    table(
        ["revisions", "first bytes", "first p50", "first p95", "now bytes", "now p50",
         "now p95", "API RSS MiB"],
        rows,
    )  # fmt: skip
    ratio = points[-1]["first_p95_ms"] / points[0]["first_p95_ms"]
    verdict = "met" if ratio <= GOAL else "MISSED"
    print(f"as_of the first run, p95 at {points[-1]['revisions']} / at {points[0]['revisions']}: "
          f"{ratio:.2f}x (goal at most {GOAL}x: {verdict})")  # fmt: skip
    emit(
        f"records_as_of_{args.store}",
        args,
        {"store": args.store, "x": "revisions", "points": points, "ratio": ratio, "goal": GOAL},
    )


if __name__ == "__main__":
    main()
