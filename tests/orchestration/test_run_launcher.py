"""The run launcher `almanac up` configures (`almanac.run_launcher.ForkServerRunLauncher`): a
real instance from the service's own dagster.yaml, a real code server for this module's probe
location, and runs launched through the instance as the queue daemon launches them.

Each run worker is a fork of one warm server process (not of the launching process, not a new
interpreter), with the launching process's environment as it is at each launch; a run can be
stopped by its worker's process id (canceled, as Dagster's interrupt ends it); the run
monitoring's health check sees a worker that died."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import dagster as dg
import pytest
from dagster._core.test_utils import create_test_daemon_workspace_context
from dagster._core.workspace.load_target import ModuleTarget

from almanac.assets.control import dagster_yaml
from almanac.assets.dagster_private import WorkerStatus
from almanac.compute_logs import FileComputeLogManager
from almanac.run_launcher import PID_TAG, STARTED_TAG, ForkServerRunLauncher
from almanac.settings import Settings
from tests.conftest import REPO

OUT_ENV = "ALMANAC_LAUNCHER_TEST_OUT"
PROBE_ENV = "ALMANAC_LAUNCHER_TEST_PROBE"


@dg.op
def note_process() -> None:
    out = Path(os.environ[OUT_ENV])
    facts = {"pid": os.getpid(), "ppid": os.getppid(), "probe": os.environ.get(PROBE_ENV)}
    (out / f"{os.getpid()}.json").write_text(json.dumps(facts))


@dg.op
def wait_for_release() -> None:
    out = Path(os.environ[OUT_ENV])
    (out / "waiting").write_text(str(os.getpid()))
    deadline = time.monotonic() + 120
    while not (out / "release").exists() and time.monotonic() < deadline:
        time.sleep(0.05)


@dg.op
def print_lines() -> None:
    print("a line on stdout", flush=True)
    print("a line on stderr", file=sys.stderr, flush=True)
    os.write(2, b"a line written to descriptor 2\n")
    children = [
        pid for task in Path("/proc/self/task").iterdir()
        for pid in (task / "children").read_text().split()
    ]  # fmt: skip
    (Path(os.environ[OUT_ENV]) / "children.json").write_text(json.dumps(children))


@dg.job(executor_def=dg.in_process_executor)
def print_job() -> None:
    print_lines()


@dg.job(executor_def=dg.in_process_executor)
def note_job() -> None:
    note_process()


@dg.job(executor_def=dg.in_process_executor)
def waiting_job() -> None:
    wait_for_release()


launcher_location = dg.Definitions(jobs=[note_job, waiting_job, print_job])


class Launching:
    def __init__(self, instance: dg.DagsterInstance, workspace: object, out: Path) -> None:
        self.instance = instance
        self.workspace = workspace
        self.out = out

    def launch(self, job: dg.JobDefinition) -> dg.DagsterRun:
        context = self.workspace.create_request_context()  # type: ignore[attr-defined]
        [entry] = context.get_code_location_entries().values()
        location = entry.code_location
        assert location is not None, entry.load_error
        [repository] = location.get_repositories().values()
        remote = repository.get_full_job(job.name)
        run = self.instance.create_run_for_job(
            job_def=job,
            remote_job_origin=remote.get_remote_origin(),
            job_code_origin=remote.get_python_origin(),
        )
        self.instance.launch_run(run.run_id, context)
        return run

    def wait(self, run: dg.DagsterRun, *statuses: dg.DagsterRunStatus) -> dg.DagsterRun:
        deadline = time.monotonic() + 120
        while True:
            current = self.instance.get_run_by_id(run.run_id)
            assert current is not None
            if current.status in statuses:
                return current
            assert not current.is_finished, (current.status, self.messages(run))
            assert time.monotonic() < deadline, f"{run.run_id} still {current.status}"
            time.sleep(0.05)

    def messages(self, run: dg.DagsterRun) -> list[str]:
        return [e.message for e in self.instance.all_logs(run.run_id)]

    def noted(self) -> list[dict[str, object]]:
        return [json.loads(p.read_text()) for p in sorted(self.out.glob("*.json"))]


@pytest.fixture
def launching(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Launching]:
    home = tmp_path / "home"
    settings = Settings(
        home=home,
        api_port=0,
        dagster_port=0,
        database_url=f"sqlite:///{tmp_path / 'store.db'}",
        base_url="https://almanac.test",
    )
    settings.dagster_home.mkdir(parents=True)
    (settings.dagster_home / "dagster.yaml").write_text(dagster_yaml(settings))
    out = tmp_path / "out"
    out.mkdir()
    monkeypatch.setenv("DAGSTER_HOME", str(settings.dagster_home))
    monkeypatch.setenv(OUT_ENV, str(out))
    target = ModuleTarget(
        module_name=__name__,
        attribute="launcher_location",
        working_directory=str(REPO),
        location_name="launcher_test",
    )
    with (
        dg.DagsterInstance.from_config(str(settings.dagster_home)) as instance,
        create_test_daemon_workspace_context(target, instance) as workspace,
    ):
        assert isinstance(instance.run_launcher, ForkServerRunLauncher)
        yield Launching(instance, workspace, out)
        (out / "release").touch()


def _parent_of(pid: int) -> int:
    return int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[1])


def test_each_run_worker_is_a_fork_of_one_server_with_the_environment_at_launch(
    launching: Launching, monkeypatch: pytest.MonkeyPatch
) -> None:
    seen = []
    for probe in ("first", "second"):
        monkeypatch.setenv(PROBE_ENV, probe)
        run = launching.launch(note_job)
        done = launching.wait(run, dg.DagsterRunStatus.SUCCESS)
        [facts] = [f for f in launching.noted() if f not in seen]
        seen.append(facts)
        assert facts["probe"] == probe
        assert done.tags[PID_TAG] == str(facts["pid"])
    first, second = seen
    assert first["pid"] != second["pid"]
    # The same warm server forked both; it is this process's child, the workers are not.
    assert first["ppid"] == second["ppid"] != os.getpid()
    assert _parent_of(int(str(first["ppid"]))) == os.getpid()


def test_a_run_is_stopped_by_its_workers_process_id(launching: Launching) -> None:
    run = launching.launch(waiting_job)
    launching.wait(run, dg.DagsterRunStatus.STARTED)
    deadline = time.monotonic() + 60
    while not (launching.out / "waiting").exists():
        assert time.monotonic() < deadline
        time.sleep(0.05)
    # A launcher of another process (the webserver's) stops it by the tag alone.
    other = ForkServerRunLauncher()
    other.register_instance(launching.instance)
    assert other.terminate(run.run_id) is True
    done = launching.wait(run, dg.DagsterRunStatus.CANCELED)
    assert done.status == dg.DagsterRunStatus.CANCELED
    assert other.terminate(run.run_id) is False


def test_the_health_check_sees_a_worker_that_died(launching: Launching) -> None:
    launcher = launching.instance.run_launcher
    assert launcher.supports_check_run_worker_health
    run = launching.launch(waiting_job)
    started = launching.wait(run, dg.DagsterRunStatus.STARTED)
    pid = int(started.tags[PID_TAG])
    assert launcher.check_run_worker_health(started).status == WorkerStatus.RUNNING
    os.kill(pid, signal.SIGKILL)
    deadline = time.monotonic() + 30
    while launcher.check_run_worker_health(started).status == WorkerStatus.RUNNING:
        assert time.monotonic() < deadline, "the killed worker still counts as running"
        time.sleep(0.05)
    health = launcher.check_run_worker_health(started)
    assert health.status == WorkerStatus.FAILED and str(pid) in (health.msg or "")


def test_a_process_id_reused_by_another_process_is_not_the_worker(launching: Launching) -> None:
    """The worker's process id, once another process has it, neither counts as the worker to
    the health check nor is stopped by a stop of the run."""
    launcher = launching.instance.run_launcher
    run = launching.launch(waiting_job)
    started = launching.wait(run, dg.DagsterRunStatus.STARTED)
    assert started.tags[STARTED_TAG].isdigit()
    assert launcher.check_run_worker_health(started).status == WorkerStatus.RUNNING
    # Another process, started later, with the worker's tags pointing at it: what a reused
    # process id looks like.
    stranger = subprocess.Popen(["sleep", "60"])
    try:
        launching.instance.add_run_tags(run.run_id, {PID_TAG: str(stranger.pid)})
        reused = launching.instance.get_run_by_id(run.run_id)
        assert reused is not None and reused.tags[PID_TAG] == str(stranger.pid)
        health = launcher.check_run_worker_health(reused)
        assert health.status == WorkerStatus.FAILED
        assert launcher.terminate(run.run_id) is False
        assert stranger.poll() is None, "an unrelated process was stopped"
    finally:
        stranger.kill()
        stranger.wait()


def test_what_a_run_prints_is_kept_for_the_ui_without_mirroring_processes(
    launching: Launching,
) -> None:
    """The compute log manager of the service's dagster.yaml keeps a run's stdout and stderr
    (Python's and the descriptors') where the UI reads them, and starts no process for it."""
    manager = launching.instance.compute_log_manager
    assert isinstance(manager, FileComputeLogManager)
    run = launching.launch(print_job)
    launching.wait(run, dg.DagsterRunStatus.SUCCESS)
    [captured] = [
        entry.dagster_event.logs_captured_data
        for entry in launching.instance.all_logs(run.run_id)
        if entry.dagster_event is not None
        and entry.dagster_event.event_type == dg.DagsterEventType.LOGS_CAPTURED
    ]
    log_key = manager.build_log_key_for_run(run.run_id, captured.file_key)
    assert manager.is_capture_complete(log_key)
    data = manager.get_log_data(log_key)
    assert data.stdout is not None and b"a line on stdout" in data.stdout
    assert data.stderr is not None
    assert b"a line on stderr" in data.stderr
    assert b"a line written to descriptor 2" in data.stderr
    assert json.loads((launching.out / "children.json").read_text()) == []
