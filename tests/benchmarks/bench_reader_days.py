"""Benchmark of the reader's days: a real uvicorn process on loopback against PostgreSQL, one
reader showing 10 plug-ins (the five examples twice, with their real fixture records), a 62-day
read. Prints p50/p95 of the HTTP answer measured by wrk (one connection, then four at once,
each for BENCH_DURATION seconds, from wrk's latency distribution) and, in the same run, of the
SQL alone (visibility, `shown`, and the one statement of `day_records`), and their ratio; and
the resident memory of the API worker process (from /proc) after at least 10,000 reads of the
days in all (wrk tops the timed phases up, untimed).

Run: ALMANAC_TEST_DATABASE_URL=postgresql+psycopg://postgres@127.0.0.1:5432/postgres \
     .venv/bin/python tests/benchmarks/bench_reader_days.py
Needs `wrk` (Debian package `wrk`, installed by scripts/setup.sh). Not collected by pytest
(bench_*.py). BENCH_REQUESTS sets the SQL-alone reads (200), BENCH_DURATION the seconds of each
wrk phase (10), BENCH_WORKERS the uvicorn worker processes (1, as `almanac up` starts the API
unless told otherwise; with more, the largest worker's memory), BENCH_RSS_READS the reads before
the memory is read (10,000). The last line is one JSON object of the figures.
"""

from __future__ import annotations

import json
import math
import os
import secrets
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
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
DURATION = int(os.environ.get("BENCH_DURATION", "10"))
WORKERS = int(os.environ.get("BENCH_WORKERS", "1"))
RSS_READS = int(os.environ.get("BENCH_RSS_READS", "10000"))
CHECK_READS = 20
PARAMS = {"from": FIRST.isoformat(), "to": TODAY.isoformat(), "today": TODAY.isoformat()}
# wrk calls `done` once at the end with its latency distribution (microseconds); non-2xx/3xx
# answers are counted in summary.errors.status.
WRK_SCRIPT = """\
wrk.method = "GET"
wrk.headers["Cookie"] = "almanac_session=%(cookie)s"
done = function(summary, latency, requests)
  local e = summary.errors
  io.write(string.format("ALMANAC-WRK %%d %%d %%d %%d %%d %%d\\n",
    summary.requests, summary.duration, latency:percentile(50), latency:percentile(95),
    e.status, e.connect + e.read + e.write + e.timeout))
end
"""


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


def check_answer(base: str, cookie: str) -> int:
    """One read of the days over HTTP (also the warm-up: manifests parsed, connections pooled):
    the answer's size."""
    with httpx.Client(base_url=base, cookies={"almanac_session": cookie}, timeout=30) as client:
        for _ in range(CHECK_READS):
            answer = client.get("/api/v1/reader/days", params=PARAMS)
            assert answer.status_code == 200, answer.text
    return len(answer.content)


def wrk(url: str, script: Path, connections: int) -> tuple[float, float, int, float]:
    """wrk on `url` for DURATION seconds with `connections` open at once: p50 and p95 in
    seconds, the requests answered and their rate per second."""
    done = subprocess.run(
        ["wrk", f"-t{min(connections, 2)}", f"-c{connections}", f"-d{DURATION}s",
         "--timeout", "30s", "-s", str(script), url],
        capture_output=True, text=True, check=True, timeout=DURATION + 60,
    )  # fmt: skip
    line = next(x for x in done.stdout.splitlines() if x.startswith("ALMANAC-WRK "))
    requests, micros, p50, p95, bad_status, socket_errors = map(int, line.split()[1:])
    assert requests > 0 and bad_status == 0 and socket_errors == 0, done.stdout
    return p50 / 1e6, p95 / 1e6, requests, requests / (micros / 1e6)


def top_up(url: str, script: Path, reads: int, rate: float) -> int:
    """At least `reads` more reads of `url`, untimed (wrk, four connections, for as long as
    `rate` reads a second take, again while short): how many."""
    answered = 0
    while answered < reads:
        seconds = math.ceil((reads - answered) / rate * 1.1) + 1
        done = subprocess.run(
            ["wrk", "-t2", "-c4", f"-d{seconds}s", "--timeout", "30s", "-s", str(script), url],
            capture_output=True, text=True, check=True, timeout=seconds + 60,
        )  # fmt: skip
        line = next(x for x in done.stdout.splitlines() if x.startswith("ALMANAC-WRK "))
        count, _, _, _, bad_status, socket_errors = map(int, line.split()[1:])
        assert count > 0 and bad_status == 0 and socket_errors == 0, done.stdout
        answered += count
    return answered


def worker_pids(server: subprocess.Popen[bytes]) -> list[int]:
    """The uvicorn processes that answer requests: the server itself with one worker, else its
    spawned worker children."""
    if WORKERS == 1:
        return [server.pid]
    children = Path(f"/proc/{server.pid}/task/{server.pid}/children").read_text().split()
    return [
        int(pid) for pid in children
        if b"spawn_main" in Path(f"/proc/{pid}/cmdline").read_bytes()
    ]  # fmt: skip


def rss_mb(pid: int) -> float:
    """The process's resident memory (VmRSS) in MiB."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    raise ValueError(f"no VmRSS for process {pid}")


def main() -> None:
    server = os.environ["ALMANAC_TEST_DATABASE_URL"]
    plain = server.replace("+psycopg", "")
    name = f"almanac_bench_reader_{secrets.token_hex(3)}"
    with psycopg.connect(plain, autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}"')
    url = f"{server.rpartition('/')[0]}/{name}"
    process = None
    home = None
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
             "--no-access-log", "--workers", str(WORKERS)],
            env=env, cwd=ROOT,
        )  # fmt: skip
        base = f"http://127.0.0.1:{port}"
        for _ in range(200):
            try:
                if httpx.get(f"{base}/health", timeout=1).status_code == 200:
                    break
            except httpx.HTTPError:
                time.sleep(0.1)
        size = check_answer(base, cookie)
        rss_start = max(rss_mb(pid) for pid in worker_pids(process))
        script = Path(home) / "days.lua"
        script.write_text(WRK_SCRIPT % {"cookie": cookie}, encoding="utf-8")
        days_url = str(httpx.URL(f"{base}/api/v1/reader/days", params=PARAMS))
        h50, h95, h_count, h_rate = wrk(days_url, script, 1)
        p50, p95, p_count, p_rate = wrk(days_url, script, 4)
        reads = CHECK_READS + h_count + p_count
        reads += top_up(days_url, script, RSS_READS - reads, p_rate)
        rss = max(rss_mb(pid) for pid in worker_pids(process))
        sql = sql_alone(engine)
        engine.dispose()

        s50, s95 = percentiles(sql)
        print(
            f"10 shown plug-ins, {total} stored records, 62 days, answer {size} bytes, "
            f"{WORKERS} uvicorn worker{'s' if WORKERS > 1 else ''}"
        )
        print(f"SQL alone ({REQUESTS} reads, 1 at a time): p50 {s50 * 1000:7.2f} ms   "
              f"p95 {s95 * 1000:7.2f} ms")  # fmt: skip
        for label, q50, q95, count, rate in (
            ("1 connection ", h50, h95, h_count, h_rate),
            ("4 connections", p50, p95, p_count, p_rate),
        ):
            print(
                f"HTTP days, wrk {label} {DURATION}s: p50 {q50 * 1000:7.2f} ms   "
                f"p95 {q95 * 1000:7.2f} ms   ({count} requests, {rate:.1f}/s)"
            )
            print(f"  ratio HTTP/SQL:               p50 {q50 / s50:5.1f}x   p95 {q95 / s95:5.1f}x")
        print(
            f"API worker resident memory: {rss_start:.1f} MiB after the first {CHECK_READS} reads, "
            f"{rss:.1f} MiB after {reads} reads"
        )
        print(
            json.dumps(
                {
                    "sql_p50_ms": s50 * 1000,
                    "sql_p95_ms": s95 * 1000,
                    "http_c1_p50_ms": h50 * 1000,
                    "http_c1_p95_ms": h95 * 1000,
                    "http_c4_p50_ms": p50 * 1000,
                    "http_c4_p95_ms": p95 * 1000,
                    "http_c1_requests_per_s": h_rate,
                    "http_c4_requests_per_s": p_rate,
                    "api_worker_rss_mb_at_start": rss_start,
                    "api_worker_rss_mb_after_reads": rss,
                    "api_worker_reads": reads,
                    "sql_requests": REQUESTS,
                    "workers": WORKERS,
                    "wrk_seconds": DURATION,
                }
            )
        )
    finally:
        if process is not None:
            process.terminate()
            process.wait(10)
        if home is not None:
            shutil.rmtree(home, ignore_errors=True)
        with psycopg.connect(plain, autocommit=True) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


if __name__ == "__main__":
    main()
