"""A reusable harness for orchestration tests: the real Dagster machinery over a real store, at
moments the test chooses.

What is real: the Dagster instance (a temporary DAGSTER_HOME with the service's own dagster.yaml:
QueuedRunCoordinator, pools counted per run, SQLite storage), the code location (loaded in this
process from `harness_definitions`, i.e. `almanac.definitions.build_definitions` over the store),
the sensor daemon's iteration (`dagster._daemon.sensor.execute_sensor_iteration`: run keys, run
creation, submission to the queue), the run queue's iteration
(`QueuedRunCoordinatorDaemon.run_iteration`: the pool's limit), the run itself (Dagster's
synchronous in-process launcher executes the asset and its IO manager), the source downloads
(`SourceDownloader` over TLS, certificate checked against a test CA, address policy on), and the
locked room (`LockedRoom`, bubblewrap).

What the harness chooses: the moment. `FrozenClock` is passed to the sensor (`clock=`), the run
pipeline and the downloader; each step also runs under Dagster's own `freeze_time` at that
moment, so the daemon's minimum-interval bookkeeping and run timestamps agree with it.

Two deliberate differences from production, both forced by running in one test process:
- runs execute in this process (production's run worker is a subprocess started by the code
  server; both run the step in the run worker's process with the in-process executor, and both
  load only the run's plug-in asset: `almanac.definitions.run_worker_selection`);
- the code location is reloaded from the store before each sensor evaluation (production's
  daemon reloads its workspace every 60 seconds; the sensor skips plug-ins it has not loaded).

Sources: the downloader refuses loopback addresses (Source download rule 3), so the test
resolver answers a public stand-in address for every host and the dialer carries connections
for that address to the loopback TLS server, as `tests/sandbox/test_download.py` does.

Reuse (the end-to-end test across all examples can do this)::

    with SourceServer(hosts_of(example)) as server, Orchestrator.open(tmp_path, engine,
            downloader=server.downloader) as orch:
        server.serve_example(example)
        register_folder(engine, example, now=orch.clock.now); approve(...)
        orch.minute(at)            # sensor tick + queue iteration(s); runs execute
"""

from __future__ import annotations

import contextlib
import json
import logging
import multiprocessing
import multiprocessing.process
import threading
import time
from collections.abc import Callable, Collection, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit
from zoneinfo import ZoneInfo

import dagster as dg
import trustme
from dagster._core.definitions.reconstruct import ReconstructableJob
from dagster._core.execution.api import execute_run
from dagster._core.launcher.sync_in_memory_run_launcher import SyncInMemoryRunLauncher
from dagster._core.remote_origin import InProcessCodeLocationOrigin
from dagster._core.test_utils import (
    InProcessTestWorkspaceLoadTarget,
    create_test_daemon_workspace_context,
    freeze_time,
)
from dagster._core.types.loadable_target_origin import LoadableTargetOrigin
from dagster._core.workspace.context import WorkspaceProcessContext
from dagster._daemon.run_coordinator.queued_run_coordinator_daemon import (
    QueuedRunCoordinatorDaemon,
)
from dagster._daemon.sensor import execute_sensor_iteration
from dagster._utils.hosted_user_process import recon_job_from_origin
from sqlalchemy import Engine, select

from almanac.assets.control import dagster_yaml, prepare_dagster_storage, set_run_slots
from almanac.assets.tags import TAG_PLUGIN, TAG_SCHEDULED_FOR, TAG_TRIGGER
from almanac.definitions import build_definitions, run_worker_selection
from almanac.orchestration.catalog import load_catalog
from almanac.orchestration.pipeline import Room, RunPipeline
from almanac.platform.store import moves
from almanac.platform.store.engine import write_transaction
from almanac.platform.store.models import Run
from almanac.platform.store.plugins import plugin_status
from almanac.sandbox.download import SourceDownloader
from almanac.sandbox.room import LockedRoom
from almanac.sensors.asset_checks import AREA, TAG_AREA
from almanac.sensors.upload_checks import DownloaderSources
from almanac.settings import Settings
from tests.sandbox.tls_server import Handler, LoopbackDialer, TableResolver, TLSServer

BASE_URL = "https://almanac.test"
PUBLIC_STAND_IN = "93.184.216.34"
"""The public address the test resolver answers for every source host (loopback is refused by
the address policy); the test dialer carries it to the loopback TLS server."""
LOCATION = "almanac_test"
HARNESS_BY = "host@example.org"


# -- the clock -------------------------------------------------------------------------------


@dataclass
class FrozenClock:
    """The one clock of a test: `now` moves only when the test moves it."""

    now: datetime = field(default_factory=lambda: datetime(2026, 1, 1, tzinfo=UTC))

    def __call__(self) -> datetime:
        return self.now

    def set(self, at: datetime) -> None:
        if at.tzinfo is None:
            raise ValueError("the clock takes aware instants")
        self.now = at.astimezone(UTC)


# -- sources ---------------------------------------------------------------------------------


def manifest_of(folder: Path) -> dict[str, Any]:
    return json.loads((folder / "plugin.json").read_text())


def hosts_of(*folders: Path) -> tuple[str, ...]:
    """Every host the manifests' sources name."""
    hosts = {urlsplit(s["url"]).hostname for f in folders for s in manifest_of(f)["sources"]}
    return tuple(sorted(h for h in hosts if h))


def example_routes(folder: Path) -> dict[str, bytes]:
    """URL path -> the example's fixture file, for each declared source (its URL must hold no
    `{today}` placeholders; the examples' do not)."""
    routes = {}
    for source in manifest_of(folder)["sources"]:
        path = urlsplit(source["url"]).path
        routes[path] = (folder / "fixtures" / "sources" / source["name"]).read_bytes()
    return routes


class SourceServer:
    """A real HTTPS server on loopback, signed by its own test CA, answering for `hosts`.

    `serve(path, body)` answers 200 with `body`; `fail(path, status)` answers that status;
    `serve_example(folder)` serves an example's fixtures/sources files under the paths of its
    manifest's URLs. `downloader(clock)` is the service's own `SourceDownloader` trusting only
    the test CA, with every host resolving to a public stand-in carried to this server."""

    def __init__(self, hosts: Sequence[str]) -> None:
        self.ca = trustme.CA()
        self.hosts = tuple(hosts)
        self._server = TLSServer(self.ca, self.hosts)

    def __enter__(self) -> SourceServer:
        self._server.__enter__()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.__exit__(*exc)

    @property
    def port(self) -> int:
        """The loopback port the server listens on (a stand-in address's connections go there)."""
        return self._server.port

    @property
    def requests(self) -> list[str]:
        """Paths requested so far, in order."""
        return [r.path for r in self._server.requests]

    def serve(self, path: str, body: bytes, *, delay: float = 0.0) -> None:
        """Answer `path` with `body`, `delay` seconds after the request came."""

        def route(handler: Handler) -> None:
            if delay:
                time.sleep(delay)
            handler.reply(200, body, {"Content-Type": "application/octet-stream"})

        self._server.routes[path] = route

    def answer(self, path: str, route: Callable[[Handler], None]) -> None:
        """Answer `path` as `route` does with the request's handler."""
        self._server.routes[path] = route

    def fail(self, path: str, status: int = 404) -> None:
        def route(handler: Handler) -> None:
            handler.reply(status, f"status {status}".encode())

        self._server.routes[path] = route

    def serve_example(self, folder: Path) -> None:
        for path, body in example_routes(folder).items():
            self.serve(path, body)

    def downloader(self, clock: Callable[[], datetime]) -> SourceDownloader:
        import ssl

        context = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
        self.ca.configure_trust(context)
        return SourceDownloader(
            base_url=BASE_URL,
            clock=clock,
            resolver=TableResolver({host: [PUBLIC_STAND_IN] for host in self.hosts}),
            dialer=LoopbackDialer({PUBLIC_STAND_IN: self._server.port}),
            ssl_context=context,
            deadline_seconds=20,
        )


# -- a small plug-in folder ------------------------------------------------------------------

TRIVIAL_FETCHER = """\
// Prints one happened event dated today; exits 2 when its source does not say "ok".
import { readFileSync } from 'node:fs';
const context = JSON.parse(readFileSync(0, 'utf8'));
const text = readFileSync(context.sources.data, 'utf8').trim();
if (text !== 'ok') {
  process.stderr.write(`the source says ${JSON.stringify(text.slice(0, 40))}, not ok\\n`);
  process.exit(2);
}
process.stdout.write(JSON.stringify({
  kind: 'event', series: 'ticks', date: context.today, id: `tick-${context.today}`,
  state: 'happened', title: 'Tick',
}) + '\\n');
"""


def source_host(plugin_id: str) -> str:
    return f"{plugin_id}.example.org"


def source_path(plugin_id: str) -> str:
    return f"/{plugin_id}/data.txt"


def write_plugin(
    parent: Path,
    plugin_id: str,
    *,
    schedule: str,
    timezone: str,
    version: str = "1.0.0",
    fetcher: str = TRIVIAL_FETCHER,
) -> Path:
    """Write a small plug-in folder `parent/<id>`: one source at
    `https://<id>.example.org/<id>/data.txt` (serve "ok" for a success), one event series."""
    folder = parent / plugin_id
    folder.mkdir(parents=True, exist_ok=True)
    manifest = {
        "contract": 1,
        "id": plugin_id,
        "name": {"en": f"Test plug-in {plugin_id}"},
        "version": version,
        "timezone": timezone,
        "audience": "public",
        "schedule": schedule,
        "backfill": "all",
        "sources": [
            {
                "name": "data",
                "url": f"https://{source_host(plugin_id)}{source_path(plugin_id)}",
                "maxBytes": 1024,
            }
        ],
        "series": [
            {
                "key": "ticks",
                "kind": "event",
                "cadence": "irregular",
                "dates": "observation",
                "name": {"en": "Ticks"},
            }
        ],
        "limits": {"seconds": 20, "megabytes": 128},
        "licence": {"holder": "Test holder", "terms": "Public domain", "retain": "yes"},
    }
    (folder / "plugin.json").write_text(json.dumps(manifest, indent=2) + "\n")
    (folder / "fetch.mjs").write_text(fetcher)
    # The fixtures a folder keeps (one real copy of each source, the context and the records
    # the fetcher prints for them); the service never copies them into the room.
    fixtures = folder / "fixtures"
    (fixtures / "sources").mkdir(parents=True, exist_ok=True)
    (fixtures / "sources" / "data").write_text("ok\n")
    now = datetime(2026, 1, 15, 12, 0, tzinfo=UTC)
    today = now.astimezone(ZoneInfo(timezone)).date().isoformat()
    context = {"now": "2026-01-15T12:00:00Z", "today": today}
    (fixtures / "context.json").write_text(json.dumps(context, indent=2) + "\n")
    record = {
        "kind": "event",
        "series": "ticks",
        "date": today,
        "id": f"tick-{today}",
        "state": "happened",
        "title": "Tick",
    }
    (fixtures / "records.jsonl").write_text(json.dumps(record, separators=(",", ":")) + "\n")
    return folder


# -- the store's side --------------------------------------------------------------------------


def approve(engine: Engine, plugin_id: str, now: datetime, digest: str | None = None) -> int:
    """A person approves the current version (by the digest shown: the current one unless
    given); returns the run request id."""
    with write_transaction(engine) as conn:
        if digest is None:
            digest = plugin_status(conn, plugin_id).current_digest
        assert digest is not None
        return moves.approve(conn, plugin_id, digest_shown=digest, by=HARNESS_BY, now=now)


def state_of(engine: Engine, plugin_id: str) -> str:
    with engine.connect() as conn:
        return str(plugin_status(conn, plugin_id).state)


def store_runs(engine: Engine, plugin_id: str) -> list[dict[str, Any]]:
    """The plug-in's stored runs, oldest first."""
    table = Run.__table__
    query = select(table).where(table.c.plugin_id == plugin_id).order_by(table.c.id)
    with engine.connect() as conn:
        return [dict(r) for r in conn.execute(query).mappings()]


# -- Dagster ---------------------------------------------------------------------------------


class ForkedRunLauncher(SyncInMemoryRunLauncher):
    """Each run executes in a fork of the test process, with an instance of its own from the
    launching instance's reference (as a run worker makes it): runs the pool lets go together
    go at once (the synchronous launcher executes one after the other, inside the queue's
    iteration; Dagster's execution is not safe in threads). The fork inherits the open
    orchestrator, so the run loads the same code location. `join` waits for the runs."""

    def __init__(self, inst_data: Any = None) -> None:
        super().__init__(inst_data=inst_data)
        self.workers: list[multiprocessing.process.BaseProcess] = []

    def launch_run(self, context: Any) -> None:
        forks = multiprocessing.get_context("fork")
        worker = forks.Process(
            target=_execute_forked,
            args=(context.job_code_origin, context.dagster_run.run_id, self._instance.get_ref()),
            daemon=True,
        )
        worker.start()
        self.workers.append(worker)

    def join(self, timeout: float = 120.0) -> None:
        for worker in self.workers:
            worker.join(timeout)
            assert worker.exitcode is not None, "a run did not end"


def _execute_forked(origin: Any, run_id: str, instance_ref: Any) -> None:
    """A forked run worker's body: the store's pooled connections are the parent's, so its
    engine lets them go unclosed and opens its own."""
    if _ACTIVE is not None:
        _ACTIVE.engine.dispose(close=False)
    with dg.DagsterInstance.from_ref(instance_ref) as instance:
        run = instance.get_run_by_id(run_id)
        assert run is not None
        execute_run(recon_job_from_origin(origin), run, instance)


def write_dagster_home(
    home: Path, database_url: str = "sqlite:///unused.db", *, concurrent: bool = False
) -> Path:
    """A DAGSTER_HOME whose dagster.yaml is the service's own (`dagster_yaml`: queued runs,
    pools per run, run monitoring; SQLite storage under the home for a SQLite store URL), plus
    an in-process run launcher so that runs execute in the test process: synchronously, or
    each in a fork of it when `concurrent`."""
    home.mkdir(parents=True, exist_ok=True)
    settings = Settings(
        home=home.parent, api_port=0, dagster_port=0, database_url=database_url, base_url=BASE_URL
    )
    launcher = (
        (__name__, "ForkedRunLauncher")
        if concurrent
        else ("dagster._core.launcher.sync_in_memory_run_launcher", "SyncInMemoryRunLauncher")
    )
    (home / "dagster.yaml").write_text(dagster_yaml(settings, run_launcher=launcher))
    return home


_ACTIVE: Orchestrator | None = None
_ACTIVE_LOCK = threading.Lock()


@dg.definitions
def harness_definitions() -> dg.Definitions:
    """The code location the harness's workspace loads: the active orchestrator's definitions;
    a run's own load (the launcher reconstructing it) builds only the run's plug-ins, as a
    production run worker does."""
    if _ACTIVE is None:
        raise RuntimeError("no Orchestrator is open in this process")
    return _ACTIVE.build(only=run_worker_selection())


@dataclass(frozen=True)
class Minute:
    """What one minute of orchestration did: runs the sensor created (queued), plug-in runs
    the queue launched (executed to the end, in order), and the runs of the versions' checks
    job it launched beside them (their own pool)."""

    created: list[dg.DagsterRun]
    launched: list[dg.DagsterRun]
    checks: list[dg.DagsterRun] = field(default_factory=list)
    plugin_checks: list[dg.DagsterRun] = field(default_factory=list)
    """The runs of the plug-ins' asset checks and alerts (only with `plugin_checks=True`)."""

    @property
    def launched_plugins(self) -> list[str]:
        return [r.tags[TAG_PLUGIN] for r in self.launched]


class Orchestrator:
    """One Dagster instance, one code location over the store, the sensor daemon and the run
    queue's daemon, stepped at moments of the test's choosing.

    `minute(at)`: the clock moves to `at`; the code location reloads from the store; the
    sensor daemon evaluates due sensors (the minute sensor, the run-failure sensor); the queue
    daemon launches what the pool allows; each launched run executes to its end. Returns a
    `Minute`. `tick(at)` and `dequeue(at)` are the two halves on their own."""

    instance: dg.DagsterInstance
    workspace: WorkspaceProcessContext

    def __init__(
        self,
        engine: Engine,
        pipeline: RunPipeline,
        clock: FrozenClock,
        *,
        plugin_checks: bool = False,
        mailer: Callable[[], Any] | None = None,
    ) -> None:
        self.engine = engine
        self.pipeline = pipeline
        self.clock = clock
        self.plugin_checks = plugin_checks
        self.mailer = mailer
        self.queue = QueuedRunCoordinatorDaemon(interval_seconds=1)
        self.logger = logging.getLogger("almanac.tests.orchestration")

    @classmethod
    @contextlib.contextmanager
    def open(
        cls,
        folder: Path,
        engine: Engine,
        *,
        downloader: Callable[[FrozenClock], Any],
        room: Room | None = None,
        start: datetime | None = None,
        slots: int = 1,
        plugin_checks: bool = False,
        mailer: Callable[[], Any] | None = None,
        dagster_on_store: bool = False,
        concurrent: bool = False,
    ) -> Iterator[Orchestrator]:
        """Open the instance under `folder/dagster`, a workspace over `harness_definitions`,
        and a pipeline with `downloader(clock)` and `room` (default: the real LockedRoom), the
        pool's limit set to `slots`. The plug-ins' asset checks and alerts (their sensor starts
        a run every 15 minutes and after each plug-in run) are left out unless
        `plugin_checks`; `mailer` makes their mailer (default: the outbox). `dagster_on_store`:
        Dagster's storage in the store's PostgreSQL database (its own schema), as the service
        keeps it there. `concurrent`: each launched run executes in a fork of the test process
        (`ForkedRunLauncher`: `dequeue` returns while they go; `join_runs` waits)."""
        global _ACTIVE
        clock = FrozenClock(start or datetime(2026, 1, 1, tzinfo=UTC))
        pipeline = RunPipeline(
            engine,
            downloader=downloader(clock),
            room=room or LockedRoom(),
            clock=clock,
            work_dir=folder,
            base_url=BASE_URL,
        )
        orchestrator = cls(engine, pipeline, clock, plugin_checks=plugin_checks, mailer=mailer)
        if dagster_on_store:
            url = engine.url.render_as_string(hide_password=False)
            prepare_dagster_storage(Settings(folder, 0, 0, url, BASE_URL))
            home = write_dagster_home(folder / "dagster", url, concurrent=concurrent)
        else:
            home = write_dagster_home(folder / "dagster", concurrent=concurrent)
        target = InProcessTestWorkspaceLoadTarget(
            InProcessCodeLocationOrigin(
                LoadableTargetOrigin(module_name=__name__, attribute="harness_definitions"),
                location_name=LOCATION,
            )
        )
        with _ACTIVE_LOCK:
            if _ACTIVE is not None:
                raise RuntimeError("only one Orchestrator may be open at a time")
            _ACTIVE = orchestrator
        try:
            with dg.DagsterInstance.from_config(str(home)) as instance:
                set_run_slots(instance, slots)
                orchestrator.instance = instance
                with (
                    create_test_daemon_workspace_context(target, instance) as workspace,
                    orchestrator.queue,
                ):
                    orchestrator.workspace = workspace
                    yield orchestrator
        finally:
            with _ACTIVE_LOCK:
                _ACTIVE = None

    def _check_sources(self) -> DownloaderSources:
        """The versions' checks download through the pipeline's own test downloader: its hosts
        resolve to the loopback source server, any other host to nothing, so no check reaches
        past this machine."""
        downloader = self.pipeline.downloader
        if not isinstance(downloader, SourceDownloader):
            downloader = SourceDownloader(base_url=BASE_URL, resolver=TableResolver({}))
        return DownloaderSources(downloader, downloader)

    def build(self, only: Collection[str] | None = None) -> dg.Definitions:
        """The service's definitions over the store now (catalog read afresh), run in-process;
        `only`: the plug-ins whose assets are built (all when None)."""
        with self.engine.connect() as conn:
            catalog = load_catalog(conn)
        defs = build_definitions(
            settings=Settings(
                home=Path("/nonexistent"),
                api_port=0,
                dagster_port=0,
                database_url=str(self.engine.url),
                base_url=BASE_URL,
            ),
            engine=self.engine,
            pipeline=self.pipeline,
            catalog=catalog,
            clock=self.clock,
            check_sources=self._check_sources,
            plugin_checks=self.plugin_checks,
            mailer=self.mailer,
            only=only,
        )
        return dg.Definitions.merge(defs, dg.Definitions(executor=dg.in_process_executor))

    # -- stepping --------------------------------------------------------------------------

    def _run_ids(self) -> set[str]:
        return {r.run_id for r in self.instance.get_runs()}

    def tick(self, at: datetime | None = None) -> list[dg.DagsterRun]:
        """One sensor daemon iteration at `at`: returns the runs it created."""
        if at is not None:
            self.clock.set(at)
        before = self._run_ids()
        with freeze_time(self.clock.now):
            self.workspace.refresh_workspace()
            for _ in execute_sensor_iteration(self.workspace, self.logger, None, None):
                pass
        return self._new_runs(before)

    def dequeue(self, at: datetime | None = None) -> list[dg.DagsterRun]:
        """One run-queue iteration at `at`: returns the runs it launched (each executed to its
        end by the synchronous launcher), in launch order."""
        if at is not None:
            self.clock.set(at)
        # Run workers are fresh processes in production; here they share this process, whose
        # reconstructed job is cached by Dagster (per code pointer): drop it so each run loads
        # the code location as it is now (its plug-ins, this orchestrator's pipeline).
        ReconstructableJob.get_repository_definition.cache_clear()
        ReconstructableJob.get_definition.cache_clear()
        with freeze_time(self.clock.now):
            queued = {r.run_id for r in self.queued()}
            for _ in self.queue.run_iteration(
                self.workspace, fixed_iteration_time=self.clock.now.timestamp()
            ):
                pass
        launched = [r for r in self.instance.get_runs(ascending=True) if r.run_id in queued]
        return [r for r in launched if r.status != dg.DagsterRunStatus.QUEUED]

    def minute(self, at: datetime | None = None, *, drain: bool = True) -> Minute:
        """`tick` then `dequeue`, repeated while runs are still queued and the pool lets them
        go (one at a time), when `drain`."""
        created = self.tick(at)
        launched = self.dequeue()
        while drain and launched and self.queued():
            more = self.dequeue()
            if not more:
                break
            launched += more
        done = [self.run(r.run_id) for r in launched]
        return Minute(
            created=created,
            launched=[r for r in done if TAG_PLUGIN in r.tags],
            checks=[r for r in done if TAG_PLUGIN not in r.tags and r.tags.get(TAG_AREA) != AREA],
            plugin_checks=[r for r in done if r.tags.get(TAG_AREA) == AREA],
        )

    def _new_runs(self, before: set[str]) -> list[dg.DagsterRun]:
        return [r for r in self.instance.get_runs(ascending=True) if r.run_id not in before]

    def run(self, run_id: str) -> dg.DagsterRun:
        run = self.instance.get_run_by_id(run_id)
        assert run is not None
        return run

    def queued(self) -> list[dg.DagsterRun]:
        return list(
            self.instance.get_runs(
                dg.RunsFilter(statuses=[dg.DagsterRunStatus.QUEUED]), ascending=True
            )
        )

    def set_slots(self, slots: int) -> None:
        set_run_slots(self.instance, slots)

    def join_runs(self) -> None:
        """Wait for the runs a concurrent orchestrator launched to end."""
        launcher = self.instance.run_launcher
        assert isinstance(launcher, ForkedRunLauncher), "not a concurrent orchestrator"
        launcher.join()


def run_summary(run: dg.DagsterRun) -> tuple[str, str, str | None, str]:
    """(plug-in, trigger, scheduled-for, status) of a Dagster run, for assertions."""
    return (
        run.tags[TAG_PLUGIN],
        run.tags[TAG_TRIGGER],
        run.tags.get(TAG_SCHEDULED_FOR),
        run.status.value,
    )


def tags_of(runs: Sequence[dg.DagsterRun], name: str) -> list[str | None]:
    return [r.tags.get(name) for r in runs]


def by_plugin(runs: Sequence[dg.DagsterRun]) -> Mapping[str, list[dg.DagsterRun]]:
    out: dict[str, list[dg.DagsterRun]] = {}
    for run in runs:
        out.setdefault(run.tags[TAG_PLUGIN], []).append(run)
    return out
