"""What orchestration costs with 1,000 registered, approved plug-ins (copies of one small plug-in
folder with distinct ids) on the embedded SQLite store:

1. the definitions' load: the catalog query, `build_definitions`, and Dagster resolving the
   repository (what a code server or run worker does before anything runs);
2. one evaluation of the minute sensor, quiet (nothing due) and busy (all 1,000 due);
3. the overhead a run adds over the locked room: from the run's launch to the room's start, and
   from the room's end to the run's end, through the real queue, launcher and IO manager (the
   harness's in-process launcher; a production run worker also starts a process and loads the
   definitions, measured separately as a fresh process loading the 1,000-plug-in snapshot).

    .venv/bin/python tests/benchmarks/bench_orchestration.py [plugins]
"""

from __future__ import annotations

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
from dagster._core.test_utils import freeze_time
from sqlalchemy import insert

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))

from almanac.definitions import build_definitions  # noqa: E402
from almanac.orchestration.catalog import load_catalog, write_snapshot  # noqa: E402
from almanac.orchestration.folders import register_folder  # noqa: E402
from almanac.platform.lifecycle import RunTrigger  # noqa: E402
from almanac.platform.store import plugins as store_plugins  # noqa: E402
from almanac.platform.store.engine import (  # noqa: E402
    make_engine,
    upgrade_database,
    write_transaction,
)
from almanac.platform.store.models import Run, RunRequest  # noqa: E402
from almanac.sandbox.room import LockedRoom, RoomResult  # noqa: E402
from almanac.settings import Settings  # noqa: E402
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


def timed(action: Any) -> tuple[float, Any]:
    began = time.perf_counter()
    result = action()
    return time.perf_counter() - began, result


def main(count: int) -> None:
    work = Path(tempfile.mkdtemp(prefix="bench-orchestration-"))
    try:
        url = f"sqlite:///{work / 'almanac.db'}"
        upgrade_database(url)
        engine = make_engine(url)
        ids = [f"bench-{n:04d}" for n in range(count)]
        began = time.perf_counter()
        for plugin_id in ids:
            folder = write_plugin(work / "plugins", plugin_id, schedule=SCHEDULE, timezone="UTC")
            register_folder(engine, folder, now=T0)
            approve(engine, plugin_id, T0)
        print(f"{count} plug-ins registered and approved in {time.perf_counter() - began:.1f} s")

        # 1. The definitions' load.
        settings = Settings(
            home=work, api_port=0, dagster_port=0, database_url=url, base_url=BASE_URL
        )
        catalog_s, catalog = timed(lambda: load_catalog(engine.connect()))
        loads = []
        for _ in range(3):
            build_s, defs = timed(
                lambda: build_definitions(settings=settings, engine=engine, catalog=catalog)
            )
            resolve_s, _ = timed(defs.get_repository_def)
            loads.append((build_s, resolve_s))
        build_s, resolve_s = min(loads, key=sum)
        snapshot = write_snapshot(catalog, work / "catalog")
        worker = (
            "import time; t=time.perf_counter();"
            "from almanac.definitions import build_definitions;"
            "from almanac.orchestration.catalog import read_snapshot;"
            "from almanac.settings import Settings; from pathlib import Path;"
            "import sys; i=time.perf_counter();"
            f"c=read_snapshot(Path({str(snapshot)!r}));"
            f"s=Settings(home=Path({str(work)!r}),api_port=0,dagster_port=0,"
            f"database_url={url!r},base_url='x');"
            "d=build_definitions(settings=s,catalog=c); d.get_repository_def();"
            "print(i-t, time.perf_counter()-i)"
        )
        fresh = []
        for _ in range(3):
            wall, out = timed(
                lambda: subprocess.run(
                    [sys.executable, "-c", worker], capture_output=True, text=True, check=True
                ).stdout.split()
            )
            fresh.append((wall, float(out[0]), float(out[1])))
        wall, imports, load = min(fresh)
        print("\n1. definitions")
        print(f"   catalog query ({count} plug-ins, one statement):  {catalog_s * 1000:7.0f} ms")
        print(f"   build_definitions:                               {build_s * 1000:7.0f} ms")
        print(f"   Dagster resolving the repository:                {resolve_s * 1000:7.0f} ms")
        print(
            f"   a fresh process (run worker) loading the snapshot: {wall * 1000:7.0f} ms "
            f"(imports {imports * 1000:.0f} ms, snapshot + definitions {load * 1000:.0f} ms)"
        )

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
                conn.execute(
                    insert(Run.__table__),
                    [
                        {
                            "plugin_id": e.id,
                            "version_id": e.approved_version_id,
                            "digest": e.digest,
                            "trigger": "first",
                            "today": T0.date(),
                            "backfill": True,
                            "started_at": T0,
                            "ended_at": T0,
                            "outcome": "success",
                        }
                        for e in catalog
                    ],
                )
            with write_transaction(engine) as conn:
                conn.execute(RunRequest.__table__.update().values(taken_at=T0))
            repository = orch.build().get_repository_def()
            sensor = repository.get_sensor_def("almanac_due_runs")

            def evaluate(at: datetime) -> int:
                orch.clock.set(at)
                with freeze_time(at):
                    context = dg.build_sensor_context(
                        instance=orch.instance, repository_def=repository
                    )
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
                    code = store_plugins.approved_code(conn, ids[0])
                    store_plugins.request_run(
                        conn, ids[0], code.version_id, RunTrigger.RESUME, "bench", at
                    )
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
        engine.dispose()
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 1000)
