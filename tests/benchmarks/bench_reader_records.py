"""Curve: a reader's 62-day read against the records stored per plug-in (issue 33). For each size
a fresh database holds one value plug-in of 10 daily series whose history is size/10 days long,
written by the store's write (a first run, then the same batch with 1% revised: values with
revisions); a reader shows it. The API (one uvicorn worker) answers `GET /api/v1/reader/days`
for the last 62 days; wrk, one connection. Goal: flat, p95 at the largest size within 1.5x of
the smallest. Prints the API worker's resident memory after the warm-up and after the reads.

Run: ALMANAC_TEST_DATABASE_URL=postgresql+psycopg://postgres@127.0.0.1:5432/postgres \
     .venv/bin/python tests/benchmarks/bench_reader_records.py [--quick] [--sizes 10000,100000]
     (--store sqlite: the embedded default)
Sizes 10,000, 100,000, 1,000,000 (--quick: 10,000 and 100,000). Needs `wrk`.
"""

from __future__ import annotations

import sys
from datetime import UTC, date, datetime, timedelta
from pathlib import Path

import httpx
from sqlalchemy import Engine
from sqlalchemy.orm import Session

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from almanac.platform import accounts
from almanac.platform.accounts import Argon2Parameters, Passwords
from almanac.platform.audience import set_shown, visible_plugins
from almanac.platform.store.engine import make_engine, upgrade_database
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

SERIES = 10
TODAY = date(2026, 6, 30)
FIRST = TODAY - timedelta(days=61)
GOAL = 1.5


def reader_cookie(engine: Engine, plugin_ids: list[str]) -> str:
    """A verified reader who shows exactly these plug-ins, signed in: the session cookie."""
    now = datetime.now(UTC)  # the server reads the real clock: the session must be alive now
    wanted = set(plugin_ids)
    with Session(engine, expire_on_commit=False) as db:
        email = f"reader{len(wanted)}-{now.timestamp():.0f}@example.org"
        made = accounts.sign_up(
            db, email, "correct horse battery", Passwords(Argon2Parameters.fast()), now
        )
        accounts.verify_email(db, made.verification_token, now)
        readable = visible_plugins(db, made.account)
        set_shown(
            db, made.account, {f"plugins.{p.id}.shown": p.id in wanted for p in readable}, now
        )
        cookie = accounts.start_session(db, made.account, now)
        db.commit()
    return cookie


def main() -> None:
    args = arguments(__doc__ or "", [10_000, 100_000, 1_000_000], [10_000, 100_000])
    params = {"from": FIRST.isoformat(), "to": TODAY.isoformat(), "today": TODAY.isoformat()}
    rows = []
    points = []
    for size in args.sizes:
        with scratch_database("reader_records", args.store) as url:
            upgrade_database(url)
            engine = make_engine(url)
            plugin = ValuePlugin.approved(engine, "bench-rates", SERIES)
            days = size // SERIES
            plugin.write(value_batch(SERIES, days, TODAY), TODAY)
            revised = plugin.write(value_batch(SERIES, days, TODAY, revise_every=100), TODAY)
            cookie = reader_cookie(engine, [plugin.id])
            engine.dispose()
            with api_server(url) as api:
                days_url = str(httpx.URL(f"{api.base}/api/v1/reader/days", params=params))
                with httpx.Client(cookies={"almanac_session": cookie}, timeout=60) as client:
                    for _ in range(20):  # warm-up: manifest parsed, connections pooled
                        answer = client.get(days_url)
                        assert answer.status_code == 200, answer.text[:300]
                rss_start = api.rss_mb()
                c1 = wrk(
                    days_url,
                    seconds=args.seconds,
                    headers={"Cookie": f"almanac_session={cookie}"},
                )
                rss_end = api.rss_mb()
        point = {
            "records": size,
            "revised": revised.counts.revised,
            "answer_bytes": len(answer.content),
            "p50_ms": c1.p50_ms,
            "p95_ms": c1.p95_ms,
            "per_second": c1.per_second,
            "requests": c1.requests,
            "api_rss_mb_start": rss_start,
            "api_rss_mb_end": rss_end,
        }
        points.append(point)
        rows.append(
            [size, revised.counts.revised, len(answer.content), c1.p50_ms, c1.p95_ms,
             c1.per_second, c1.requests, rss_start, rss_end]
        )  # fmt: skip
        print(f"  {size:,} records: p95 {c1.p95_ms:.2f} ms", flush=True)
    print(
        f"\nreader's 62-day read of one value plug-in ({SERIES} daily series, 1% revised), "
        f"{args.store}, wrk 1 connection {args.seconds} s"
    )
    table(
        ["records", "revised", "bytes", "p50 ms", "p95 ms", "reads/s", "reads", "RSS MiB start",
         "RSS MiB end"],
        rows,
    )  # fmt: skip
    ratio = points[-1]["p95_ms"] / points[0]["p95_ms"]
    verdict = "met" if ratio <= GOAL else "MISSED"
    print(f"p95 at {points[-1]['records']:,} / at {points[0]['records']:,}: {ratio:.2f}x "
          f"(goal at most {GOAL}x: {verdict})")  # fmt: skip
    emit(
        f"reader_records_{args.store}",
        args,
        {"store": args.store, "x": "records", "points": points, "ratio": ratio, "goal": GOAL},
    )


if __name__ == "__main__":
    main()
