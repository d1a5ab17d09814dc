"""The production path for the benchmarks of the sensor tick, the simulated day and the run
slots: `almanac up`'s dagster.yaml (queued runs, the `almanac` pool, `ForkServerRunLauncher`,
Dagster's storage on the store's PostgreSQL), a code server process serving the service's
definitions over gRPC (`tests/benchmarks/bench_location.py`), and the sensor and queue daemons'
own iterations driven from this process, as `dagster-daemon` drives them in its threads.

What a benchmark chooses: the plug-ins (registered by the store's own path, due hourly), the
source server's delay, the run slots, and the clock (`SimulatedClock`, which the code server and
each run worker read too; the daemons' own bookkeeping runs under Dagster's `freeze_time` at
the simulated minute).
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import threading
import time
from collections.abc import Iterator, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import dagster as dg
from dagster._core.test_utils import create_test_daemon_workspace_context, freeze_time
from dagster._core.workspace.load_target import ModuleTarget
from dagster._daemon.run_coordinator.queued_run_coordinator_daemon import (
    QueuedRunCoordinatorDaemon,
)
from dagster._daemon.sensor import execute_sensor_iteration
from sqlalchemy import Engine, text

from almanac.assets.control import (
    SENSOR_THREADS,
    dagster_yaml,
    prepare_dagster_storage,
    set_run_slots,
)
from almanac.orchestration.catalog import SNAPSHOT_ENV, load_catalog
from almanac.orchestration.folders import register_folder
from almanac.platform.store.engine import write_transaction
from almanac.platform.store.models import RunRequest
from almanac.settings import Settings
from tests.benchmarks.bench_location import (
    CLOCK_ENV,
    ROOM_TIMES_ENV,
    SOURCES_ENV,
    SimulatedClock,
)
from tests.benchmarks.bench_orchestration import first_runs_done
from tests.orchestration.harness import (
    BASE_URL,
    SourceServer,
    approve,
    source_host,
    source_path,
    write_plugin,
)

REPO = Path(__file__).resolve().parents[2]
HOURLY = "0 * * * *"
BUSY = [
    dg.DagsterRunStatus.QUEUED,
    dg.DagsterRunStatus.NOT_STARTED,
    dg.DagsterRunStatus.STARTING,
    dg.DagsterRunStatus.STARTED,
    dg.DagsterRunStatus.CANCELING,
]


def register_hourly(engine: Engine, work: Path, ids: Sequence[str], ran_at: datetime) -> None:
    """Register and approve each plug-in of `ids` (one small plug-in folder each, due hourly in
    UTC) through the store's own path, and note a first run of each at `ran_at`: from then on
    only their schedule starts them."""
    began = time.perf_counter()
    for n, plugin_id in enumerate(ids, 1):
        folder = write_plugin(work / "plugins", plugin_id, schedule=HOURLY, timezone="UTC")
        register_folder(engine, folder, now=ran_at - timedelta(days=1))
        approve(engine, plugin_id, ran_at - timedelta(days=1))
        if n % 1000 == 0:
            print(f"   {n} plug-ins registered ({time.perf_counter() - began:.0f} s)", flush=True)
    with engine.connect() as conn:
        catalog = load_catalog(conn)
    with write_transaction(engine) as conn:
        first_runs_done(conn, catalog, ran_at)
        conn.execute(RunRequest.__table__.update().values(taken_at=ran_at))


@dataclass
class Production:
    """The instance, the daemon's workspace over the code server, and the parts around them."""

    engine: Engine
    instance: dg.DagsterInstance
    workspace: Any
    server: SourceServer
    database: str
    clock: SimulatedClock | None
    submit_workers: int
    logger: logging.Logger = field(default_factory=lambda: logging.getLogger("almanac.bench"))
    queue: QueuedRunCoordinatorDaemon = field(
        default_factory=lambda: QueuedRunCoordinatorDaemon(interval_seconds=1)
    )

    def sensor_tick(self, at: datetime | None = None) -> float:
        """One sensor daemon iteration (under Dagster's clock at `at` when given), as the daemon
        makes it with dagster.yaml's `sensors` settings: each sensor's tick in a thread and its
        runs submitted by `submit_workers` threads; seconds until every tick ended."""
        began = time.perf_counter()
        frozen = freeze_time(at) if at is not None else contextlib.nullcontext()
        with contextlib.ExitStack() as stack:
            stack.enter_context(frozen)
            ticks = submit = None
            futures: dict[str, Future[Any]] = {}
            if self.submit_workers:
                ticks = stack.enter_context(ThreadPoolExecutor(SENSOR_THREADS))
                submit = stack.enter_context(ThreadPoolExecutor(self.submit_workers))
            for _ in execute_sensor_iteration(
                self.workspace, self.logger, ticks, submit, futures if ticks else None
            ):
                pass
            for future in futures.values():
                future.result()
        return time.perf_counter() - began

    def dequeue(self) -> None:
        """One iteration of the run queue's daemon: what the pool allows is launched."""
        for _ in self.queue.run_iteration(self.workspace):
            pass

    def busy(self) -> int:
        return len(self.instance.get_run_ids(dg.RunsFilter(statuses=BUSY)))

    def processes(self) -> dict[str, list[int]]:
        """This process, the code server's processes, and the PostgreSQL backends serving the
        benchmark's database: whose CPU time a benchmark reads."""
        with self.engine.connect() as conn:
            backends = conn.execute(
                text("SELECT pid FROM pg_stat_activity WHERE datname = :name"),
                {"name": self.database},
            ).scalars()
            postgres = list(backends)
        return {
            "daemon": [os.getpid()],
            "code server": descendants(os.getpid()),
            "postgres": postgres,
        }


def _stat(pid: int) -> list[str] | None:
    try:
        with open(f"/proc/{pid}/stat", "rb") as stat:
            return stat.read().rsplit(b")", 1)[1].decode("ascii").split()
    except OSError:
        return None


def descendants(pid: int) -> list[int]:
    """The processes under `pid` (its children, theirs, ...)."""
    parents: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit() and (fields := _stat(int(entry))) is not None:
            parents.setdefault(int(fields[1]), []).append(int(entry))
    found, todo = [], [pid]
    while todo:
        for child in parents.get(todo.pop(), []):
            found.append(child)
            todo.append(child)
    return found


def cpu_seconds(processes: dict[str, list[int]]) -> dict[str, float]:
    """User and system CPU seconds of each group of processes (/proc; those gone count 0)."""
    tick = os.sysconf("SC_CLK_TCK")
    used: dict[str, float] = {}
    for name, pids in processes.items():
        total = 0
        for pid in pids:
            fields = _stat(pid)
            if fields is not None:
                total += int(fields[11]) + int(fields[12])
        used[name] = total / tick
    return used


def submit_workers_of(instance: dg.DagsterInstance) -> int:
    """The sensor daemon's submission threads as dagster.yaml sets them (0: none)."""
    settings = instance.get_settings("sensors")
    if not settings.get("use_threads"):
        return 0
    return int(settings.get("num_submit_workers") or 0)


@contextlib.contextmanager
def production(
    work: Path,
    engine: Engine,
    ids: Sequence[str],
    *,
    slots: int = 1,
    clock_at: datetime | None = None,
    source_delay: float = 0.0,
) -> Iterator[Production]:
    """The production path over `engine`'s database for the plug-ins `ids`: their sources
    served (`ok`, after `source_delay` seconds), `almanac up`'s dagster.yaml with `slots` run
    slots, and a code server started by the daemon's workspace. With `clock_at`, the code
    server and the run workers read a `SimulatedClock` set to it."""
    url = engine.url.render_as_string(hide_password=False)
    home = work / "production"
    dagster_home = home / "dagster"
    dagster_home.mkdir(parents=True)
    settings = Settings(
        home=home,
        api_port=0,
        dagster_port=0,
        database_url=url,
        base_url=BASE_URL,
        run_slots=slots,
    )
    prepare_dagster_storage(settings)
    (dagster_home / "dagster.yaml").write_text(dagster_yaml(settings))
    clock = None
    if clock_at is not None:
        clock = SimulatedClock(work / "clock.json")
        clock.set(clock_at)
    room_times = work / "room-times.jsonl"
    room_times.touch()
    saved = dict(os.environ)
    # One wildcard certificate: a certificate naming thousands of hosts makes every handshake
    # slow.
    with SourceServer(["*.example.org"]) as server:
        for plugin_id in ids:
            server.serve(source_path(plugin_id), b"ok\n", delay=source_delay)
        ca = work / "ca.pem"
        server.ca.cert_pem.write_to_path(str(ca))
        sources = work / "sources.json"
        hosts = [source_host(plugin_id) for plugin_id in ids]
        sources.write_text(json.dumps({"port": server.port, "ca": str(ca), "hosts": hosts}))
        os.environ.pop(SNAPSHOT_ENV, None)
        os.environ.update(
            {
                "DAGSTER_HOME": str(dagster_home),
                "ALMANAC_HOME": str(home),
                "ALMANAC_DATABASE_URL": url,
                "ALMANAC_BASE_URL": BASE_URL,
                SOURCES_ENV: str(sources),
                ROOM_TIMES_ENV: str(room_times),
            }
        )
        if clock is not None:
            os.environ[CLOCK_ENV] = str(clock.path)
        try:
            with dg.DagsterInstance.from_config(str(dagster_home)) as instance:
                set_run_slots(instance, slots)
                target = ModuleTarget(
                    module_name="tests.benchmarks.bench_location",
                    attribute="defs",
                    working_directory=str(REPO),
                    location_name="almanac",
                )
                with create_test_daemon_workspace_context(target, instance) as workspace:
                    [entry] = (
                        workspace.create_request_context().get_code_location_entries().values()
                    )
                    assert entry.code_location is not None, entry.load_error
                    made = Production(
                        engine=engine,
                        instance=instance,
                        workspace=workspace,
                        server=server,
                        database=engine.url.database or "",
                        clock=clock,
                        submit_workers=submit_workers_of(instance),
                    )
                    # The queue daemon's line for each iteration would drown the figures.
                    logging.getLogger(f"dagster.daemon.{type(made.queue).__name__}").setLevel(
                        logging.WARNING
                    )
                    with made.queue:
                        yield made
        finally:
            os.environ.clear()
            os.environ.update(saved)


class Daemons:
    """The sensor and queue daemons' iterations in two threads, as `dagster-daemon` runs them:
    the sensor once each simulated minute (under Dagster's clock at that minute), the queue
    every second. `jump(to)` moves the simulated clock forward while nothing is going."""

    def __init__(self, made: Production, start: datetime, end: datetime) -> None:
        assert made.clock is not None
        self.made = made
        self.clock = made.clock
        self.next_minute = start
        self.end = end
        self.ticks: list[tuple[datetime, float]] = []
        self.errors: list[BaseException] = []
        self._stop = threading.Event()
        self._lock = threading.Lock()
        self._threads = [
            threading.Thread(target=self._guard(self._sensor), daemon=True),
            threading.Thread(target=self._guard(self._queue), daemon=True),
        ]

    def _guard(self, body: Any) -> Any:
        def run() -> None:
            try:
                body()
            except BaseException as exc:
                self.errors.append(exc)
                self._stop.set()

        return run

    def _sensor(self) -> None:
        while not self._stop.is_set():
            with self._lock:
                minute = self.next_minute
            if minute >= self.end:
                return
            if self.clock() < minute:
                self._stop.wait(0.05)
                continue
            took = self.made.sensor_tick(minute)
            self.ticks.append((minute, took))
            with self._lock:
                if self.next_minute == minute:
                    self.next_minute = minute + timedelta(minutes=1)

    def _queue(self) -> None:
        while not self._stop.is_set():
            began = time.monotonic()
            self.made.dequeue()
            self._stop.wait(max(0.0, 1.0 - (time.monotonic() - began)))

    def idle(self) -> bool:
        """Nothing queued or going and the sensor waiting for its next minute."""
        with self._lock:
            waiting = self.clock() < self.next_minute
        return waiting and self.made.busy() == 0

    def jump(self, to: datetime) -> None:
        with self._lock:
            if to > self.next_minute:
                self.clock.set(to)
                self.next_minute = to

    def __enter__(self) -> Daemons:
        for thread in self._threads:
            thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        for thread in self._threads:
            thread.join(600)
