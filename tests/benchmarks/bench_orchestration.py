"""What orchestration costs with 1,000 registered, approved plug-ins (copies of one small plug-in
folder with distinct ids) on the embedded SQLite store:

1. the definitions' load: the catalog query, `build_definitions`, and Dagster resolving the
   repository (what a code server or run worker does before anything runs);
2. one evaluation of the minute sensor, quiet (nothing due) and busy (all 1,000 due);
3. the overhead a run adds over the locked room: from the run's launch to the room's start, and
   from the room's end to the run's end, through the real queue, launcher and IO manager (the
   harness's in-process launcher);
4. the same with the launchers production uses (`almanac up`'s dagster.yaml: the queued run
   coordinator and the pool), each with its own instance and code server started by a daemon's
   workspace: first Dagster's `DefaultRunLauncher` (the code server spawns a fresh interpreter
   for each run: the last measured state, for the ratio), then Almanac's
   `ForkServerRunLauncher` (each run worker a fork of a warm server process), which `almanac up`
   configures. From the sensor's request (its run queued) to the room's start and from the
   room's end to the run's success, median of `runs` (`runs-spawned` for the first), with the
   run worker's peak resident memory. It ends with the capacity `N runs a day` (one at a time:
   a day over the measured overhead plus the median room time, with the forked workers) and one
   JSON line of the figures.

    .venv/bin/python tests/benchmarks/bench_orchestration.py [plugins] [runs] [runs-spawned]

With `BENCH_STORE=postgresql` (and ALMANAC_TEST_DATABASE_URL naming a server), the store and
Dagster's storage are on a fresh PostgreSQL database, as in a production deployment; by
default on the embedded SQLite.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import dagster as dg
from dagster._core.test_utils import create_test_daemon_workspace_context, freeze_time
from dagster._core.workspace.load_target import ModuleTarget
from dagster._daemon.run_coordinator.queued_run_coordinator_daemon import (
    QueuedRunCoordinatorDaemon,
)
from dagster._daemon.sensor import execute_sensor_iteration
from sqlalchemy import insert, update

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))

from almanac.assets.control import (  # noqa: E402
    RUN_LAUNCHER,
    dagster_yaml,
    prepare_dagster_storage,
    set_run_slots,
)
from almanac.definitions import build_definitions  # noqa: E402
from almanac.orchestration.catalog import SNAPSHOT_ENV, load_catalog, write_snapshot  # noqa: E402
from almanac.orchestration.folders import register_folder  # noqa: E402
from almanac.platform.lifecycle import RunTrigger  # noqa: E402
from almanac.platform.store.engine import (  # noqa: E402
    make_engine,
    upgrade_database,
    write_transaction,
)
from almanac.platform.store.models import Run, RunRequest  # noqa: E402
from almanac.platform.store.run_requests import request_run  # noqa: E402
from almanac.platform.store.versions import approved_code  # noqa: E402
from almanac.sandbox.room import LockedRoom, RoomResult  # noqa: E402
from almanac.settings import Settings  # noqa: E402
from tests.benchmarks.bench_location import ROOM_TIMES_ENV, SOURCES_ENV  # noqa: E402
from tests.orchestration.conftest import fresh_postgres_engine  # noqa: E402
from tests.orchestration.harness import (  # noqa: E402
    BASE_URL,
    Orchestrator,
    SourceServer,
    approve,
    source_host,
    source_path,
    write_plugin,
)

T0 = datetime(2026, 5, 4, 9, 0, tzinfo=UTC)
STORE_ENV = "BENCH_STORE"
"""`postgresql`: the store and Dagster's storage on a fresh database of the PostgreSQL server
at ALMANAC_TEST_DATABASE_URL, as a production deployment keeps them; else the embedded SQLite."""
SCHEDULE = "0 12 * * *"  # noon UTC: every plug-in is due at once at T0 + 3h


class TimedRoom:
    """The real locked room, noting when each run enters and leaves it."""

    def __init__(self) -> None:
        self.room = LockedRoom()
        self.entered: list[float] = []
        self.left: list[float] = []

    def run(self, *args: Any, **kwargs: Any) -> RoomResult:
        self.entered.append(time.perf_counter())
        try:
            return self.room.run(*args, **kwargs)
        finally:
            self.left.append(time.perf_counter())


def first_runs_done(conn: Any, catalog: list[Any], at: datetime) -> None:
    """Note a successful first run at `at` for every plug-in of `catalog`, as if each had run
    once: from then on only their schedules start them."""
    conn.execute(
        insert(Run.__table__),
        [
            {
                "plugin_id": e.id,
                "version_id": e.approved_version_id,
                "digest": e.digest,
                "trigger": "first",
                "today": at.date(),
                "backfill": True,
                "started_at": at,
                "ended_at": at,
                "outcome": "success",
            }
            for e in catalog
        ],
    )


def timed(action: Any) -> tuple[float, Any]:
    began = time.perf_counter()
    result = action()
    return time.perf_counter() - began, result


def main(count: int, runs: int = 10, runs_spawned: int = 3) -> None:
    work = Path(tempfile.mkdtemp(prefix="bench-orchestration-"))
    try:
        with contextlib.ExitStack() as stack:
            if os.environ.get(STORE_ENV) == "postgresql":
                engine = stack.enter_context(fresh_postgres_engine("bench_orchestration"))
                url = engine.url.render_as_string(hide_password=False)
            else:
                url = f"sqlite:///{work / 'almanac.db'}"
                upgrade_database(url)
                engine = make_engine(url)
            measure(work, url, engine, count, runs, runs_spawned)
    finally:
        shutil.rmtree(work, ignore_errors=True)


def measure(work: Path, url: str, engine: Any, count: int, runs: int, runs_spawned: int) -> None:
    """Parts 1 to 4 on the store at `url` (Dagster's storage beside it in part 4)."""
    ids = [f"bench-{n:04d}" for n in range(count)]
    began = time.perf_counter()
    for plugin_id in ids:
        folder = write_plugin(work / "plugins", plugin_id, schedule=SCHEDULE, timezone="UTC")
        register_folder(engine, folder, now=T0)
        approve(engine, plugin_id, T0)
    print(f"{count} plug-ins registered and approved in {time.perf_counter() - began:.1f} s")

    # 1. The definitions' load: every plug-in (a code server) and one (a run worker's).
    settings = Settings(home=work, api_port=0, dagster_port=0, database_url=url, base_url=BASE_URL)
    catalog_s, catalog = timed(lambda: load_catalog(engine.connect()))

    def load(only: frozenset[str] | None) -> tuple[float, float]:
        build_s, defs = timed(
            lambda: build_definitions(settings=settings, engine=engine, catalog=catalog, only=only)
        )
        resolve_s, repository = timed(defs.get_repository_def)
        job_s, _ = timed(
            lambda: repository.get_maybe_subset_job_def(
                "__ASSET_JOB", asset_selection={dg.AssetKey(["plugins", ids[0]])}
            )
        )
        return build_s, resolve_s + job_s

    every = min((load(None) for _ in range(3)), key=sum)
    one = min((load(frozenset(ids[:1])) for _ in range(3)), key=sum)
    snapshot = write_snapshot(catalog, work / "catalog")
    worker = (
        "import time; t=time.perf_counter();"
        "import resource, sys; import dagster as dg;"
        "from almanac.definitions import build_definitions;"
        "from almanac.orchestration.catalog import read_snapshot;"
        "from almanac.settings import Settings; from pathlib import Path;"
        "i=time.perf_counter();"
        f"c=read_snapshot(Path({str(snapshot)!r}));"
        f"s=Settings(home=Path({str(work)!r}),api_port=0,dagster_port=0,"
        f"database_url={url!r},base_url='x');"
        "o=None if sys.argv[1]=='all' else frozenset(sys.argv[1:]);"
        "r=build_definitions(settings=s,catalog=c,only=o).get_repository_def();"
        f"r.get_maybe_subset_job_def('__ASSET_JOB',asset_selection={{dg.AssetKey(['plugins',{ids[0]!r}])}});"
        "print(i-t, time.perf_counter()-i, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)"
    )

    def fresh(which: str) -> tuple[float, float, float, int]:
        runs = []
        for _ in range(3):
            wall, out = timed(
                lambda: subprocess.run(
                    [sys.executable, "-c", worker, which],
                    capture_output=True,
                    text=True,
                    check=True,
                ).stdout.split()
            )
            runs.append((wall, float(out[0]), float(out[1]), int(out[2])))
        return min(runs)

    fresh_all, fresh_one = fresh("all"), fresh(ids[0])
    print("\n1. definitions")
    print(f"   catalog query ({count} plug-ins, one statement):  {catalog_s * 1000:7.0f} ms")
    for label, (build_s, resolve_s) in (
        (f"every plug-in ({count}, a code server)", every),
        ("the run's plug-in (a run worker)", one),
    ):
        print(
            f"   {label}: build_definitions {build_s * 1000:.0f} ms, Dagster resolving "
            f"the repository and the run's job {resolve_s * 1000:.0f} ms"
        )
    print(f"   ratio (every / the run's): {sum(every) / sum(one):.0f}x")
    for label, (wall, imports, defs_s, rss) in (
        ("every plug-in", fresh_all),
        ("the run's plug-in", fresh_one),
    ):
        print(
            f"   a fresh process loading the snapshot, {label}: {wall * 1000:.0f} ms "
            f"(imports {imports * 1000:.0f} ms, snapshot + definitions + job "
            f"{defs_s * 1000:.0f} ms, peak RSS {rss / 1024:.0f} MB)"
        )
    figures: dict[str, Any] = {
        "plugins": count,
        "catalog_query_ms": round(catalog_s * 1000, 1),
        "definitions_every_ms": round(sum(every) * 1000, 1),
        "definitions_one_ms": round(sum(one) * 1000, 1),
        "definitions_ratio": round(sum(every) / sum(one), 1),
        "fresh_process_every_ms": round(fresh_all[0] * 1000),
        "fresh_process_one_ms": round(fresh_one[0] * 1000),
        "fresh_process_imports_ms": round(min(fresh_all[1], fresh_one[1]) * 1000),
        "fresh_process_every_peak_rss_mb": round(fresh_all[3] / 1024),
        "fresh_process_one_peak_rss_mb": round(fresh_one[3] / 1024),
    }

    # 2 and 3 through the real instance, sensor daemon, queue and launcher.
    room = TimedRoom()
    with (
        SourceServer([source_host(i) for i in ids[:1]]) as server,
        Orchestrator.open(
            work / "orch", engine, downloader=server.downloader, room=room, start=T0
        ) as orch,
    ):
        server.serve(source_path(ids[0]), b"ok\n")
        # Every plug-in has run once (as the first runs would have), so nothing is due.
        with engine.begin() as conn:
            first_runs_done(conn, catalog, T0)
        with write_transaction(engine) as conn:
            conn.execute(RunRequest.__table__.update().values(taken_at=T0))
        repository = orch.build().get_repository_def()
        sensor = repository.get_sensor_def("almanac_due_runs")

        def evaluate(at: datetime) -> int:
            orch.clock.set(at)
            with freeze_time(at):
                context = dg.build_sensor_context(instance=orch.instance, repository_def=repository)
                result = sensor.evaluate_tick(context)
            return len(result.run_requests or [])

        quiet = [timed(lambda n=n: evaluate(T0 + timedelta(minutes=n + 1))) for n in range(5)]
        busy_s, busy_n = timed(lambda: evaluate(T0 + timedelta(hours=3)))
        print("\n2. one minute-sensor evaluation")
        print(
            f"   quiet (nothing due, {count} plug-ins checked): "
            f"{statistics.median(s for s, _ in quiet) * 1000:7.0f} ms "
            f"(orders: {quiet[0][1]})"
        )
        print(
            f"   busy (every plug-in due):                  {busy_s * 1000:7.0f} ms "
            f"(orders: {busy_n})"
        )

        # 3. One run of one plug-in: the request answered at once (an approval).
        overheads = []
        for n in range(3):
            at = T0 + timedelta(minutes=30 + n)
            with write_transaction(engine) as conn:
                code = approved_code(conn, ids[0])
                request_run(conn, ids[0], code.version_id, RunTrigger.RESUME, "bench", at)
            created = orch.tick(at)
            assert len(created) == 1, created
            launch = time.perf_counter()
            launched = orch.dequeue(at)
            done = time.perf_counter()
            assert len(launched) == 1 and launched[0].run_id == created[0].run_id
            overheads.append(
                (
                    room.entered[-1] - launch,
                    room.left[-1] - room.entered[-1],
                    done - room.left[-1],
                )
            )
        before, inside, after = (statistics.median(x) for x in zip(*overheads, strict=True))
        print("\n3. one run (median of 3), in-process launcher")
        print(f"   launch -> room start:  {before * 1000:7.0f} ms")
        print(f"   in the locked room:    {inside * 1000:7.0f} ms")
        print(f"   room end -> run end:   {after * 1000:7.0f} ms")
        figures["in_process_launch_to_room_ms"] = round(before * 1000)
        figures["in_process_room_end_to_run_end_ms"] = round(after * 1000)
        figures["in_process_room_ms"] = round(inside * 1000)

    figures.update(production_launcher(work, url, engine, ids, runs, runs_spawned))
    engine.dispose()
    overhead_s = (figures["request_to_room_ms"] + figures["room_end_to_success_ms"]) / 1000
    per_run_s = overhead_s + figures["room_ms"] / 1000
    figures["runs_a_day"] = int(86400 / per_run_s)
    print(
        f"\none at a time: {overhead_s * 1000:.0f} ms overhead + {figures['room_ms']} ms "
        f"in the room = {per_run_s:.2f} s a run"
    )
    print(f"{figures['runs_a_day']} runs a day")
    print(json.dumps(figures, sort_keys=True))


def _event_times(instance: dg.DagsterInstance, run_id: str) -> dict[str, float]:
    """The first time of each of the run's events that mark its way (wall clock)."""
    times: dict[str, float] = {}
    for entry in instance.all_logs(run_id):
        event = entry.dagster_event
        if event is None:
            continue
        name = event.event_type.name
        if name == "ENGINE_EVENT" and (entry.message or "").startswith("Started process for run"):
            name = "WORKER_STARTED"
        times.setdefault(name, entry.timestamp)
    return times


LAUNCHERS = {
    "spawned": ("dagster", "DefaultRunLauncher"),
    "forked": RUN_LAUNCHER,
}


def production_launcher(
    work: Path, url: str, engine: Any, ids: list[str], runs: int, runs_spawned: int
) -> dict[str, Any]:
    """Part 4: runs of one plug-in among `ids` through each launcher of `LAUNCHERS`, with a code
    server for the code location `tests/benchmarks/bench_location.py`, the sensor and queue
    daemons' own iterations driving them at once (a real daemon adds its waits: the sensor
    each minute, the queue every `dequeue_interval_seconds`)."""
    home = work / "production"
    settings = Settings(home=home, api_port=0, dagster_port=0, database_url=url, base_url=BASE_URL)
    plugin = ids[0]
    # Nothing is due but what the benchmark asks for: every plug-in's last attempt is now.
    now = datetime.now(UTC)
    with engine.begin() as conn:
        conn.execute(update(Run.__table__).values(started_at=now, ended_at=now))
    room_times = work / "room-times.jsonl"
    room_times.touch()
    logger = logging.getLogger("almanac.bench")
    saved = dict(os.environ)
    results: dict[str, list[dict[str, float]]] = {"spawned": [], "forked": []}
    server_s: dict[str, float] = {}
    with SourceServer([source_host(plugin)]) as server:
        server.serve(source_path(plugin), b"ok\n")
        ca = work / "ca.pem"
        server.ca.cert_pem.write_to_path(str(ca))
        sources = work / "sources.json"
        port = server.port
        sources.write_text(
            json.dumps({"port": port, "ca": str(ca), "hosts": [source_host(plugin)]})
        )
        tick_at = datetime.now(UTC)
        try:
            for phase, count in (("spawned", runs_spawned), ("forked", runs)):
                if count == 0:
                    continue
                dagster_home = home / phase
                dagster_home.mkdir(parents=True)
                prepare_dagster_storage(settings)
                (dagster_home / "dagster.yaml").write_text(
                    dagster_yaml(settings, run_launcher=LAUNCHERS[phase])
                )
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
                with dg.DagsterInstance.from_config(str(dagster_home)) as instance:
                    set_run_slots(instance, 1)
                    target = ModuleTarget(
                        module_name="tests.benchmarks.bench_location",
                        attribute="defs",
                        working_directory=str(REPO),
                        location_name="almanac",
                    )
                    began = time.perf_counter()
                    with (
                        create_test_daemon_workspace_context(target, instance) as workspace,
                        QueuedRunCoordinatorDaemon(interval_seconds=1) as queue,
                    ):
                        server_s[phase] = time.perf_counter() - began
                        [entry] = (
                            workspace.create_request_context().get_code_location_entries().values()
                        )
                        assert entry.code_location is not None, entry.load_error
                        for _ in range(count):
                            tick_at += timedelta(minutes=2)
                            results[phase].append(
                                _one_run(
                                    engine,
                                    instance,
                                    workspace,
                                    queue,
                                    plugin,
                                    tick_at,
                                    room_times,
                                    logger,
                                )
                            )
        finally:
            os.environ.clear()
            os.environ.update(saved)

    def median(phase: str, key: str) -> float:
        return statistics.median(r[key] for r in results[phase])

    print(f"\n4. one run through the launchers production uses (code servers up in {server_s})")
    keys = [
        ("sensor tick (evaluates every plug-in, queues the run)", "tick"),
        ("queued -> launched (queue iteration, the launcher)", "launch"),
        ("launched -> run worker process started", "worker"),
        ("worker started -> run start (definitions loaded)", "load"),
        ("run start -> step start", "step"),
        ("step start -> room start (store, download)", "to_room"),
        ("in the locked room", "room"),
        ("room end -> step success (check, write)", "write"),
        ("step success -> run success", "finish"),
        ("request -> room start", "request_to_room"),
        ("room end -> run success", "room_end_to_success"),
    ]
    figures: dict[str, Any] = {
        f"code_server_start_{phase}_s": round(s, 1) for phase, s in server_s.items()
    }
    for phase in ("spawned", "forked"):
        if not results[phase]:
            continue
        label = (
            "DefaultRunLauncher (a fresh interpreter a run, spawned by the code server)"
            if phase == "spawned"
            else "ForkServerRunLauncher (a fork of a warm server a run; almanac up's)"
        )
        print(f"   {label}, median of {len(results[phase])}:")
        for text, key in keys:
            print(f"     {text:<56} {median(phase, key) * 1000:7.0f} ms")
        print(
            f"     run worker's peak RSS (at the room's end)          "
            f"{median(phase, 'peak_rss_mb'):7.0f} MB"
        )
    forked_total = median("forked", "request_to_room") + median("forked", "room_end_to_success")
    if results["spawned"]:
        spawned_total = median("spawned", "request_to_room") + median(
            "spawned", "room_end_to_success"
        )
        print(f"   overhead spawned / forked: {spawned_total / forked_total:.1f}x")
        figures["spawned_request_to_room_ms"] = round(median("spawned", "request_to_room") * 1000)
        figures["spawned_room_end_to_success_ms"] = round(
            median("spawned", "room_end_to_success") * 1000
        )
        figures["spawned_worker_peak_rss_mb"] = round(median("spawned", "peak_rss_mb"))
        figures["overhead_ratio_spawned_to_forked"] = round(spawned_total / forked_total, 2)
    figures.update(
        {
            "runs": len(results["forked"]),
            "sensor_tick_ms": round(median("forked", "tick") * 1000),
            "request_to_room_ms": round(median("forked", "request_to_room") * 1000),
            "room_end_to_success_ms": round(median("forked", "room_end_to_success") * 1000),
            "room_ms": round(median("forked", "room") * 1000),
            "worker_load_ms": round(median("forked", "load") * 1000),
            "worker_peak_rss_mb": round(median("forked", "peak_rss_mb")),
        }
    )
    return figures


def _one_run(
    engine: Any,
    instance: dg.DagsterInstance,
    workspace: Any,
    queue: QueuedRunCoordinatorDaemon,
    plugin: str,
    tick_at: datetime,
    room_times: Path,
    logger: logging.Logger,
) -> dict[str, float]:
    """A resume request answered at once: the sensor daemon's iteration queues the run, the
    queue daemon's launches it; wait for its end and read its events' times."""
    with write_transaction(engine) as conn:
        code = approved_code(conn, plugin)
        request_run(conn, plugin, code.version_id, RunTrigger.RESUME, "bench", datetime.now(UTC))
    known = {r.run_id for r in instance.get_runs()}
    lines = len(room_times.read_text().splitlines())
    began = time.time()
    # The daemon's minimum-interval bookkeeping runs on Dagster's clock: a minute later each
    # time; the sensor itself, in the code server, evaluates at the real time.
    with freeze_time(tick_at):
        for _ in execute_sensor_iteration(workspace, logger, None, None):
            pass
    requested = time.time()
    [run] = [r for r in instance.get_runs() if r.run_id not in known]
    for _ in queue.run_iteration(workspace):
        pass
    launched = time.time()
    deadline = time.monotonic() + 600
    while True:
        current = instance.get_run_by_id(run.run_id)
        assert current is not None
        if current.is_finished:
            break
        assert time.monotonic() < deadline, f"run {run.run_id} did not finish"
        time.sleep(0.02)
    assert current.status == dg.DagsterRunStatus.SUCCESS, current.status
    events = _event_times(instance, run.run_id)
    [noted] = [json.loads(x) for x in room_times.read_text().splitlines()[lines:]]
    return {
        "tick": requested - began,
        "launch": launched - requested,
        "worker": events["WORKER_STARTED"] - launched,
        "load": events["RUN_START"] - events["WORKER_STARTED"],
        "step": events["STEP_START"] - events["RUN_START"],
        "to_room": noted["enter"] - events["STEP_START"],
        "room": noted["leave"] - noted["enter"],
        "write": events["STEP_SUCCESS"] - noted["leave"],
        "finish": events["RUN_SUCCESS"] - events["STEP_SUCCESS"],
        "request_to_room": noted["enter"] - requested,
        "room_end_to_success": events["RUN_SUCCESS"] - noted["leave"],
        "peak_rss_mb": noted["peak_rss_kb"] / 1024,
    }


if __name__ == "__main__":
    numbers = [int(a) for a in sys.argv[1:4]]
    main(*(numbers or [1000]))
