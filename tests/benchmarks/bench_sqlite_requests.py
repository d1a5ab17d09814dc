"""Benchmark of request latency on the embedded default (SQLite, WAL) while a 250,000-record run
writes (issue 21): p50 and p95 of sign-in (a request that writes: it waits for the run's write
lock) and of the reader's 62-day days (a read: it never waits for a writer), with no writer and
then while the run writes, in the same run.

The API is the service's own (`almanac.service:api_app` under uvicorn, a separate process on
loopback, production argon2 parameters); the run's write is `write_run` in another process
(as a Dagster run worker is), the 250,000 records of `bench_store_write.py` (50 series x 5,000
days, all new) for a fresh plug-in per round. Requests are sent at a fixed pace whatever the
answers take (sign-in every BENCH_SIGNIN_MS, 1000 by default; days every BENCH_DAYS_MS, 200),
from the moment the write begins until it ends; the same pace for BENCH_QUIET seconds (30)
with no writer gives the figures beside them. BENCH_ROUNDS runs are written (3), one after
another, and their requests pooled. The reader shows the five examples with their fixture
records (as in `bench_reader_days.py`).

Run: .venv/bin/python tests/benchmarks/bench_sqlite_requests.py
Not collected by pytest (bench_*.py). Prints figures only; it fails when a request is not
answered 200 (a "database is locked" 500, a reset connection).
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

import httpx
from sqlalchemy import Engine
from sqlalchemy.orm import Session

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from almanac.platform import accounts  # noqa: E402
from almanac.platform.accounts import Passwords  # noqa: E402
from almanac.platform.audience import set_shown, visible_plugins  # noqa: E402
from almanac.platform.contract.manifest import parse_manifest  # noqa: E402
from almanac.platform.lifecycle import RunTrigger  # noqa: E402
from almanac.platform.store.engine import make_engine, upgrade_database  # noqa: E402
from almanac.platform.store.versions import approved_code  # noqa: E402
from almanac.platform.store.write import RunFacts, write_run  # noqa: E402
from tests.audience.helpers import StoredPlugin, example_plugin, example_records  # noqa: E402
from tests.benchmarks.bench_reader_days import EXAMPLES, PARAMS, shifted  # noqa: E402
from tests.benchmarks.bench_reader_days import TODAY as READER_TODAY  # noqa: E402
from tests.benchmarks.bench_store_write import RECORDS, SERIES, TODAY, batch  # noqa: E402
from tests.benchmarks.sweep import value_manifest  # noqa: E402

ROUNDS = int(os.environ.get("BENCH_ROUNDS", "3"))
QUIET = float(os.environ.get("BENCH_QUIET", "30"))
SIGNIN_EVERY = int(os.environ.get("BENCH_SIGNIN_MS", "1000")) / 1000
DAYS_EVERY = int(os.environ.get("BENCH_DAYS_MS", "200")) / 1000
EMAIL = "reader@example.org"
PASSWORD = "correct horse battery staple"
T0 = datetime(2026, 6, 30, 12, tzinfo=UTC)


# -- the store ---------------------------------------------------------------------------------


def fill(engine: Engine) -> list[str]:
    """The five examples with their fixture records, a reader (production password hash) who
    shows them, and one approved plug-in per round for the big run (not shown). Returns the
    big plug-ins' ids."""
    for name in EXAMPLES:
        plugin = example_plugin(engine, name, T0)
        records, fixture_today = example_records(name)
        plugin.write(shifted(records, READER_TODAY - fixture_today), READER_TODAY)
    big = []
    for n in range(ROUNDS):
        plugin = StoredPlugin(engine, value_manifest(f"bench-run-{n}", SERIES), T0)
        assert plugin.manifest is not None  # the manifest passes the contract
        big.append(plugin.register().approve().id)
    now = datetime.now(UTC)
    with Session(engine, expire_on_commit=False) as db:
        made = accounts.sign_up(db, EMAIL, PASSWORD, Passwords(), now)
        accounts.verify_email(db, made.verification_token, now)
        readable = visible_plugins(db, made.account)
        choices = {f"plugins.{p.id}.shown": p.id not in big for p in readable}
        set_shown(db, made.account, choices, now)
        db.commit()
    return big


def write_big_run(database_url: str, plugin_id: str) -> None:
    """The child process: build the batch, then write it as one run; prints `writing` (epoch
    seconds) just before the write's transaction begins and `written` when it committed."""
    engine = make_engine(database_url)
    with engine.connect() as conn:
        code = approved_code(conn, plugin_id)
    manifest = parse_manifest(code.manifest).manifest
    assert manifest is not None
    rows = batch()
    now = datetime.now(UTC)
    facts = RunFacts(today=TODAY, trigger=RunTrigger.SCHEDULE, started_at=now, now=now)
    print(json.dumps({"event": "writing", "at": time.time()}), flush=True)
    start = time.perf_counter()
    result = write_run(
        engine,
        plugin_id=plugin_id,
        version_id=code.version_id,
        digest=code.digest,
        manifest=manifest,
        run=facts,
        batch=rows,
    )
    took = time.perf_counter() - start
    assert result.counts.new == RECORDS, result.counts
    print(json.dumps({"event": "written", "at": time.time(), "seconds": took}), flush=True)
    engine.dispose()


# -- the requests ------------------------------------------------------------------------------


@dataclass(frozen=True)
class Sample:
    seconds: float
    status: int | str


def timed(call: Callable[[], httpx.Response]) -> Sample:
    start = time.perf_counter()
    try:
        status: int | str = call().status_code
    except httpx.TransportError as error:
        status = type(error).__name__
    return Sample(time.perf_counter() - start, status)


class Load:
    """Sign-ins and days reads at a fixed pace, each on a pooled keep-alive client, until
    `stop` is set; every request's latency is kept."""

    def __init__(self, base: str, cookie: str) -> None:
        self.signin_client = httpx.Client(base_url=base, timeout=120)
        self.days_client = httpx.Client(
            base_url=base, timeout=120, cookies={"almanac_session": cookie}
        )
        self.pool = ThreadPoolExecutor(64)

    def sign_in(self) -> httpx.Response:
        body = {"email": EMAIL, "password": PASSWORD}
        return self.signin_client.post("/api/v1/auth/signin", json=body)

    def days(self) -> httpx.Response:
        return self.days_client.get("/api/v1/reader/days", params=PARAMS)

    def run(self, stop: threading.Event) -> tuple[list[Sample], list[Sample]]:
        futures: dict[str, list[Future[Sample]]] = {"sign-in": [], "days": []}
        pace = (("sign-in", self.sign_in, SIGNIN_EVERY), ("days", self.days, DAYS_EVERY))
        start = time.monotonic()
        due = {kind: start for kind, _, _ in pace}
        while not stop.is_set():
            for kind, call, every in pace:
                if time.monotonic() >= due[kind]:
                    futures[kind].append(self.pool.submit(timed, call))
                    due[kind] += every
            stop.wait(max(0.0, min(due.values()) - time.monotonic()))
        return [f.result() for f in futures["sign-in"]], [f.result() for f in futures["days"]]

    def close(self) -> None:
        self.pool.shutdown()
        self.signin_client.close()
        self.days_client.close()


def quiet(load: Load) -> tuple[list[Sample], list[Sample]]:
    stop = threading.Event()
    threading.Timer(QUIET, stop.set).start()
    return load.run(stop)


def while_writing(
    load: Load, database_url: str, plugin_id: str
) -> tuple[list[Sample], list[Sample], float]:
    """The requests sent from the moment the run's write begins until it committed; and the
    write's seconds."""
    child = subprocess.Popen(
        [sys.executable, __file__, "write", database_url, plugin_id],
        stdout=subprocess.PIPE, cwd=ROOT, text=True,
    )  # fmt: skip
    assert child.stdout is not None
    assert json.loads(child.stdout.readline())["event"] == "writing"
    stop = threading.Event()
    written: dict = {}

    def watch() -> None:
        assert child.stdout is not None
        line = child.stdout.readline()
        written.update(json.loads(line) if line else {})
        stop.set()

    threading.Thread(target=watch, daemon=True).start()
    signins, days = load.run(stop)
    assert child.wait(60) == 0 and written.get("event") == "written", "the run did not write"
    return signins, days, written["seconds"]


def percentiles(samples: list[Sample]) -> tuple[float, float]:
    ordered = sorted(s.seconds for s in samples)
    return statistics.median(ordered), ordered[max(0, int(len(ordered) * 0.95) - 1)]


def wait_for(base: str) -> None:
    for _ in range(300):
        try:
            if httpx.get(f"{base}/health", timeout=1).status_code == 200:
                return
        except httpx.HTTPError:
            pass
        time.sleep(0.1)
    raise RuntimeError("the API did not start")


def main() -> None:
    home = Path(tempfile.mkdtemp(prefix="almanac-bench-sqlite-"))
    url = f"sqlite:///{home / 'almanac.db'}"
    server = None
    try:
        upgrade_database(url)
        engine = make_engine(url)
        big = fill(engine)
        engine.dispose()
        with socket.socket() as sock:
            sock.bind(("127.0.0.1", 0))
            port = sock.getsockname()[1]
        env = {k: v for k, v in os.environ.items() if not k.startswith("ALMANAC_")}
        env |= {
            "ALMANAC_HOME": str(home),
            "ALMANAC_DATABASE_URL": url,
            "ALMANAC_PORT": str(port),
            "ALMANAC_BASE_URL": f"http://127.0.0.1:{port}",
        }
        server = subprocess.Popen(
            [sys.executable, "-m", "uvicorn", "almanac.service:api_app", "--factory",
             "--host", "127.0.0.1", "--port", str(port), "--log-level", "warning",
             "--no-access-log"],
            env=env, cwd=ROOT,
        )  # fmt: skip
        base = f"http://127.0.0.1:{port}"
        wait_for(base)
        with httpx.Client(base_url=base, timeout=30) as client:
            signed = client.post("/api/v1/auth/signin", json={"email": EMAIL, "password": PASSWORD})
            assert signed.status_code == 200, signed.text
            cookie = signed.cookies["almanac_session"]
            for _ in range(20):  # warm-up: manifests parsed, connections pooled
                answer = client.get(
                    "/api/v1/reader/days", params=PARAMS, cookies={"almanac_session": cookie}
                )
                assert answer.status_code == 200, answer.text
        load = Load(base, cookie)
        try:
            calm_signins, calm_days = quiet(load)
            busy_signins: list[Sample] = []
            busy_days: list[Sample] = []
            writes = []
            for plugin_id in big:
                signins, days, took = while_writing(load, url, plugin_id)
                busy_signins += signins
                busy_days += days
                writes.append(took)
        finally:
            load.close()

        everything = calm_signins + calm_days + busy_signins + busy_days
        failed = [s.status for s in everything if s.status != 200]
        print(
            f"embedded SQLite store; uvicorn on loopback; sign-in every {SIGNIN_EVERY * 1000:.0f}"
            f" ms, 62-day read of 5 plug-ins every {DAYS_EVERY * 1000:.0f} ms"
        )
        print(
            f"write of {RECORDS:,} new records (one run, one transaction), {ROUNDS} rounds: "
            + ", ".join(f"{t:.2f} s" for t in writes)
        )
        print(
            f"{'':28} {'sign-in p50':>12} {'p95':>9} {'n':>5}   {'days p50':>9} {'p95':>9} {'n':>5}"
        )
        figures = {}
        for label, key, signins, days in (
            (f"no writer ({QUIET:.0f} s)", "quiet", calm_signins, calm_days),
            ("while the run writes", "writing", busy_signins, busy_days),
        ):
            s50, s95 = percentiles(signins)
            d50, d95 = percentiles(days)
            print(
                f"{label:28} {s50 * 1000:9.1f} ms {s95 * 1000:6.1f} ms {len(signins):5}"
                f"   {d50 * 1000:6.1f} ms {d95 * 1000:6.1f} ms {len(days):5}"
            )
            figures |= {
                f"{key}_signin_p50_ms": s50 * 1000,
                f"{key}_signin_p95_ms": s95 * 1000,
                f"{key}_days_p50_ms": d50 * 1000,
                f"{key}_days_p95_ms": d95 * 1000,
            }
        print(json.dumps({**figures, "write_seconds": writes, "failed": len(failed)}))
        assert not failed, f"requests not answered 200: {failed[:10]}"
    finally:
        if server is not None:
            server.terminate()
            server.wait(10)
        shutil.rmtree(home, ignore_errors=True)


if __name__ == "__main__":
    if sys.argv[1:2] == ["write"]:
        write_big_run(sys.argv[2], sys.argv[3])
    else:
        main()
