"""The run launcher `almanac up` configures: each run worker is `dagster api execute_run`,
forked from a warm process instead of a fresh interpreter (issue 19, run overhead).

Dagster's default launcher asks the code server to start each run, and the code server spawns
a new interpreter that imports Dagster and the code location before the run's first event:
seconds a run, more than the whole run on a small plug-in. This launcher starts the run worker
with Python's own `forkserver` start method: one server process, started once by the launching
process (the daemon), imports Dagster and the code location's module; each run is a fork of it
that runs exactly what `dagster api execute_run` runs (the command Dagster's Docker and
Kubernetes launchers run in their containers). The server holds no connection and no thread, so
a fork of it is as clean as a new process. A run worker still reads its run, the instance and
the definitions for itself, and gets the launching process's environment as it is at launch,
as a spawned process would.

Runs whose code location lives in another Python environment than the daemon's go through the
code server as with `DefaultRunLauncher`. Termination and the run monitoring's health check go
by the worker's process id and its start time (kept as run tags: a process id is reused once
its process ended, the pair is not), so the webserver and the daemon can both stop a run;
both run on the machine the run workers run on, which is what this launcher is for. For more
machines, Docker's or Kubernetes' launcher (README, "Running in production").
"""

from __future__ import annotations

import multiprocessing
import os
import signal
import sys
from collections.abc import Mapping
from multiprocessing.context import ForkServerContext
from multiprocessing.process import BaseProcess
from typing import Any, Self

import dagster as dg

from almanac.assets.dagster_private import (
    CheckRunHealthResult,
    ConfigurableClassData,
    ExecuteRunArgs,
    LaunchRunContext,
    WorkerStatus,
    execute_run_command,
)

PID_TAG = "almanac/run_worker_pid"
STARTED_TAG = "almanac/run_worker_started"
"""The worker's start time in clock ticks since boot (/proc/<pid>/stat, field 22)."""
PRELOAD = (
    "dagster",
    "dagster._cli.api",
    "dagster._core.executor.in_process",
    "dagster._core.execution.plan.active",
    "almanac.definitions",
)


def run_worker(serialized_args: str, environment: Mapping[str, str]) -> None:
    """A run worker's body, in a fork of the server: the launching process's environment, then
    `dagster api execute_run` with the run's arguments (it exits non-zero when the run fails to
    start or, if asked, fails)."""
    os.environ.clear()
    os.environ.update(environment)
    execute_run_command.callback(input_json=serialized_args, compressed_input_json=None)  # type: ignore[misc]


class ForkServerRunLauncher(dg.DefaultRunLauncher):
    """Launches each run as a fork of a warm server process on this machine; see the module."""

    def __init__(
        self, inst_data: ConfigurableClassData | None = None, preload: list[str] | None = None
    ) -> None:
        super().__init__(inst_data=inst_data)
        self._preload = list(preload) if preload is not None else list(PRELOAD)
        self._workers: dict[str, BaseProcess] = {}
        self._forkserver: ForkServerContext | None = None

    @classmethod
    def config_type(cls) -> dict[str, Any]:
        return {"preload": dg.Field([str], is_required=False)}

    @classmethod
    def from_config_value(
        cls, inst_data: ConfigurableClassData, config_value: Mapping[str, Any]
    ) -> Self:
        return cls(inst_data=inst_data, preload=config_value.get("preload"))

    def launch_run(self, context: LaunchRunContext) -> None:
        run = context.dagster_run
        origin = run.job_code_origin
        if origin is None or origin.executable_path != sys.executable:
            super().launch_run(context)
            return
        self._reap()
        arguments = ExecuteRunArgs(
            job_origin=origin,
            run_id=run.run_id,
            instance_ref=self._instance.get_ref(),
            set_exit_code_on_failure=True,
        )
        worker = self._context(origin.repository_origin.code_pointer).Process(
            target=run_worker,
            args=(dg.serialize_value(arguments), dict(os.environ)),
            name=f"run-worker-{run.run_id}",
        )
        worker.start()
        self._workers[run.run_id] = worker
        assert worker.pid is not None
        tags = {PID_TAG: str(worker.pid)}
        started = _process_started(worker.pid)
        if started is not None:
            tags[STARTED_TAG] = started
        self._instance.add_run_tags(run.run_id, tags)

    def _context(self, code_pointer: object) -> ForkServerContext:
        """The forkserver context. Its server, started at the first launch, imports once for
        every later run what each run worker would import: Dagster, Almanac's definitions, the
        run's code location module, and the modules of this instance's storages and compute log
        manager (a run worker's instance is made of the same classes; SQLite's storage or
        dagster-postgres alone take a quarter of a second to import)."""
        if self._forkserver is not None:
            # The server has started with the first launch's preload; later ones change nothing.
            return self._forkserver
        context = multiprocessing.get_context("forkserver")
        assert isinstance(context, ForkServerContext)
        module = getattr(code_pointer, "module", None)
        instance = self._instance
        parts = (
            instance.run_storage,
            instance.event_log_storage,
            instance.schedule_storage,
            instance.compute_log_manager,
        )
        preload = [
            *self._preload,
            *([module] if isinstance(module, str) else []),
            *(type(part).__module__ for part in parts if part is not None),
        ]
        context.set_forkserver_preload(list(dict.fromkeys(preload)))
        self._forkserver = context
        return context

    def _reap(self) -> None:
        """Forget the workers that ended (their process objects hold a descriptor each)."""
        for run_id, worker in list(self._workers.items()):
            if not worker.is_alive():
                worker.join()
                worker.close()
                del self._workers[run_id]

    def _worker_pid(self, run: dg.DagsterRun) -> int | None:
        value = run.tags.get(PID_TAG)
        return int(value) if value and value.isdigit() else None

    def _worker_running(self, run: dg.DagsterRun, pid: int) -> bool:
        """Whether `pid` is still the run's worker: live, and started when the worker did (a
        run tagged before the start time was kept goes by the process id alone)."""
        started = _process_started(pid)
        return started is not None and run.tags.get(STARTED_TAG, started) == started

    def terminate(self, run_id: str) -> bool:
        if not self.has_instance:
            return False
        run = self._instance.get_run_by_id(run_id)
        if run is None or run.is_finished:
            return False
        pid = self._worker_pid(run)
        if pid is None:
            return bool(super().terminate(run_id))  # type: ignore[no-untyped-call]
        if not self._worker_running(run, pid):
            return False
        self._instance.report_run_canceling(run)
        # SIGTERM is an interrupt to `dagster api execute_run`: the run ends as canceled.
        try:
            os.kill(pid, signal.SIGTERM)
        except ProcessLookupError:
            return False
        return True

    @property
    def supports_check_run_worker_health(self) -> bool:
        return True

    def check_run_worker_health(self, run: dg.DagsterRun) -> CheckRunHealthResult:
        pid = self._worker_pid(run)
        if pid is None:
            # Started through a code server, as `DefaultRunLauncher` does: not checked, as there.
            return CheckRunHealthResult(WorkerStatus.RUNNING, "started through a code server")
        if self._worker_running(run, pid):
            return CheckRunHealthResult(WorkerStatus.RUNNING, run_worker_id=str(pid))
        return CheckRunHealthResult(
            WorkerStatus.FAILED, f"run worker process {pid} is gone", run_worker_id=str(pid)
        )

    def dispose(self) -> None:
        self._reap()
        super().dispose()


def _process_started(pid: int) -> str | None:
    """When the live process `pid` started (clock ticks since boot), or None when there is none
    (a zombie that has not been reaped counts as gone)."""
    try:
        # Bytes: the command in parentheses is any process's, in any encoding.
        with open(f"/proc/{pid}/stat", "rb") as stat:
            fields = stat.read().rsplit(b")", 1)[1].decode("ascii").split()
    except (FileNotFoundError, ProcessLookupError):
        return None
    # After the command: state is field 3 of the file, the start time field 22.
    if len(fields) < 20 or fields[0] in ("Z", "X"):
        return None
    return fields[19]
