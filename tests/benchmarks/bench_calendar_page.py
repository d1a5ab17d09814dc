"""Benchmark of the readers' calendar page beside the reader API's days, in the same run: a
real uvicorn process on loopback against PostgreSQL, one reader showing 10 plug-ins (the five
examples twice, with their real fixture records; the set-up of bench_reader_days.py), the
62-day agenda page and the month page against `GET /api/v1/reader/days` for the same 62 days.
Prints p50/p95 from wrk's latency distribution, one connection, then four at once.

Run: ALMANAC_TEST_DATABASE_URL=postgresql+psycopg://postgres@127.0.0.1:5432/postgres \
     .venv/bin/python tests/benchmarks/bench_calendar_page.py
Needs `wrk`. Not collected by pytest (bench_*.py). BENCH_DURATION sets each phase's seconds (10).
"""

from __future__ import annotations

import json
import os
import secrets
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx
import psycopg

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from almanac.platform.store.engine import make_engine, upgrade_database  # noqa: E402
from tests.benchmarks.bench_reader_days import (  # noqa: E402
    DURATION,
    FIRST,
    TODAY,
    WRK_SCRIPT,
    fill,
    wrk,
)

TARGETS = {
    "API days, 62 days": "/api/v1/reader/days?"
    + str(httpx.QueryParams({"from": FIRST.isoformat(), "to": TODAY.isoformat(),
                             "today": TODAY.isoformat()})),
    "calendar agenda, 62 days": f"/calendar?view=agenda&start={FIRST}&today={TODAY}",
    "calendar month (42 days)": f"/calendar?month={TODAY:%Y-%m}&today={TODAY}&day={TODAY}",
}  # fmt: skip


def main() -> None:
    server = os.environ["ALMANAC_TEST_DATABASE_URL"]
    plain = server.replace("+psycopg", "")
    name = f"almanac_bench_calendar_{secrets.token_hex(3)}"
    with psycopg.connect(plain, autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}"')
    url = f"{server.rpartition('/')[0]}/{name}"
    process = None
    home = None
    try:
        upgrade_database(url)
        engine = make_engine(url)
        cookie, total = fill(engine)
        engine.dispose()
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
        sizes = {}
        with httpx.Client(base_url=base, cookies={"almanac_session": cookie}, timeout=30) as c:
            for label, path in TARGETS.items():
                for _ in range(20):  # warm-up: manifests parsed, templates compiled, pool full
                    answer = c.get(path)
                    assert answer.status_code == 200, answer.text[:500]
                sizes[label] = len(answer.content)
        script = Path(home) / "days.lua"
        script.write_text(WRK_SCRIPT % {"cookie": cookie}, encoding="utf-8")
        results = {}
        print(f"10 shown plug-ins, {total} stored records")
        for connections in (1, 4):
            for label, path in TARGETS.items():
                q50, q95, count, rate = wrk(base + path, script, connections)
                results[f"{label} c{connections}"] = {"p50_ms": q50 * 1000, "p95_ms": q95 * 1000}
                print(
                    f"{label:26} wrk c{connections} {DURATION}s: p50 {q50 * 1000:7.2f} ms  "
                    f"p95 {q95 * 1000:7.2f} ms  ({count} requests, {rate:.1f}/s, "
                    f"{sizes[label]} bytes)"
                )
        print(json.dumps(results))
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
