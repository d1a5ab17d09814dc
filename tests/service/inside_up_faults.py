"""Inside a network namespace of its own (run by `test_faults.py`): the real `almanac up` under
faults (issue 31). A plug-in whose first run writes a big batch (`RECORDS` daily values,
printed by the template's fetcher from a source served over TLS from the public stand-in
address) is registered and approved over HTTP, and while its run writes:

- on PostgreSQL (`UP_DATABASE_URL`, through the Unix socket relay), every backend of the
  database is terminated (`pg_terminate_backend`): the store's, Dagster's (same database), the
  API's, the run worker's, its write held by a lock of the test with the whole batch inserted
  and not committed;
- on the embedded default, whose home is a small tmpfs, the disk is full but for a few MiB.

Either way the run has exactly one outcome in the store, the plug-in's state follows it,
nothing is half-written, and the service goes on: readers are answered throughout, and on
PostgreSQL a day backfilled afterwards through the webserver runs and succeeds. The figures
(time to the one outcome, time to the next run) are printed."""

from __future__ import annotations

import os
import subprocess
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from typing import Any

import httpx
import psycopg
import pytest
from sqlalchemy import create_engine, text

from almanac.run_launcher import PID_TAG
from tests.sandbox.tls_server import TLSServer
from tests.service import stand_in
from tests.service.stand_in import source_server  # noqa: F401  (a fixture)
from tests.service.up import (
    EXAMPLES,
    Service,
    alive,
    graphql,
    launch_partition_backfill,
)

PLUGIN = "big-batch-rates"
RECORDS = 75_000
"""Daily values up to today: a batch far bigger than what the full disk has left, and on
PostgreSQL a write of that many rows held before its commit."""
RUN_SECONDS = 420
"""Bound for the plug-in's first run to reach its write after approval."""
OUTCOME_SECONDS = 240
"""Bound for the Dagster run to end with its outcome kept after the fault."""
NEXT_RUN_SECONDS = 300
"""Bound for a run launched after the fault to succeed."""
FAULT_SECONDS = 60
"""How long a full disk stays full at most once the store kept the run's outcome; it is freed,
as an operator would, once the run's worker is gone (nothing of the run is left to meet the
full disk; what Dagster still has to record of it, it records on the freed disk) or Dagster
recorded the run's end."""
SENSOR_SECONDS = 120
"""Bound for the run-failure sensor (every 30 s) to finish a tick begun after the faulted
run ended: the tick that would keep a second, false outcome of it, were one kept at all."""
TERMINATE = (
    "SELECT pid FROM (SELECT pid, pg_terminate_backend(pid) AS ended FROM pg_stat_activity"
    " WHERE datname = current_database() AND pid <> pg_backend_pid() AND pid <> %(holder)s"
    " AND backend_type = 'client backend') AS backends WHERE ended"
)
"""Every backend of the database but the test's two, ended as an administrator ends them."""


def _big_plugin_pack(work: Path, today: date) -> tuple[stand_in.Pack, bytes]:
    """A public value plug-in from the tool's template whose first run prints its whole source
    (backfill `all`): `RECORDS` daily rates up to `today`; the pack and the source's bytes."""

    def big(manifest: dict[str, Any]) -> None:
        manifest["backfill"] = "all"
        manifest["sources"][0]["maxBytes"] = 20 * 1024 * 1024
        manifest["series"][0]["cadence"] = "daily"

    pack = stand_in.value_plugin_pack(work, PLUGIN, big)
    first = today - timedelta(days=RECORDS - 1)
    lines = [f"{first + timedelta(days=n)},{50 + (n % 1000) / 100:.4f}\n" for n in range(RECORDS)]
    return pack, ("date,rate\n" + "".join(lines)).encode()


@dataclass
class Readers:
    """A reader asking for their days over and over on fresh connections (so both API workers
    answer), from before the fault to after it: every status answered."""

    api: str
    cookies: httpx.Cookies
    today: str
    statuses: list[int | str] = field(default_factory=list)
    _stop: threading.Event = field(default_factory=threading.Event)

    def read(self) -> httpx.Response:
        params = {"from": self.today, "to": self.today, "today": self.today}
        with httpx.Client(base_url=self.api, timeout=60, cookies=self.cookies) as client:
            return client.get("/api/v1/reader/days", params=params)

    @contextmanager
    def throughout(self) -> Iterator[Readers]:
        def loop() -> None:
            while not self._stop.is_set():
                try:
                    self.statuses.append(self.read().status_code)
                except httpx.HTTPError as exc:
                    self.statuses.append(type(exc).__name__)
                self._stop.wait(0.25)

        thread = threading.Thread(target=loop, daemon=True)
        thread.start()
        try:
            yield self
        finally:
            self._stop.set()
            thread.join(90)

    def failed(self) -> list[int | str]:
        return [status for status in self.statuses if status != 200]


def _plugin_runs(operator: httpx.Client) -> list[dict[str, Any]]:
    return list(stand_in.ok(operator.get(f"/api/v1/host/plugins/{PLUGIN}/runs")))


def _plugin_state(operator: httpx.Client) -> str:
    listed = {p["id"]: p for p in stand_in.ok(operator.get("/api/v1/host/plugins"))}
    return str(listed[PLUGIN]["state"])


def _stored_records(started: Started) -> tuple[int, int]:
    """The plug-in's records a reader's records API gives for the last 60 days, and every
    record of the plug-in the store holds."""
    last = started.today - timedelta(days=1)
    shown = stand_in.ok(
        started.operator.get(
            f"/api/v1/reader/plugins/{PLUGIN}/records",
            params={"from": (last - timedelta(days=59)).isoformat(), "to": last.isoformat()},
        )
    )
    engine = create_engine(started.database_url)
    try:
        with engine.connect() as conn:
            held = conn.execute(
                text("SELECT count(*) FROM records WHERE plugin_id = :p"), {"p": PLUGIN}
            ).scalar_one()
    finally:
        engine.dispose()
    return len(shown["records"]), int(held)


RUNS = """query ($filter: RunsFilter) {
  runsOrError(filter: $filter) {
    __typename
    ... on Runs { results { runId status endTime tags { key value } } }
  }
}"""


def _dagster_runs(up: Service) -> list[dict[str, Any]] | None:
    """The webserver's runs of the plug-in the minute sensor started, newest first; None
    while the webserver cannot answer (its storage on a full disk)."""
    variables = {"filter": {"tags": [{"key": "almanac/plugin", "value": PLUGIN}]}}
    query = {"query": RUNS, "variables": variables}
    answer = httpx.post(f"{up.ui}/graphql", json=query, timeout=60)
    body = answer.json() if answer.status_code == 200 else {}
    found = (body.get("data") or {}).get("runsOrError") or {}
    if found.get("__typename") != "Runs":
        return None
    return list(found["results"])


def _until(
    what: str, bound: float, up: Service, probe: Callable[[], Any], *, fail: bool = True
) -> Any:
    """The first true value of `probe()` within `bound` seconds; else fails naming `what`
    (or None, when not `fail`)."""
    deadline = time.monotonic() + bound
    while time.monotonic() < deadline:
        assert up.process.poll() is None, "almanac up stopped: " + up.log.read_text()[-5000:]
        try:
            found = probe()
        except httpx.HTTPError:
            found = None
        if found:
            return found
        time.sleep(0.5)
    if fail:
        pytest.fail(f"{what}: not within {bound} s\n" + up.log.read_text()[-8000:])
    return None


FAILURE_TICKS = """query ($selector: SensorSelector!) {
  sensorOrError(sensorSelector: $selector) {
    __typename
    ... on Sensor { sensorState { ticks(limit: 5) { timestamp status } } }
  }
}"""
FAILURE_SENSOR = {
    "repositoryLocationName": "almanac",
    "repositoryName": "__repository__",
    "sensorName": "almanac_failed_runs",
}


def _failure_sensor_done_after(up: Service, moment: float) -> bool:
    """Whether the run-failure sensor finished a tick begun after `moment` (a timestamp of
    the webserver's clock): that tick read every run that failed before it began."""
    answer = graphql(up.ui, FAILURE_TICKS, {"selector": FAILURE_SENSOR})["sensorOrError"]
    assert answer["__typename"] == "Sensor", answer
    ticks = answer["sensorState"]["ticks"]
    return any(t["timestamp"] > moment and t["status"] in ("SUCCESS", "SKIPPED") for t in ticks)


def _run_workers(up: Service) -> set[int]:
    """The process ids of the plug-in's run workers, as the launcher tagged its Dagster runs
    (read while the webserver can read them)."""
    tags = [{t["key"]: t["value"] for t in run["tags"]} for run in _dagster_runs(up) or []]
    return {int(found[PID_TAG]) for found in tags if PID_TAG in found}


def _ended_and_recorded(up: Service) -> dict[str, Any] | None:
    """The plug-in's one Dagster run once it ended and its outcome is kept (tag
    `almanac/recorded`, set by the run or by the run-failure sensor)."""
    runs = _dagster_runs(up)
    if runs is None:
        return None
    assert len(runs) <= 1, runs
    if not runs or runs[0]["status"] not in ("SUCCESS", "FAILURE", "CANCELED"):
        return None
    tags = {tag["key"]: tag["value"] for tag in runs[0]["tags"]}
    return runs[0] if "almanac/recorded" in tags else None


@dataclass
class Started:
    up: Service
    operator: httpx.Client
    reader: httpx.Client
    database_url: str
    today: date
    pack: stand_in.Pack


@contextmanager
def _service_with_the_plugin_registered(
    server: TLSServer, tmp_path: Path, home: Path, given: str | None
) -> Iterator[Started]:
    """`almanac up` (two API workers) with the examples' first runs done, the big plug-in
    registered (not approved yet), an operator and a reader."""
    today = datetime.now(UTC).date()
    pack, source = _big_plugin_pack(tmp_path, today)
    server.routes["/rates.csv"] = lambda h: h.reply(200, source)
    with stand_in.served(home, given) as service:
        up, operator = service.up, service.operator
        stand_in.registered(operator, pack)
        reader = stand_in.signed_up_person(up.api, service.database_url, "reader@example.org")
        # The examples' first runs (failing: their hosts resolve to nothing here) are done
        # before the fault, so the plug-in's run is the only one.
        for example in EXAMPLES:
            _until(
                f"{example}'s first run",
                RUN_SECONDS,
                up,
                lambda e=example: stand_in.ok(operator.get(f"/api/v1/host/plugins/{e}/runs")),
            )
        yield Started(up, operator, reader, service.database_url, today, pack)


def _approve(started: Started) -> Readers:
    """The plug-in approved by its digest (its first run follows) and shown by the reader,
    who reads their days once."""
    stand_in.approved(started.operator, started.pack)
    stand_in.shown(started.reader, PLUGIN)
    readers = Readers(started.up.api, started.reader.cookies, started.today.isoformat())
    assert readers.read().status_code == 200
    return readers


def _one_outcome(
    started: Started, since: float, what: str, fault_ends: Callable[[], str] | None = None
) -> tuple[dict[str, Any], dict[str, Any]]:
    """The plug-in's one store run and its Dagster run, once the Dagster run ended with its
    outcome kept; prints the times from `since` (`what`). A fault that lasts (`fault_ends`)
    ends once the run's worker is gone or Dagster recorded the run's end, at the latest
    `FAULT_SECONDS` after the store kept the outcome."""
    up, operator = started.up, started.operator
    workers: set[int] = set()

    def outcome() -> list[dict[str, Any]]:
        if fault_ends is not None:
            workers.update(_run_workers(up))
        return _plugin_runs(operator)

    [run] = _until("the run's outcome in the store", OUTCOME_SECONDS, up, outcome)
    kept_after = time.monotonic() - since
    print(
        f"the run's outcome kept {kept_after:.1f} s after {what}: "
        f"{(run['id'], run['trigger'], run['outcome'], run['reason'])}"
    )
    if fault_ends is not None:

        def over() -> str | None:
            if workers and not any(alive(pid) for pid in workers):
                return "once the run's worker was gone"
            return "once Dagster recorded the run's end" if _ended_and_recorded(up) else None

        why = _until("", FAULT_SECONDS, up, over, fail=False) or f"{FAULT_SECONDS} s on"
        print(f"{fault_ends()} {time.monotonic() - since:.1f} s after {what}, {why}")
    dagster_run = _until(
        "the Dagster run ended with its outcome kept",
        OUTCOME_SECONDS,
        up,
        lambda: _ended_and_recorded(up),
    )
    print(
        f"the Dagster run {dagster_run['status']}, recorded, "
        f"{time.monotonic() - since:.1f} s after {what}"
    )
    tags = {tag["key"]: tag["value"] for tag in dagster_run["tags"]}
    assert tags["almanac/recorded"] == str(run["id"])
    return run, dagster_run


def _no_second_outcome(
    started: Started, run: dict[str, Any], dagster_run: dict[str, Any], since: float, what: str
) -> None:
    """Once the run-failure sensor, which would keep a second outcome of the faulted run,
    finished a tick begun after that run's end: the store still has the one outcome (besides
    backfills); prints the time from `since` (`what`)."""
    _until(
        "a tick of the run-failure sensor after the run's end",
        SENSOR_SECONDS,
        started.up,
        lambda: _failure_sensor_done_after(started.up, dagster_run["endTime"]),
    )
    runs = [r for r in _plugin_runs(started.operator) if r["trigger"] != "backfill"]
    print(
        f"after the run-failure sensor's next tick ({time.monotonic() - since:.1f} s after "
        f"{what}) the store's runs: "
        f"{[(r['id'], r['trigger'], r['outcome'], r['reason']) for r in runs]}"
    )
    assert [r["id"] for r in runs] == [run["id"]], runs


def test_terminating_every_backend_while_a_run_writes_keeps_one_outcome(
    source_server: TLSServer,  # noqa: F811
    tmp_path: Path,
) -> None:
    given = os.environ["UP_DATABASE_URL"]
    plain = "postgresql://" + given.split("://", 1)[1]
    with (
        _service_with_the_plugin_registered(
            source_server, tmp_path, tmp_path / "home", given
        ) as started,
        psycopg.connect(plain, autocommit=True) as watcher,
        psycopg.connect(plain) as holder,
    ):
        up, operator = started.up, started.operator
        held = {"holder": holder.info.backend_pid}
        holder.execute(stand_in.HOLD)
        readers = _approve(started)
        with readers.throughout():
            # The daemon starts the first run; once its batch is written and not committed,
            # every backend of the database goes.
            writing = _until(
                "the first run's write",
                RUN_SECONDS,
                up,
                lambda: watcher.execute(stand_in.HELD_WRITE, held).fetchall(),
            )
            ended = watcher.execute(TERMINATE, held).fetchall()
            holder.rollback()
            fault, fault_at = time.monotonic(), datetime.now(UTC)
            print(f"terminated {len(ended)} backends while {len(writing)} wrote the batch")
            assert len(ended) > len(writing)

            run, dagster_run = _one_outcome(started, fault, "the termination")
            assert (run["trigger"], run["outcome"]) == ("first", "failure"), run
            assert run["reason"].startswith("the write was refused: "), run
            assert dagster_run["status"] == "FAILURE"
            # The plug-in's state follows its one outcome; nothing of the batch was kept.
            assert _plugin_state(operator) == "failing"
            assert _stored_records(started) == (0, 0)

            # The webserver and the daemon go on: a day backfilled from the UI runs and
            # succeeds (launched now: the backfill daemon's pass and the run-failure sensor's
            # next tick are awaited together).
            day = started.today - timedelta(days=2)
            launched, launched_at = time.monotonic(), datetime.now(UTC)
            launch_partition_backfill(up.ui, PLUGIN, [day.isoformat()])
            _no_second_outcome(started, run, dagster_run, fault, "the termination")
            [backfilled] = _until(
                "the backfill's outcome",
                NEXT_RUN_SECONDS,
                up,
                lambda: [r for r in _plugin_runs(operator) if r["trigger"] == "backfill"],
            )
            done_after = time.monotonic() - launched
            run_started = datetime.fromisoformat(backfilled["started_at"])
            print(
                f"next run: launched {(launched_at - fault_at).total_seconds():.1f} s after "
                f"the termination, started {(run_started - launched_at).total_seconds():.1f} s "
                f"after its launch ({(run_started - fault_at).total_seconds():.1f} s after the "
                f"termination), {backfilled['outcome']} {done_after:.1f} s after its launch"
            )
            assert (backfilled["outcome"], backfilled["today"]) == ("success", day.isoformat())
            # Every record up to that day is new: nothing of the faulted write was left. A
            # backfill changes no state (DECISIONS 8).
            assert backfilled["new"] == RECORDS - 2, backfilled
            assert _plugin_state(operator) == "failing"
            assert readers.read().status_code == 200
    print(f"readers answered {len(readers.statuses)} times; not 200: {readers.failed()}")
    assert readers.statuses and readers.failed() == []


FREE_BYTES = 4 * 1024 * 1024
"""What the embedded home's disk has left when the run starts: the batch needs far more."""
HOME_SIZE = "160m"


def test_a_full_disk_while_a_run_writes_keeps_one_outcome_on_the_embedded_default(
    source_server: TLSServer,  # noqa: F811
    tmp_path: Path,
) -> None:
    home = tmp_path / "home"
    home.mkdir()
    mount = ["mount", "-t", "tmpfs", "-o", f"size={HOME_SIZE}", "tmpfs", str(home)]
    subprocess.run(mount, check=True)
    try:
        with _service_with_the_plugin_registered(source_server, tmp_path, home, None) as started:
            room = os.statvfs(home)
            filler_path = home / "filler"

            def free_the_disk() -> str:
                filler_path.unlink()
                return "the disk freed"

            with filler_path.open("wb") as filler:
                free = room.f_bavail * room.f_frsize
                os.posix_fallocate(filler.fileno(), 0, free - FREE_BYTES)
            room = os.statvfs(home)
            left = room.f_bavail * room.f_frsize / 2**20
            print(f"home: a {HOME_SIZE} tmpfs, {left:.1f} MiB free")
            approved_at = time.monotonic()
            readers = _approve(started)
            with readers.throughout():
                run, dagster_run = _one_outcome(started, approved_at, "the approval", free_the_disk)
                _no_second_outcome(started, run, dagster_run, approved_at, "the approval")
                assert run["trigger"] == "first" and run["outcome"] in ("success", "failure")
                # The state follows the one outcome, and the batch is all there or not at all.
                if run["outcome"] == "success":
                    assert _plugin_state(started.operator) == "approved"
                    assert _stored_records(started) == (60, RECORDS) == (60, run["new"])
                else:
                    assert _plugin_state(started.operator) == "failing"
                    assert _stored_records(started) == (0, 0)
                assert readers.read().status_code == 200
        print(f"readers answered {len(readers.statuses)} times; not 200: {readers.failed()}")
        assert readers.statuses and readers.failed() == []
    finally:
        subprocess.run(["umount", "--lazy", str(home)], check=False)
