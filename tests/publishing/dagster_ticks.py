"""The real Dagster machinery for the domain re-checks, at moments the test chooses: an instance
with the service's own dagster.yaml (plus the synchronous in-process launcher), a code location
loaded from `almanac.definitions.build_definitions` over the store, the sensor daemon's
iteration and the run queue's iteration, each under Dagster's `freeze_time` at the frozen
clock's moment (the same clock the sensor is given)."""

from __future__ import annotations

import contextlib
import logging
import threading
from collections.abc import Callable, Iterator
from pathlib import Path

import dagster as dg
from dagster._core.definitions.reconstruct import ReconstructableJob
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

from tests.orchestration.harness import FrozenClock, write_dagster_home

_BUILD: Callable[[], dg.Definitions] | None = None
_LOCK = threading.Lock()


@dg.definitions
def ticking_definitions() -> dg.Definitions:
    """The code location the workspace loads (and each run reconstructs)."""
    if _BUILD is None:
        raise RuntimeError("no Ticker is open in this process")
    return dg.Definitions.merge(_BUILD(), dg.Definitions(executor=dg.in_process_executor))


class Ticker:
    """`step(at)`: the clock moves to `at`, the sensor daemon evaluates the sensors, the run
    queue launches what was asked, and each launched run executes to its end."""

    instance: dg.DagsterInstance
    workspace: WorkspaceProcessContext

    def __init__(self, clock: FrozenClock) -> None:
        self.clock = clock
        self.queue = QueuedRunCoordinatorDaemon(interval_seconds=1)
        self.logger = logging.getLogger("almanac.tests.publishing")

    @classmethod
    @contextlib.contextmanager
    def open(
        cls, folder: Path, clock: FrozenClock, build: Callable[[], dg.Definitions]
    ) -> Iterator[Ticker]:
        global _BUILD
        ticker = cls(clock)
        home = write_dagster_home(folder / "dagster")
        target = InProcessTestWorkspaceLoadTarget(
            InProcessCodeLocationOrigin(
                LoadableTargetOrigin(module_name=__name__, attribute="ticking_definitions"),
                location_name="almanac_publishing_test",
            )
        )
        with _LOCK:
            if _BUILD is not None:
                raise RuntimeError("only one Ticker may be open at a time")
            _BUILD = build
        try:
            with dg.DagsterInstance.from_config(str(home)) as instance:
                ticker.instance = instance
                with (
                    create_test_daemon_workspace_context(target, instance) as workspace,
                    ticker.queue,
                ):
                    ticker.workspace = workspace
                    yield ticker
        finally:
            with _LOCK:
                _BUILD = None

    def step(self, at: object = None) -> list[dg.DagsterRun]:
        """One sensor tick and the queue's iteration(s) at the clock's moment (moved to `at`
        first when given); the runs launched, each finished."""
        if at is not None:
            self.clock.set(at)  # type: ignore[arg-type]
        before = {r.run_id for r in self.instance.get_runs()}
        with freeze_time(self.clock.now):
            self.workspace.refresh_workspace()
            for _ in execute_sensor_iteration(self.workspace, self.logger, None, None):
                pass
        created = [r.run_id for r in self.instance.get_runs() if r.run_id not in before]
        ReconstructableJob.get_repository_definition.cache_clear()
        ReconstructableJob.get_definition.cache_clear()
        with freeze_time(self.clock.now):
            for _ in self.queue.run_iteration(
                self.workspace, fixed_iteration_time=self.clock.now.timestamp()
            ):
                pass
        runs = [self.instance.get_run_by_id(run_id) for run_id in created]
        return [r for r in runs if r is not None]

    def sensor_skip_reasons(self, sensor_name: str) -> list[str]:
        """The skip reasons of the sensor's ticks so far, newest first."""
        state = next(
            s for s in self.instance.all_instigator_state() if s.instigator_name == sensor_name
        )
        ticks = self.instance.get_ticks(state.instigator_origin_id, state.selector_id)
        return [t.skip_reason or "" for t in ticks]
