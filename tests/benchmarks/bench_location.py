"""The code location of the production-launcher benchmark (`bench_orchestration.py`, part 4): the
service's own definitions, loaded as `almanac.definitions:defs` loads them (the catalog from the
store in the code server, the inherited snapshot and `run_worker_selection` in a run worker),
with two stand-ins a benchmark on one machine needs:

- the sources: the run pipeline's downloader reaches the benchmark's loopback TLS server (every
  source host resolves to a public stand-in address carried to that port, the server's test CA
  trusted), as the orchestration harness's downloader does; nothing leaves the machine;
- the locked room: the real `LockedRoom`, noting when each run enters and leaves it (wall clock,
  comparable across the benchmark's processes) and the run worker's peak resident memory then.

- the clock, when a benchmark simulates one: the minute sensor, the run pipeline and the
  downloader read it from a file the benchmark moves (`SimulatedClock`), the same in the code
  server and in every run worker.

The benchmark names them in the environment before the code server starts; the run workers the
launcher starts inherit it:
`ALMANAC_BENCH_SOURCES`: a JSON file {"port", "ca" (a PEM file), "hosts"};
`ALMANAC_BENCH_ROOM_TIMES`: a file each run appends one JSON line to;
`ALMANAC_BENCH_CLOCK` (optional): the simulated clock's file; unset, the real clock.
"""

from __future__ import annotations

import json
import os
import resource
import ssl
import time
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import dagster as dg

from almanac.definitions import build_definitions, run_worker_selection
from almanac.orchestration.pipeline import RunPipeline
from almanac.platform.store.engine import make_engine
from almanac.sandbox.download import SourceDownloader
from almanac.sandbox.room import LockedRoom, RoomResult
from almanac.sensors.runs import evaluation_time
from almanac.sensors.upload_checks import DownloaderSources
from almanac.settings import load_settings
from tests.orchestration.harness import PUBLIC_STAND_IN
from tests.sandbox.tls_server import LoopbackDialer, TableResolver

SOURCES_ENV = "ALMANAC_BENCH_SOURCES"
ROOM_TIMES_ENV = "ALMANAC_BENCH_ROOM_TIMES"
CLOCK_ENV = "ALMANAC_BENCH_CLOCK"


class SimulatedClock:
    """A clock that runs at the real pace from an instant the benchmark sets, shared through a
    file by every process (the benchmark, the code server, the run workers): the file holds
    the simulated instant and the real time (Unix seconds) it was set at."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._read: tuple[float, datetime, float] | None = None

    def set(self, at: datetime) -> None:
        text = json.dumps({"at": at.astimezone(UTC).isoformat(), "real": time.time()})
        part = self.path.with_suffix(".part")
        part.write_text(text)
        part.replace(self.path)

    def __call__(self) -> datetime:
        stamp = self.path.stat().st_mtime
        if self._read is None or self._read[0] != stamp:
            data = json.loads(self.path.read_text())
            self._read = (stamp, datetime.fromisoformat(data["at"]), float(data["real"]))
        _, at, real = self._read
        return at + timedelta(seconds=time.time() - real)


def location_clock() -> Callable[[], datetime] | None:
    """The simulated clock the benchmark named, or None (the real clock)."""
    path = os.environ.get(CLOCK_ENV)
    return SimulatedClock(Path(path)) if path else None


class NotingRoom:
    """The real locked room; each run appends {pid, enter, leave, peak_rss_kb} to a file."""

    def __init__(self, times: Path) -> None:
        self.room = LockedRoom()
        self.times = times

    def run(self, *args: Any, **kwargs: Any) -> RoomResult:
        enter = time.time()
        try:
            return self.room.run(*args, **kwargs)
        finally:
            leave = time.time()
            peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
            line = {"pid": os.getpid(), "enter": enter, "leave": leave, "peak_rss_kb": peak}
            with self.times.open("a") as out:
                out.write(json.dumps(line) + "\n")


def loopback_downloader(
    base_url: str, config: dict[str, Any], clock: Callable[[], datetime] | None = None
) -> SourceDownloader:
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    context.load_verify_locations(cafile=config["ca"])
    return SourceDownloader(
        base_url=base_url,
        clock=clock or (lambda: datetime.now(UTC)),
        resolver=TableResolver({host: [PUBLIC_STAND_IN] for host in config["hosts"]}),
        dialer=LoopbackDialer({PUBLIC_STAND_IN: int(config["port"])}),
        ssl_context=context,
        deadline_seconds=20,
    )


@dg.definitions
def defs() -> dg.Definitions:
    settings = load_settings()
    engine = make_engine(settings.database_url)
    config = json.loads(Path(os.environ[SOURCES_ENV]).read_text())
    clock = location_clock()
    downloader = loopback_downloader(settings.base_url, config, clock)
    room = NotingRoom(Path(os.environ[ROOM_TIMES_ENV]))
    pipeline = RunPipeline(
        engine,
        downloader=downloader,
        room=room,
        clock=clock or (lambda: datetime.now(UTC)),
        base_url=settings.base_url,
    )
    nowhere = SourceDownloader(base_url=settings.base_url, resolver=TableResolver({}))
    return build_definitions(
        settings=settings,
        engine=engine,
        pipeline=pipeline,
        clock=clock or evaluation_time,
        check_sources=lambda: DownloaderSources(nowhere, nowhere),
        # The plug-ins' checks run from their own sensor outside the plug-ins' pool; their
        # runs would share the sensor iterations measured here.
        plugin_checks=False,
        only=run_worker_selection(),
    )
