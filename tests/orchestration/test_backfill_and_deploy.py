"""Backfills over past partitions (DECISIONS 8) and `almanac deploy` beside a running run,
through the real Dagster machinery of `harness.py`.

Backfill: `launch_backfill` (the function `almanac backfill` calls; the command itself is run
once through `almanac.cli.main` against the test instance) records a Dagster asset backfill;
a backfill shaped as the Dagster UI launches it (no service tags) is one too;
the backfill daemon's own iteration (`dagster._daemon.backfill.execute_backfill_iteration`, as
Dagster's tests drive it) creates one run per day; the run queue's iteration launches them one at
a time; each runs the real pipeline (TLS download of its day's `{today}` URL, the locked room,
the store's write). Proven: each store run is a `backfill` of its own day; the day's URL was
fetched; records are added and revised but no miss is counted and nothing withdrawn, though a
snapshot window holds a record the backfill omits (one more ordinary miss withdraws it, shown
after); Approved stays Approved after a failed backfill run (and no retry follows), Failing stays
Failing after a successful one (and the pending retry still runs).

Deploy: a run whose fetcher sleeps inside the real locked room runs in a background thread;
`deploy()` holds the pool (limit 0), waits, migrates only once the run has ended while a second
run stays queued (a real queue iteration during the hold launches nothing), then restores the
limit. With too short a wait (the run held in the test's hands after the room, so it is still
running however slow the machine) it gives up with a clear error, migrates nothing and restores
the limit; `almanac deploy --wait` reports it and exits 1.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator, Sequence
from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from typing import Any

import dagster as dg
import pytest
from dagster._core.execution.backfill import BulkActionStatus, PartitionBackfill
from dagster._core.test_utils import freeze_time
from dagster._core.utils import make_new_backfill_id
from dagster._daemon.backfill import execute_backfill_iteration
from dagster._daemon.run_coordinator.queued_run_coordinator_daemon import (
    QueuedRunCoordinatorDaemon,
)
from dagster._time import get_current_timestamp
from dagster._utils.error import SerializableErrorInfo
from sqlalchemy import Engine, select

from almanac import cli
from almanac.assets.control import deploy, launch_backfill, run_slots
from almanac.assets.tags import BACKFILL_TAG, PARTITION_TAG, TAG_PLUGIN, TAG_TRIGGER, asset_key
from almanac.orchestration.catalog import SNAPSHOT_ENV
from almanac.orchestration.folders import register_folder
from almanac.platform.store.engine import upgrade_database
from almanac.platform.store.models import Record, RunRequest
from almanac.sandbox.room import LockedRoom, RoomResult
from almanac.settings import Settings
from tests.orchestration.harness import (
    BASE_URL,
    Orchestrator,
    SourceServer,
    approve,
    source_host,
    source_path,
    state_of,
    store_runs,
    write_plugin,
)

ZONE = "America/New_York"
SCHEDULE = "0 6 * * *"
# 12:00 in New York on 10 January 2026; the schedule's next times are 06:00 New York (11:00 UTC).
T0 = datetime(2026, 1, 10, 17, 0, tzinfo=UTC)


def six_am(day: int) -> datetime:
    return datetime(2026, 1, day, 11, 0, tzinfo=UTC)


def jan(day: int) -> date:
    return date(2026, 1, day)


# -- a plug-in whose source URL is filled for its day ----------------------------------------

LIST_FETCHER = """\
// Prints one happened event per item of its source (a JSON list of {id, date, title}).
import { readFileSync } from 'node:fs';
const context = JSON.parse(readFileSync(0, 'utf8'));
const items = JSON.parse(readFileSync(context.sources.data, 'utf8'));
for (const item of items) {
  process.stdout.write(JSON.stringify({
    kind: 'event', series: 'ticks', date: item.date, id: item.id,
    state: 'happened', title: item.title,
  }) + '\\n');
}
"""


def day_path(plugin_id: str, day: date) -> str:
    return f"/{plugin_id}/{day.isoformat()}.json"


def write_dated_plugin(parent: Path, plugin_id: str) -> Path:
    """A plug-in whose one source is `https://<id>.example.org/<id>/{today}.json` and whose
    event series keeps a snapshot window (30 days back, none ahead)."""
    folder = write_plugin(parent, plugin_id, schedule=SCHEDULE, timezone=ZONE, fetcher=LIST_FETCHER)
    manifest = json.loads((folder / "plugin.json").read_text())
    manifest["sources"][0]["url"] = f"https://{source_host(plugin_id)}/{plugin_id}/{{today}}.json"
    manifest["sources"][0]["maxBytes"] = 4096
    manifest["series"][0]["snapshot"] = {"back": "30d", "ahead": "0d"}
    (folder / "plugin.json").write_text(json.dumps(manifest, indent=2) + "\n")
    today = json.loads((folder / "fixtures" / "context.json").read_text())["today"]
    item = {"id": f"tick-{today}", "date": today, "title": "Tick"}
    (folder / "fixtures" / "sources" / "data").write_text(json.dumps([item]) + "\n")
    return folder


def tick(day: date, title: str = "Tick") -> dict[str, str]:
    return {"id": f"tick-{day.isoformat()}", "date": day.isoformat(), "title": title}


def publish(server: SourceServer, plugin_id: str, day: date, items: Sequence[dict[str, str]]):
    server.serve(day_path(plugin_id, day), json.dumps(list(items)).encode())


# -- the backfill daemon and the queue ---------------------------------------------------------


def backfill_iteration(orch: Orchestrator) -> None:
    """One iteration of Dagster's backfill daemon at the frozen moment (the code location
    reloaded first, as the harness's sensor tick does); a daemon error fails the test."""
    with freeze_time(orch.clock.now):
        orch.workspace.refresh_workspace()
        errors = [
            e
            for e in execute_backfill_iteration(orch.workspace, orch.logger)
            if isinstance(e, SerializableErrorInfo)
        ]
    assert not errors, errors[0].to_string()


def drain(orch: Orchestrator) -> list[dg.DagsterRun]:
    """Queue iterations until the queue is empty; the runs launched, in order."""
    launched: list[dg.DagsterRun] = []
    while orch.queued():
        more = orch.dequeue()
        assert more, "queued runs the pool did not let go"
        launched += more
    return [orch.run(r.run_id) for r in launched]


def run_backfill(orch: Orchestrator, launch: Any) -> tuple[str, list[dg.DagsterRun]]:
    """Launch a backfill at the frozen moment (`launch()` returns its id), let the backfill
    daemon create its runs and the queue run them, and the daemon close it."""
    before = {r.run_id for r in orch.instance.get_runs()}
    with freeze_time(orch.clock.now):
        backfill_id = launch()
    backfill_iteration(orch)
    created = [r for r in orch.instance.get_runs(ascending=True) if r.run_id not in before]
    assert created, "the backfill daemon created no run"
    assert all(r.status == dg.DagsterRunStatus.QUEUED for r in created)
    launched = drain(orch)
    assert [r.run_id for r in launched] == [r.run_id for r in created]
    backfill_iteration(orch)
    return backfill_id, launched


def ui_backfill(orch: Orchestrator, plugin_id: str, day: date) -> str:
    """A backfill of one partition shaped as the Dagster UI launches it: the asset and the
    partition chosen, no tags of the service's."""
    backfill = PartitionBackfill.from_asset_partitions(
        backfill_id=make_new_backfill_id(),
        asset_graph=orch.build().get_repository_def().asset_graph,
        partition_names=[day.isoformat()],
        asset_selection=[asset_key(plugin_id)],
        backfill_timestamp=get_current_timestamp(),
        tags={},
        dynamic_partitions_store=orch.instance,
        all_partitions=False,
        title=None,
        description=None,
        run_config=None,
    )
    orch.instance.add_backfill(backfill)
    return backfill.backfill_id


def records_of(engine: Engine, plugin_id: str) -> dict[str, dict[str, Any]]:
    """Stored records by discriminator: date, title, misses, withdrawn."""
    table = Record.__table__
    query = select(table).where(table.c.plugin_id == plugin_id)
    with engine.connect() as conn:
        rows = conn.execute(query).mappings().all()
    return {
        r["discriminator"]: {
            "date": r["date"],
            "title": json.loads(r["content"]).get("title"),
            "misses": r["misses"],
            "withdrawn": r["withdrawn"],
        }
        for r in rows
    }


def pending_requests(engine: Engine, plugin_id: str) -> list[dict[str, Any]]:
    table = RunRequest.__table__
    with engine.connect() as conn:
        rows = conn.execute(select(table).where(table.c.plugin_id == plugin_id)).mappings()
        return [dict(r) for r in rows if r.get("taken_at") is None]


def counts(row: dict[str, Any]) -> dict[str, int]:
    names = ("new", "revised", "unchanged", "moved", "missed", "withdrawn", "returned")
    return {n: row[n] for n in names if row[n]}


# -- 1. backfills ------------------------------------------------------------------------------


def test_a_backfill_reruns_past_days_without_misses_or_withdrawals(
    tmp_path: Path, sqlite_engine: Engine
) -> None:
    engine, plugin = sqlite_engine, "dated"
    with (
        SourceServer([source_host(plugin)]) as server,
        Orchestrator.open(tmp_path, engine, downloader=server.downloader, start=T0) as orch,
    ):
        register_folder(engine, write_dated_plugin(tmp_path / "plugins", plugin), now=T0)
        approve(engine, plugin, T0)
        # The first run (today 10 January) keeps 5..10 January.
        publish(server, plugin, jan(10), [tick(jan(d)) for d in range(5, 11)])
        assert [r.tags[TAG_TRIGGER] for r in orch.minute(T0).launched] == ["first"]
        # Two scheduled runs omit 5 January, inside their snapshot window: two misses; an
        # ordinary third miss would withdraw it.
        for day in (11, 12):
            publish(server, plugin, jan(day), [tick(jan(d)) for d in range(6, day + 1)])
            done = orch.minute(six_am(day))
            assert [(r.tags[TAG_TRIGGER], r.status.value) for r in done.launched] == [
                ("schedule", "SUCCESS")
            ]
            assert counts(store_runs(engine, plugin)[-1])["missed"] == 1
        before = records_of(engine, plugin)
        assert before["tick-2026-01-05"]["misses"] == 2
        assert state_of(engine, plugin) == "approved"

        # The backfill of 7..9 January: each day's source (as published that day) omits every
        # stored record but its own day's (revised) and adds one record (new).
        days = [jan(7), jan(8), jan(9)]
        for day in days:
            extra = {"id": f"extra-{day}", "date": day.isoformat(), "title": "Extra"}
            publish(server, plugin, day, [tick(day, f"Tick as of {day}"), extra])
        orch.clock.set(six_am(12) + timedelta(hours=3))
        requested = len(server.requests)
        backfill_id, launched = run_backfill(
            orch, lambda: launch_backfill(orch.instance, orch.build(), plugin, days[0], days[-1])
        )

        # Dagster: one run per day, tagged as the backfill's, each a success.
        assert [(r.tags[PARTITION_TAG], r.status.value) for r in launched] == [
            (d.isoformat(), "SUCCESS") for d in days
        ]
        assert {r.tags[BACKFILL_TAG] for r in launched} == {backfill_id}
        assert {r.tags[TAG_PLUGIN] for r in launched} == {plugin}
        backfill = orch.instance.get_backfill(backfill_id)
        assert backfill is not None and backfill.status == BulkActionStatus.COMPLETED_SUCCESS

        # The store: a backfill run of each day, today = its day, its day's URL fetched.
        rows = store_runs(engine, plugin)[-3:]
        assert [(r["trigger"], r["today"], r["outcome"]) for r in rows] == [
            ("backfill", d, "success") for d in days
        ]
        assert server.requests[requested:] == [day_path(plugin, d) for d in days]
        # Added and revised, never a miss, never a withdrawal.
        assert [counts(r) for r in rows] == [{"new": 1, "revised": 1}] * 3
        after = records_of(engine, plugin)
        for day in days:
            assert after[f"tick-{day}"]["title"] == f"Tick as of {day}"
            assert after[f"extra-{day}"]["title"] == "Extra"
        assert {k: (v["misses"], v["withdrawn"]) for k, v in after.items()} == {
            **{k: (v["misses"], v["withdrawn"]) for k, v in before.items()},
            **{f"extra-{d}": (0, False) for d in days},
        }
        assert state_of(engine, plugin) == "approved"

        # The contrast: the next ordinary run that omits 5 January withdraws it (third miss).
        publish(server, plugin, jan(13), [tick(jan(d)) for d in range(6, 14)])
        done = orch.minute(six_am(13))
        assert [(r.tags[TAG_TRIGGER], r.status.value) for r in done.launched] == [
            ("schedule", "SUCCESS")
        ]
        assert counts(store_runs(engine, plugin)[-1])["withdrawn"] == 1
        assert records_of(engine, plugin)["tick-2026-01-05"]["withdrawn"] is True


def test_a_backfill_never_changes_approved_or_failing(
    tmp_path: Path,
    sqlite_engine: Engine,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    engine, plugin = sqlite_engine, "dated"
    # `almanac backfill` reads the test's instance and store from the environment (the
    # harness's DAGSTER_HOME is `<ALMANAC_HOME>/dagster`); building the definitions names a
    # catalog snapshot in the environment, which the test restores.
    monkeypatch.setenv("ALMANAC_HOME", str(tmp_path))
    monkeypatch.setenv("ALMANAC_DATABASE_URL", str(engine.url))
    monkeypatch.setenv("ALMANAC_BASE_URL", BASE_URL)
    monkeypatch.setenv(SNAPSHOT_ENV, "")
    with (
        SourceServer([source_host(plugin)]) as server,
        Orchestrator.open(tmp_path, engine, downloader=server.downloader, start=T0) as orch,
    ):
        assert Settings(tmp_path, 0, 0, str(engine.url), BASE_URL).dagster_home == (
            tmp_path / "dagster"
        )
        register_folder(engine, write_dated_plugin(tmp_path / "plugins", plugin), now=T0)
        approve(engine, plugin, T0)
        publish(server, plugin, jan(10), [tick(jan(10))])
        assert [r.status.value for r in orch.minute(T0).launched] == ["SUCCESS"]

        # Approved; a backfill of 8 January from the command line, whose source is gone.
        server.fail(day_path(plugin, jan(8)), 404)
        orch.clock.set(T0 + timedelta(minutes=5))

        def from_the_command_line() -> str:
            capsys.readouterr()
            argv = ["backfill", plugin, "--from", "2026-01-08", "--to", "2026-01-08"]
            assert cli.main(argv) == 0
            [backfill] = orch.instance.get_backfills()
            # (Dagster may log a deprecation warning of its own on stdout before it.)
            said = capsys.readouterr().out.splitlines()[-1]
            expected = (
                f"backfill {backfill.backfill_id} launched: {plugin} 2026-01-08 to 2026-01-08"
            )
            assert said == expected
            return backfill.backfill_id

        backfill_id, [failed] = run_backfill(orch, from_the_command_line)
        assert (failed.tags[PARTITION_TAG], failed.status.value) == ("2026-01-08", "FAILURE")
        row = store_runs(engine, plugin)[-1]
        assert (row["trigger"], row["today"], row["outcome"]) == ("backfill", jan(8), "failure")
        assert row["reason"] == "could not download data: the server answered HTTP 404, not 200"
        assert state_of(engine, plugin) == "approved"
        assert pending_requests(engine, plugin) == [], "a failed backfill asked for a retry"
        backfill = orch.instance.get_backfill(backfill_id)
        assert backfill is not None and backfill.status == BulkActionStatus.COMPLETED_FAILED
        # No retry 30 minutes later; nothing runs until the schedule.
        for minutes in (35, 36):
            assert orch.minute(T0 + timedelta(minutes=minutes)).launched == []

        # Failing: the scheduled run of 11 January fails (its source is missing).
        server.fail(day_path(plugin, jan(11)), 404)
        done = orch.minute(six_am(11))
        assert [(r.tags[TAG_TRIGGER], r.status.value) for r in done.launched] == [
            ("schedule", "FAILURE")
        ]
        assert state_of(engine, plugin) == "failing"

        # A successful backfill of 9 January ten minutes later leaves it Failing; this one is
        # launched as the Dagster UI does, without the service's tags.
        publish(server, plugin, jan(9), [tick(jan(9))])
        orch.clock.set(six_am(11) + timedelta(minutes=10))
        _, [succeeded] = run_backfill(orch, lambda: ui_backfill(orch, plugin, jan(9)))
        assert succeeded.status == dg.DagsterRunStatus.SUCCESS
        # None of the service's own tags but the plug-in's, which the run coordinator names.
        assert TAG_TRIGGER not in succeeded.tags and succeeded.tags[TAG_PLUGIN] == plugin
        row = store_runs(engine, plugin)[-1]
        assert (row["trigger"], row["today"], row["outcome"]) == ("backfill", jan(9), "success")
        assert state_of(engine, plugin) == "failing"

        # The retry the failure asked for still comes, 30 minutes after it, and clears Failing.
        publish(server, plugin, jan(11), [tick(jan(11))])
        done = orch.minute(six_am(11) + timedelta(minutes=30))
        assert [(r.tags[TAG_TRIGGER], r.status.value) for r in done.launched] == [
            ("retry", "SUCCESS")
        ]
        assert state_of(engine, plugin) == "approved"


def test_a_backfill_refuses_days_outside_the_partitions(
    tmp_path: Path, sqlite_engine: Engine
) -> None:
    engine, plugin = sqlite_engine, "dated"
    with (
        SourceServer([source_host(plugin)]) as server,
        Orchestrator.open(tmp_path, engine, downloader=server.downloader, start=T0) as orch,
    ):
        register_folder(engine, write_dated_plugin(tmp_path / "plugins", plugin), now=T0)
        with freeze_time(T0), pytest.raises(LookupError, match="never approved"):
            launch_backfill(orch.instance, orch.build(), plugin, jan(8), jan(9))
        approve(engine, plugin, T0)
        with freeze_time(T0):
            defs = orch.build()
            with pytest.raises(ValueError, match="no partition for 2026-01-11"):
                launch_backfill(orch.instance, defs, plugin, jan(9), jan(12))
            with pytest.raises(ValueError, match="before"):
                launch_backfill(orch.instance, defs, plugin, jan(9), jan(8))
        assert orch.instance.get_backfills() == []


# -- 2. deploy beside a running run ------------------------------------------------------------

SLOW_FETCHER = """\
// Sleeps the milliseconds its source names ("sleep:<ms>"), then prints one event dated today.
import { readFileSync } from 'node:fs';
const context = JSON.parse(readFileSync(0, 'utf8'));
const text = readFileSync(context.sources.data, 'utf8').trim();
await new Promise((resolve) => setTimeout(resolve, Number(text.split(':')[1] || 0)));
process.stdout.write(JSON.stringify({
  kind: 'event', series: 'ticks', date: context.today, id: `tick-${context.today}`,
  state: 'happened', title: 'Tick',
}) + '\\n');
"""


class WatchedRoom:
    """The real locked room, noting when each run enters and leaves it; a run that left the
    room waits for `release` (set unless a test clears it) before it goes on to its write."""

    def __init__(self) -> None:
        self.room = LockedRoom()
        self.entered = threading.Event()
        self.release = threading.Event()
        self.release.set()
        self.spans: list[tuple[float, float]] = []

    def run(self, plugin_files: Any, sources: Any, context: Any, limits: Any = None) -> RoomResult:
        start = time.monotonic()
        self.entered.set()
        try:
            return self.room.run(plugin_files, sources, context, limits)
        finally:
            self.spans.append((start, time.monotonic()))
            assert self.release.wait(timeout=60)


class Background:
    """`orch.dequeue()` in a thread: the queue launches the next run, which executes there."""

    def __init__(self, orch: Orchestrator) -> None:
        self.launched: list[dg.DagsterRun] = []
        self.error: BaseException | None = None
        self.thread = threading.Thread(target=self._go, args=(orch,), daemon=True)

    def _go(self, orch: Orchestrator) -> None:
        try:
            self.launched = orch.dequeue()
        except BaseException as exc:  # reported by join()
            self.error = exc

    def start(self) -> Background:
        self.thread.start()
        return self

    def join(self) -> list[dg.DagsterRun]:
        self.thread.join(timeout=60)
        assert not self.thread.is_alive(), "the run did not end"
        if self.error is not None:
            raise self.error
        return self.launched


def wait_until_running(orch: Orchestrator, room: WatchedRoom, run_id: str) -> None:
    assert room.entered.wait(timeout=30), "the run never reached the locked room"
    assert orch.run(run_id).status == dg.DagsterRunStatus.STARTED


@pytest.fixture
def deploy_world(
    tmp_path: Path, sqlite_engine: Engine
) -> Iterator[tuple[Orchestrator, WatchedRoom]]:
    room = WatchedRoom()
    ids = ["a-slow", "b-quick"]
    with (
        SourceServer([source_host(i) for i in ids]) as server,
        Orchestrator.open(
            tmp_path, sqlite_engine, downloader=server.downloader, room=room, start=T0
        ) as orch,
    ):
        for offset, plugin in enumerate(ids):
            folder = write_plugin(
                tmp_path / "plugins",
                plugin,
                schedule=SCHEDULE,
                timezone=ZONE,
                fetcher=SLOW_FETCHER,
            )
            server.serve(source_path(plugin), b"sleep:3000" if plugin == "a-slow" else b"ok")
            register_folder(sqlite_engine, folder, now=T0)
            at = T0 + timedelta(minutes=offset)
            approve(sqlite_engine, plugin, at)
            # Each approval's run is created (queued) now; none runs yet.
            assert [r.tags[TAG_PLUGIN] for r in orch.tick(at)] == [plugin]
        try:
            yield orch, room
        finally:
            room.release.set()  # a test that failed holding a run lets it end


def test_deploy_waits_for_the_running_run_then_migrates(
    deploy_world: tuple[Orchestrator, WatchedRoom], sqlite_engine: Engine
) -> None:
    orch, room = deploy_world
    settings = Settings(Path("/nonexistent"), 0, 0, str(sqlite_engine.url), BASE_URL)
    slow, quick = orch.queued()
    assert (slow.tags[TAG_PLUGIN], quick.tags[TAG_PLUGIN]) == ("a-slow", "b-quick")

    # The queue lets the slow run go (the pool holds one); it sleeps inside the locked room.
    worker = Background(orch).start()
    wait_until_running(orch, room, slow.run_id)
    held_queue = QueuedRunCoordinatorDaemon(interval_seconds=1)
    seen: list[tuple[int | None, str, str]] = []
    migrated: list[tuple[float, int | None, str, str]] = []

    def status(run: dg.DagsterRun) -> str:
        return orch.run(run.run_id).status.value

    def say(message: str) -> None:
        if message.startswith("waiting"):
            # A real queue iteration during the hold: the queued run stays queued.
            with held_queue:
                list(held_queue.run_iteration(orch.workspace, orch.clock.now.timestamp()))
            seen.append((run_slots(orch.instance), status(slow), status(quick)))

    def migrate(url: str) -> None:
        migrated.append((time.monotonic(), run_slots(orch.instance), status(slow), status(quick)))
        upgrade_database(url)

    deploy(orch.instance, settings, migrate=migrate, wait_seconds=60, poll_seconds=0.2, say=say)
    [launched] = worker.join()

    assert launched.run_id == slow.run_id
    assert len(seen) >= 3, "deploy did not wait for the running run"
    assert set(seen[:-1]) == {(0, "STARTED", "QUEUED")}
    assert seen[-1][0::2] == (0, "QUEUED")
    [(at, slots, slow_status, quick_status)] = migrated
    (room_start, room_end) = room.spans[0]
    assert room_end - room_start >= 3, "the fetcher did not sleep in the room"
    assert room_end < at, "the store was migrated while the run was in the locked room"
    assert (slots, slow_status, quick_status) == (0, "SUCCESS", "QUEUED")
    assert run_slots(orch.instance) == 1
    # Let go: the queued run now runs.
    assert [r.tags[TAG_PLUGIN] for r in drain(orch)] == ["b-quick"]
    assert orch.run(quick.run_id).status == dg.DagsterRunStatus.SUCCESS


def test_deploy_gives_up_after_its_wait_and_lets_runs_go(
    deploy_world: tuple[Orchestrator, WatchedRoom],
    sqlite_engine: Engine,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    orch, room = deploy_world
    settings = Settings(Path("/nonexistent"), 0, 0, str(sqlite_engine.url), BASE_URL)
    slow, quick = orch.queued()
    # The run goes on only when the test lets it: however slow this machine, it is still
    # running when both deployments give up.
    room.release.clear()
    worker = Background(orch).start()
    wait_until_running(orch, room, slow.run_id)
    migrated: list[str] = []
    said: list[str] = []
    started = time.monotonic()

    with pytest.raises(TimeoutError) as refused:
        deploy(
            orch.instance,
            settings,
            migrate=migrated.append,
            wait_seconds=0.5,
            poll_seconds=0.2,
            say=said.append,
        )
    assert time.monotonic() - started < 2, "deploy waited past its wait"
    message = str(refused.value)
    assert message.startswith("gave up: 1 run(s) still going after 0.5 seconds")
    assert slow.run_id in message and "nothing was migrated" in message
    assert migrated == []
    assert run_slots(orch.instance) == 1
    assert said[-1] == "runs go again (1 at a time)"
    assert orch.run(slow.run_id).status == dg.DagsterRunStatus.STARTED
    assert orch.run(quick.run_id).status == dg.DagsterRunStatus.QUEUED

    # The command says so and exits 1 (its instance is the test's, from the environment).
    monkeypatch.setenv("ALMANAC_HOME", str(tmp_path))
    monkeypatch.setenv("ALMANAC_DATABASE_URL", str(sqlite_engine.url))
    capsys.readouterr()
    assert cli.main(["deploy", "--wait", "0.3"]) == 1
    out, err = capsys.readouterr()
    assert "runs held" in out and "runs go again (1 at a time)" in out
    assert err.startswith("almanac deploy: gave up: 1 run(s) still going")
    assert run_slots(orch.instance) == 1
    assert orch.run(slow.run_id).status == dg.DagsterRunStatus.STARTED

    room.release.set()
    [launched] = worker.join()
    assert orch.run(launched.run_id).status == dg.DagsterRunStatus.SUCCESS
    assert [r.tags[TAG_PLUGIN] for r in drain(orch)] == ["b-quick"]
