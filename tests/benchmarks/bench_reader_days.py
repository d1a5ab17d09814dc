"""Benchmark of the reader's days: a real uvicorn process on loopback against PostgreSQL, one
reader showing 10 plug-ins (the five examples twice, with their real fixture records), a 62-day
read. Prints p50/p95 of the HTTP answer (one client, then four at once) and, in the same run,
of the SQL alone (visibility, `shown`, and the one statement of `day_records`), and the ratio.

Run: ALMANAC_TEST_DATABASE_URL=postgresql+psycopg://postgres@127.0.0.1:5432/postgres \
     .venv/bin/python tests/benchmarks/bench_reader_days.py
Not collected by pytest (bench_*.py). BENCH_REQUESTS sets the requests per phase (200).
"""

from __future__ import annotations

import json
import os
import secrets
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, date, datetime, timedelta
from pathlib import Path

import httpx
import psycopg
from sqlalchemy import select
from sqlalchemy.orm import Session

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from almanac.platform import accounts  # noqa: E402
from almanac.platform.accounts import Argon2Parameters, Passwords  # noqa: E402
from almanac.platform.audience import set_shown, shown_of, visible_plugins  # noqa: E402
from almanac.platform.audience.days import day_rows  # noqa: E402
from almanac.platform.store.engine import make_engine, upgrade_database  # noqa: E402
from tests.audience.helpers import example_plugin, example_records  # noqa: E402

EXAMPLES = (
    "ecb-reference-rates",
    "bcrd-reference-dollar",
    "bls-release-calendar",
    "fed-press-releases",
    "uk-bank-holidays",
)
TODAY = date(2026, 6, 30)
FIRST = TODAY - timedelta(days=61)
T0 = datetime(2026, 6, 30, 12, tzinfo=UTC)
REQUESTS = int(os.environ.get("BENCH_REQUESTS", "200"))


def shifted(records: list[dict], delta: timedelta) -> list[dict]:
    """The fixture records moved so the fixture's today is the benchmark's today."""
    out = []
    for record in records:
        moved = dict(record, date=(date.fromisoformat(record["date"]) + delta).isoformat())
        if "revises" in record:
            moved["revises"] = (date.fromisoformat(record["revises"]) + delta).isoformat()
        out.append(moved)
    return out


def fill(engine) -> tuple[str, int]:  # type: ignore[no-untyped-def]
    total = 0
    for round_ in range(2):
        for name in EXAMPLES:
            plugin = example_plugin(engine, name, T0 + timedelta(hours=round_))
            records, fixture_today = example_records(name)
            plugin.write(shifted(records, TODAY - fixture_today), TODAY)
            total += len(records)
    passwords = Passwords(Argon2Parameters.fast())
    # The server reads the real clock, so the session must be alive now.
    now = datetime.now(UTC)
    with Session(engine, expire_on_commit=False) as db:
        made = accounts.sign_up(db, "reader@example.org", "correct horse battery", passwords, now)
        accounts.verify_email(db, made.verification_token, now)
        readable = visible_plugins(db, made.account)
        set_shown(db, made.account, {f"plugins.{p.id}.shown": True for p in readable}, now)
        cookie = accounts.start_session(db, made.account, now)
        db.commit()
    return cookie, total


def percentiles(samples: list[float]) -> tuple[float, float]:
    ordered = sorted(samples)
    return statistics.median(ordered), ordered[int(len(ordered) * 0.95) - 1]


def sql_alone(engine) -> list[float]:  # type: ignore[no-untyped-def]
    """The statements of one read of the days (visibility, `shown`, the records), fetched but
    not decoded: no HTTP, JSON or rendering."""
    timings = []
    with Session(engine) as db:
        account = db.scalar(
            select(accounts.Account).where(accounts.Account.email_key == "reader@example.org")
        )
        for _ in range(REQUESTS):
            start = time.perf_counter()
            readable = visible_plugins(db, account)
            shown = shown_of(db, account, readable)
            chosen = [p for p in readable if shown[p.id].shown]
            day_rows(db.connection(), chosen, FIRST, TODAY, TODAY)
            timings.append(time.perf_counter() - start)
            db.rollback()
    return timings


def http(base: str, cookie: str, concurrency: int) -> tuple[list[float], int]:
    params = {"from": FIRST.isoformat(), "to": TODAY.isoformat(), "today": TODAY.isoformat()}

    def one(client: httpx.Client) -> tuple[float, int]:
        start = time.perf_counter()
        answer = client.get("/api/v1/reader/days", params=params)
        elapsed = time.perf_counter() - start
        assert answer.status_code == 200, answer.text
        return elapsed, len(answer.content)

    clients = [
        httpx.Client(base_url=base, cookies={"almanac_session": cookie}, timeout=30)
        for _ in range(concurrency)
    ]
    try:
        with ThreadPoolExecutor(concurrency) as pool:
            results = list(pool.map(lambda n: one(clients[n % concurrency]), range(REQUESTS)))
    finally:
        for client in clients:
            client.close()
    return [r[0] for r in results], results[0][1]


def main() -> None:
    server = os.environ["ALMANAC_TEST_DATABASE_URL"]
    plain = server.replace("+psycopg", "")
    name = f"almanac_bench_reader_{secrets.token_hex(3)}"
    with psycopg.connect(plain, autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}"')
    url = f"{server.rpartition('/')[0]}/{name}"
    process = None
    try:
        upgrade_database(url)
        engine = make_engine(url)
        cookie, total = fill(engine)
        with socket.socket() as sock:
            sock.bind(("127.0.0.1", 0))
            port = sock.getsockname()[1]
        home = tempfile.mkdtemp(prefix="almanac-bench-")
        env = {
            **os.environ,
            "ALMANAC_DATABASE_URL": url,
            "ALMANAC_HOME": home,
            "ALMANAC_PORT": str(port),
            "ALMANAC_BASE_URL": f"http://127.0.0.1:{port}",
        }
        process = subprocess.Popen(
            [sys.executable, "-m", "uvicorn", "almanac.service:api_app", "--factory",
             "--host", "127.0.0.1", "--port", str(port), "--log-level", "warning",
             "--no-access-log"],
            env=env, cwd=ROOT,
        )  # fmt: skip
        base = f"http://127.0.0.1:{port}"
        for _ in range(200):
            try:
                if httpx.get(f"{base}/health", timeout=1).status_code == 200:
                    break
            except httpx.HTTPError:
                time.sleep(0.1)
        http(base, cookie, 1)  # warm-up: manifests parsed, connections pooled
        sequential, size = http(base, cookie, 1)
        parallel, _ = http(base, cookie, 4)
        sql = sql_alone(engine)
        engine.dispose()

        s50, s95 = percentiles(sql)
        h50, h95 = percentiles(sequential)
        p50, p95 = percentiles(parallel)
        print(f"10 shown plug-ins, {total} stored records, 62 days, answer {size} bytes")
        print(f"SQL alone (1 at a time):   p50 {s50 * 1000:7.2f} ms   p95 {s95 * 1000:7.2f} ms")
        print(f"HTTP days (1 client):      p50 {h50 * 1000:7.2f} ms   p95 {h95 * 1000:7.2f} ms")
        print(f"HTTP days (4 clients):     p50 {p50 * 1000:7.2f} ms   p95 {p95 * 1000:7.2f} ms")
        print(f"ratio HTTP/SQL (1 client): p50 {h50 / s50:5.1f}x   p95 {h95 / s95:5.1f}x")
        print(
            json.dumps({"sql_p50_ms": s50 * 1000, "http_p50_ms": h50 * 1000, "requests": REQUESTS})
        )
    finally:
        if process is not None:
            process.terminate()
            process.wait(10)
        with psycopg.connect(plain, autocommit=True) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


if __name__ == "__main__":
    main()
