"""Curve: a reader's calendar feed against the records stored (issue 33). For each size a fresh
database holds one value plug-in of 10 daily series ending today, size/10 days long, written by
the store's write (a first run, then 1% revised); a reader shows it and has a feed address.
The API (one uvicorn worker) answers `GET /api/v1/feeds/{secret}.ics` (62 days back, 366
ahead, the default window):
- drawn: each request a window not asked before (`ahead` 366, 365, ...), so each is drawn from
  the store (one after another);
- kept: the same feed again without If-None-Match, answered from the drawn bytes kept by ETag
  (wrk, one connection);
- 304: a calendar app's poll with the ETag it holds (wrk, four connections): goal at least
  1,000 a second; beside it, in the same run, `GET /health` (one `SELECT 1`) the same way:
  about the most a worker answers on this machine with a round trip to the database.
Prints the API worker's resident memory after the warm-up and after the reads.

Run: ALMANAC_TEST_DATABASE_URL=postgresql+psycopg://postgres@127.0.0.1:5432/postgres \
     .venv/bin/python tests/benchmarks/bench_calendar_feed.py [--quick] [--sizes 10000,100000] \
     [--api-workers N]
`--api-workers 2` starts the API as `ALMANAC_API_WORKERS=2` does (its line is kept apart, in
`calendar_feed_postgresql_2_workers.json`).
Sizes 10,000 and 100,000 (--quick: 10,000 and 50,000). Needs `wrk`.
"""

from __future__ import annotations

import sys
from datetime import UTC, datetime
from pathlib import Path

import httpx
from sqlalchemy import Engine, select
from sqlalchemy.orm import Session

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from almanac.platform import accounts, feeds
from almanac.platform.store.engine import make_engine, upgrade_database
from tests.benchmarks.bench_reader_records import SERIES, reader_cookie
from tests.benchmarks.sweep import (
    ValuePlugin,
    api_server,
    arguments,
    emit,
    scratch_database,
    table,
    timed_gets,
    value_batch,
    wrk,
)

GOAL_304 = 1000.0
DRAWN = 15


def feed_secret(engine: Engine, plugin_ids: list[str]) -> str:
    """A reader who shows these plug-ins, with a feed address: its secret."""
    reader_cookie(engine, plugin_ids)
    now = datetime.now(UTC)
    with Session(engine, expire_on_commit=False) as db:
        account = db.scalars(
            select(accounts.Account).order_by(accounts.Account.id.desc()).limit(1)
        ).one()
        made = feeds.create_feed(db, account, now)
        db.commit()
    return made.secret


def main() -> None:
    args = arguments(__doc__ or "", [10_000, 100_000], [10_000, 50_000])
    today = datetime.now(UTC).date()  # the API's window is around the real today
    rows = []
    points = []
    for size in args.sizes:
        with scratch_database("feed", args.store) as url:
            upgrade_database(url)
            engine = make_engine(url)
            plugin = ValuePlugin.approved(engine, "bench-rates", SERIES)
            days = size // SERIES
            plugin.write(value_batch(SERIES, days, today), today)
            plugin.write(value_batch(SERIES, days, today, revise_every=100), today)
            secret = feed_secret(engine, [plugin.id])
            engine.dispose()
            with (
                api_server(url, args.api_workers) as api,
                httpx.Client(base_url=api.base, timeout=120) as client,
            ):
                path = f"/api/v1/feeds/{secret}.ics"
                for _ in range(5):  # warm-up: manifest parsed, connections pooled
                    answer = client.get(path)
                    assert answer.status_code == 200, answer.text[:300]
                etag = answer.headers["etag"]
                rss_start = api.rss_mb()
                drawn = timed_gets(client, [f"{path}?ahead={366 - n}" for n in range(DRAWN)])
                kept = wrk(api.base + path, seconds=args.seconds)
                polls = wrk(
                    api.base + path,
                    seconds=args.seconds,
                    connections=4,
                    headers={"If-None-Match": etag},
                    status=304,
                )
                health = wrk(api.base + "/health", seconds=args.seconds, connections=4)
                rss_end = api.rss_mb()
        point = {
            "records": size,
            "feed_bytes": len(answer.content),
            "drawn_p50_ms": drawn.p50_ms,
            "drawn_p95_ms": drawn.p95_ms,
            "kept_p50_ms": kept.p50_ms,
            "kept_p95_ms": kept.p95_ms,
            "not_modified_per_second": polls.per_second,
            "not_modified_p95_ms": polls.p95_ms,
            "health_per_second": health.per_second,
            "api_rss_mb_start": rss_start,
            "api_rss_mb_end": rss_end,
        }
        points.append(point)
        rows.append(
            [size, len(answer.content), drawn.p50_ms, drawn.p95_ms, kept.p50_ms, kept.p95_ms,
             polls.per_second, polls.p95_ms, health.per_second, rss_start, rss_end]
        )  # fmt: skip
        print(f"  {size:,} records: drawn p95 {drawn.p95_ms:.1f} ms, "
              f"304s {polls.per_second:,.0f}/s", flush=True)  # fmt: skip
    print(
        f"\nreader's calendar feed of one value plug-in ({SERIES} daily series), {args.store}, "
        f"{args.api_workers} API worker(s); "
        f"drawn: {DRAWN} new windows one after another; kept: wrk 1 connection; 304: wrk 4 "
        f"connections; {args.seconds} s each"
    )
    table(
        ["records", "bytes", "drawn p50", "drawn p95", "kept p50", "kept p95", "304/s",
         "304 p95", "health/s", "RSS MiB start", "RSS MiB end"],
        rows,
    )  # fmt: skip
    slowest = min(p["not_modified_per_second"] for p in points)
    print(f"304s a second, fewest: {slowest:,.0f} (goal at least {GOAL_304:,.0f}: "
          f"{'met' if slowest >= GOAL_304 else 'MISSED'})")  # fmt: skip
    workers = f"_{args.api_workers}_workers" if args.api_workers > 1 else ""
    emit(
        f"calendar_feed_{args.store}{workers}",
        args,
        {
            "store": args.store,
            "x": "records",
            "points": points,
            "goal_304_per_second": GOAL_304,
            "api_workers": args.api_workers,
        },
    )


if __name__ == "__main__":
    main()
