"""What the size-sweeping benchmarks (issue 33's curves) share: the command line (`--quick`
cuts the sizes, `--sizes` names them), a scratch PostgreSQL database, the API under uvicorn
on loopback, wrk with any headers, the API worker's resident memory, a large value plug-in
written by the store's own write, the table printed and the one JSON line each ends with
(`tests/benchmarks/draw_curves.py` reads it). Not a benchmark itself."""

from __future__ import annotations

import argparse
import json
import os
import secrets
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from typing import Any

import httpx
import psycopg
from sqlalchemy import Engine

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from almanac.platform.contract.manifest import Manifest, parse_manifest  # noqa: E402
from almanac.platform.lifecycle import RunTrigger  # noqa: E402
from almanac.platform.store.write import RunFacts, WriteResult, write_run  # noqa: E402
from tests.audience.helpers import StoredPlugin  # noqa: E402
from tests.benchmarks.bench_reader_days import rss_mb  # noqa: E402

RESULTS = ROOT / "docs" / "performance" / "results"
"""Where each benchmark also keeps its JSON line (`<curve>.json`), for draw_curves.py."""
T0 = datetime(2026, 6, 30, 12, tzinfo=UTC)


def arguments(description: str, full: Sequence[int], quick: Sequence[int]) -> argparse.Namespace:
    """`--quick` (the cut sizes), `--sizes 1,2,3`, `--seconds` of each wrk phase; `.sizes`."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--quick", action="store_true", help=f"sizes {list(quick)}")
    parser.add_argument("--sizes", help=f"comma-separated sizes (default {list(full)})")
    parser.add_argument("--seconds", type=int, default=None, help="seconds of each wrk phase")
    parser.add_argument("--store", choices=("postgresql", "sqlite"), default="postgresql")
    parser.add_argument(
        "--api-workers",
        type=int,
        default=1,
        metavar="N",
        help="uvicorn workers of the API (ALMANAC_API_WORKERS; 1, as `almanac up` starts it)",
    )
    parser.add_argument(
        "--keep",
        metavar="NAME",
        help="PostgreSQL: use the database NAME, made if missing and kept at the end, so a "
        "later run (another commit's) measures the same data without making it again",
    )
    args = parser.parse_args()
    if args.sizes:
        args.sizes = [int(s.replace("_", "")) for s in args.sizes.split(",")]
    else:
        args.sizes = list(quick if args.quick else full)
    if args.seconds is None:
        args.seconds = 3 if args.quick else 8
    return args


@contextmanager
def scratch_database(
    prefix: str, store: str = "postgresql", keep: str | None = None
) -> Iterator[str]:
    """A new empty database (PostgreSQL from ALMANAC_TEST_DATABASE_URL, or an embedded SQLite
    file), dropped at the end: its URL. `keep` names a PostgreSQL database used as it is
    (made when missing) and never dropped."""
    if keep is not None:
        yield _kept_database(keep)
        return
    if store == "sqlite":
        home = tempfile.mkdtemp(prefix=f"almanac-{prefix}-")
        try:
            yield f"sqlite:///{home}/almanac.db"
        finally:
            shutil.rmtree(home, ignore_errors=True)
        return
    server = os.environ["ALMANAC_TEST_DATABASE_URL"]
    plain = server.replace("+psycopg", "")
    name = f"almanac_bench_{prefix}_{secrets.token_hex(3)}"
    with psycopg.connect(plain, autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}"')
    try:
        yield f"{server.rpartition('/')[0]}/{name}"
    finally:
        with psycopg.connect(plain, autocommit=True) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def _kept_database(name: str) -> str:
    server = os.environ["ALMANAC_TEST_DATABASE_URL"]
    plain = server.replace("+psycopg", "")
    with psycopg.connect(plain, autocommit=True) as conn:
        if conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", (name,)).fetchone() is None:
            conn.execute(f'CREATE DATABASE "{name}"')
    return f"{server.rpartition('/')[0]}/{name}"


def analyze(database_url: str) -> None:
    """Statistics for the planner, as PostgreSQL's autovacuum keeps them on a database that
    grew (a benchmark's database is minutes old; without them a join of thousands of rows
    is planned as one of a few)."""
    if not database_url.startswith("postgresql"):
        return
    with psycopg.connect(database_url.replace("+psycopg", ""), autocommit=True) as conn:
        conn.execute("ANALYZE")


@dataclass(frozen=True)
class Api:
    base: str
    pid: int
    workers: int = 1

    def rss_mb(self) -> float:
        """The worker's resident memory; with several, the largest worker's (uvicorn's
        supervisor answers nothing itself)."""
        if self.workers == 1:
            return rss_mb(self.pid)
        children = Path(f"/proc/{self.pid}/task/{self.pid}/children").read_text().split()
        return max(rss_mb(int(child)) for child in children)


@contextmanager
def api_server(database_url: str, workers: int = 1) -> Iterator[Api]:
    """The service's API (`almanac.service:api_app`, one uvicorn worker as `almanac up` starts
    it, or `workers`) on a free loopback port, answering /health."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    home = tempfile.mkdtemp(prefix="almanac-bench-")
    env = {k: v for k, v in os.environ.items() if not k.startswith("ALMANAC_")}
    env |= {
        "ALMANAC_DATABASE_URL": database_url,
        "ALMANAC_HOME": home,
        "ALMANAC_PORT": str(port),
        "ALMANAC_BASE_URL": f"http://127.0.0.1:{port}",
        "PYTHONPATH": os.pathsep.join(p for p in (str(ROOT / "src"), str(ROOT)) if p),
    }
    process = subprocess.Popen(
        [sys.executable, "-m", "uvicorn", "almanac.service:api_app", "--factory",
         "--host", "127.0.0.1", "--port", str(port), "--log-level", "warning",
         "--no-access-log", *(["--workers", str(workers)] if workers > 1 else [])],
        env=env, cwd=ROOT,
    )  # fmt: skip
    base = f"http://127.0.0.1:{port}"
    try:
        for _ in range(300):
            try:
                if httpx.get(f"{base}/health", timeout=1).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            time.sleep(0.1)
        else:
            raise RuntimeError("the API did not start")
        yield Api(base, process.pid, workers)
    finally:
        process.terminate()
        process.wait(10)
        shutil.rmtree(home, ignore_errors=True)


# wrk calls `done` once at the end with its latency distribution (microseconds); answers other
# than the expected status are counted by `response`.
_WRK_SCRIPT = """\
wrk.method = "GET"
%(headers)s
local unexpected = 0
response = function(status, headers, body)
  if status ~= %(status)d then unexpected = unexpected + 1 end
end
done = function(summary, latency, requests)
  local e = summary.errors
  io.write(string.format("ALMANAC-WRK %%d %%d %%d %%d %%d %%d\\n",
    summary.requests, summary.duration, latency:percentile(50), latency:percentile(95),
    e.status, e.connect + e.read + e.write + e.timeout))
end
"""


@dataclass(frozen=True)
class Latency:
    p50_ms: float
    p95_ms: float
    requests: int
    per_second: float


def wrk(
    url: str,
    *,
    seconds: int,
    connections: int = 1,
    headers: dict[str, str] | None = None,
    status: int = 200,
) -> Latency:
    """wrk on `url` with these request headers, `connections` open at once: p50 and p95 from
    its latency distribution, requests and their rate. Fails on any socket error or answer
    of another status class than 2xx/3xx."""
    lines = "\n".join(
        f"wrk.headers[{json.dumps(k)}] = {json.dumps(v)}" for k, v in (headers or {}).items()
    )
    with tempfile.NamedTemporaryFile("w", suffix=".lua", delete=False) as script:
        script.write(_WRK_SCRIPT % {"headers": lines, "status": status})
    try:
        done = subprocess.run(
            ["wrk", f"-t{min(connections, 2)}", f"-c{connections}", f"-d{seconds}s",
             "--timeout", "30s", "-s", script.name, url],
            capture_output=True, text=True, check=True, timeout=seconds + 120,
        )  # fmt: skip
    finally:
        os.unlink(script.name)
    line = next(x for x in done.stdout.splitlines() if x.startswith("ALMANAC-WRK "))
    count, micros, p50, p95, bad_status, socket_errors = map(int, line.split()[1:])
    assert count > 0 and bad_status == 0 and socket_errors == 0, done.stdout
    return Latency(p50 / 1000, p95 / 1000, count, count / (micros / 1e6))


def timed_gets(client: httpx.Client, paths: Sequence[str], status: int = 200) -> Latency:
    """Each path read once, one after another: p50 and p95 (for answers no cache may keep)."""
    took = []
    start = time.perf_counter()
    for path in paths:
        t = time.perf_counter()
        answer = client.get(path)
        took.append(time.perf_counter() - t)
        assert answer.status_code == status, answer.text[:300]
    ordered = sorted(took)
    p95 = ordered[max(0, int(len(ordered) * 0.95) - 1)]
    total = time.perf_counter() - start
    return Latency(statistics.median(ordered) * 1000, p95 * 1000, len(took), len(took) / total)


# -- a large value plug-in, written by the store's own write -------------------------------------


def value_manifest(plugin_id: str, series: int) -> dict[str, Any]:
    """A valid manifest of `series` daily value series (fields rate and high)."""
    return {
        "contract": 1,
        "id": plugin_id,
        "name": {"en": "Benchmark rates"},
        "version": "1.0.0",
        "timezone": "UTC",
        "audience": "public",
        "schedule": "0 6 * * *",
        "backfill": "all",
        "sources": [{"name": "data", "url": "https://bench.example.org/data", "maxBytes": 1024}],
        "series": [
            {
                "key": f"s{s}",
                "kind": "value",
                "cadence": "daily",
                "dates": "observation",
                "name": {"en": f"Series {s}"},
                "unit": "EUR",
                "fields": ["rate", "high"],
                "change": "rate",
            }
            for s in range(series)
        ],
        "limits": {"seconds": 60, "megabytes": 256},
        "licence": {"holder": "Benchmark", "terms": "Public domain", "retain": "yes"},
    }


def value_batch(
    series: int, days: int, today: date, revise_every: int | None = None, bump: float = 0.5
) -> list[dict[str, Any]]:
    """`series` x `days` daily values ending on `today`; every `revise_every`-th one changed
    by `bump` (a revision of the same batch without it)."""
    out = []
    dates = [(today - timedelta(days=d)).isoformat() for d in range(days)]
    for s in range(series):
        key = f"s{s}"
        for d, day in enumerate(dates):
            n = s * days + d
            rate = round(1 + n / 1000, 4)
            if revise_every and n % revise_every == 0:
                rate = round(rate + bump, 4)
            out.append(
                {"kind": "value", "series": key, "date": day,
                 "fields": {"rate": rate, "high": round(rate + 0.1, 4)}}
            )  # fmt: skip
    return out


@dataclass
class ValuePlugin:
    """An approved value plug-in registered through the store (`StoredPlugin`), whose runs are
    written by `write_run`, as a run worker writes them."""

    stored: StoredPlugin
    manifest: Manifest

    @classmethod
    def approved(cls, engine: Engine, plugin_id: str, series: int) -> ValuePlugin:
        stored = StoredPlugin(engine, value_manifest(plugin_id, series), T0).register().approve()
        parsed = parse_manifest(stored.doc, folder_name=plugin_id).manifest
        assert parsed is not None
        return cls(stored, parsed)

    @property
    def id(self) -> str:
        return self.stored.id

    def write(self, batch: Sequence[dict[str, Any]], today: date) -> WriteResult:
        now = self.stored.now()
        return write_run(
            self.stored.engine,
            plugin_id=self.stored.id,
            version_id=self.stored.version_id,
            digest=self.stored.digest,
            manifest=self.manifest,
            run=RunFacts(today=today, trigger=RunTrigger.SCHEDULE, started_at=now, now=now),
            batch=batch,
        )


# -- the output ---------------------------------------------------------------------------------


def commit() -> str:
    done = subprocess.run(
        ["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True
    )
    return done.stdout.strip() or "unknown"


def table(columns: Sequence[str], rows: Sequence[Sequence[object]]) -> None:
    """Rows under their column names, right-aligned; floats with two decimals."""
    cells = [[f"{c:,.2f}" if isinstance(c, float) else f"{c:,}" if isinstance(c, int) else str(c)
              for c in row] for row in rows]  # fmt: skip
    widths = [max(len(h), *(len(r[i]) for r in cells)) for i, h in enumerate(columns)]
    print("  ".join(h.rjust(w) for h, w in zip(columns, widths, strict=True)))
    for row in cells:
        print("  ".join(c.rjust(w) for c, w in zip(row, widths, strict=True)))


def emit(curve: str, args: argparse.Namespace, figures: dict[str, Any]) -> None:
    """The benchmark's one JSON line (last), also kept as docs/performance/results/<curve>.json
    for draw_curves.py, with the date, commit, load and whether the sizes were cut."""
    line = {
        "curve": curve,
        "date": datetime.now(UTC).date().isoformat(),
        "commit": commit(),
        "quick": bool(args.quick),
        "load_at_end": round(os.getloadavg()[0], 2),
        **figures,
    }
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / f"{curve}.json").write_text(json.dumps(line, indent=1) + "\n", encoding="utf-8")
    print(json.dumps(line))
