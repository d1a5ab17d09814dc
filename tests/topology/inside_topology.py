"""Inside a network and mount namespace of its own (run by `test_topology.py`): Almanac on five
machines (`machines.py`: PostgreSQL, two API machines, HAProxy, the Dagster machine), one
topology for the whole module, and each machine failing while readers' requests run through
HAProxy all the while (bounded loops):

1. the Dagster machine killed while a run writes its batch, and started again;
2. one API machine killed (every process, SIGKILL), and started again;
3. PostgreSQL restarted;
4. the network between an API machine and PostgreSQL cut for `CUT_SECONDS`, then mended.

Each prints the readers' requests sent and failed, the longest time without an answer, and the
store before and after."""

from __future__ import annotations

import itertools
import os
import threading
import time
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from typing import Any

import httpx
import psycopg
import pytest

from tests.sandbox.tls_server import TLSServer
from tests.service import stand_in
from tests.service.stand_in import (  # noqa: F401  (source_server: a fixture)
    SOURCE_HOST,
    ok,
    signed_up_operator,
    signed_up_person,
    source_server,
)
from tests.service.up import graphql, launch_partition_backfill
from tests.topology.machines import GET_SECONDS, Topology

BIG, BIG_RECORDS = "topology-big", 75_000
"""A plug-in whose first run writes a batch long enough to be caught writing."""
SMALL, SMALL_RECORDS = "topology-small", 40
"""A plug-in whose first run waits in the queue behind the big one's."""
RUN_SECONDS = 300
"""Bound for a run to reach its write, or to end, once due."""
SETTLE_SECONDS = 240
"""Bound for Dagster, started again, to fail the killed run, keep its outcome and run the
queued one: its start, run monitoring (every 30 s) and the run-failure sensor (every 30 s)."""
CUT_SECONDS = int(os.environ.get("TOPOLOGY_CUT_SECONDS", "30"))
"""How long the network between api1 and PostgreSQL stays cut (the benchmark's longer variant
sets `TOPOLOGY_CUT_SECONDS`)."""
BACK_SECONDS = 120
"""Bound for a machine to be back in HAProxy after its fault ended."""


@dataclass
class Answer:
    began: float
    ended: float
    status: int | str
    machine: str | None


@dataclass
class Readers:
    """Readers asking for their days through HAProxy, each on its own connection, from before a
    fault to after it; every answer is kept."""

    lb: str
    cookies: httpx.Cookies
    today: str
    count: int = 2
    pause: float = 0.05
    answers: list[Answer] = field(default_factory=list)
    _stop: threading.Event = field(default_factory=threading.Event)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def _loop(self) -> None:
        params = {"from": self.today, "to": self.today, "today": self.today}
        with httpx.Client(base_url=self.lb, timeout=60, cookies=self.cookies) as client:
            while not self._stop.is_set():
                began = time.monotonic()
                try:
                    got = client.get("/api/v1/reader/days", params=params)
                    status: int | str = got.status_code
                    machine = got.headers.get("x-almanac-machine")
                except httpx.HTTPError as exc:
                    status, machine = type(exc).__name__, None
                with self._lock:
                    self.answers.append(Answer(began, time.monotonic(), status, machine))
                self._stop.wait(self.pause)

    @contextmanager
    def running(self) -> Iterator[Readers]:
        self.started = time.monotonic()
        threads = [threading.Thread(target=self._loop, daemon=True) for _ in range(self.count)]
        for thread in threads:
            thread.start()
        try:
            yield self
        finally:
            self._stop.set()
            for thread in threads:
                thread.join(90)
            self.stopped = time.monotonic()

    def failed(self) -> list[Answer]:
        return [a for a in self.answers if a.status != 200]

    def longest_gap(self) -> float:
        """The longest time no reader was answered (200), from the start to the stop."""
        ends = sorted(a.ended for a in self.answers if a.status == 200)
        marks = [self.started, *ends, self.stopped]
        return max(b - a for a, b in itertools.pairwise(marks))

    def machines_since(self, moment: float) -> Counter[str | None]:
        return Counter(a.machine for a in self.answers if a.began >= moment and a.status == 200)

    def figures(self) -> str:
        failed = self.failed()
        span = ""
        if failed:
            span = f" (from {failed[0].began - self.started:.1f} s to "
            span += f"{failed[-1].ended - self.started:.1f} s: {Counter(a.status for a in failed)})"
        machines = dict(Counter(a.machine for a in self.answers))
        return (
            f"requests sent {len(self.answers)}, failed {len(failed)}{span}, longest gap "
            f"{self.longest_gap():.2f} s, answered by {machines}"
        )


def store(url: str) -> dict[str, Any]:
    """What the store holds for the test's comparisons: plug-in states, runs by plug-in and
    outcome, records by plug-in, store runs sharing a Dagster run, Dagster's runs by status."""
    with psycopg.connect(url) as conn:
        plugins = dict(conn.execute("SELECT id, state FROM plugins ORDER BY id").fetchall())
        runs: dict[str, dict[str, int]] = {}
        for plugin, outcome, n in conn.execute(
            "SELECT plugin_id, outcome, count(*) FROM runs GROUP BY 1, 2 ORDER BY 1, 2"
        ):
            runs.setdefault(plugin, {})[outcome] = n
        records = dict(
            conn.execute("SELECT plugin_id, count(*) FROM records GROUP BY 1 ORDER BY 1").fetchall()
        )
        doubled = conn.execute(
            "SELECT count(*) FROM (SELECT orchestrator_run FROM runs WHERE orchestrator_run"
            " IS NOT NULL GROUP BY 1 HAVING count(*) > 1) AS twice"
        ).fetchone()[0]
        dagster = dict(
            conn.execute("SELECT status, count(*) FROM dagster.runs GROUP BY 1 ORDER BY 1")
        )
    return {
        "plugins": plugins,
        "runs": runs,
        "records": records,
        "store runs sharing a Dagster run": doubled,
        "Dagster runs": dagster,
    }


def kept(snapshot: dict[str, Any]) -> dict[str, Any]:
    """The store's part of a snapshot: Dagster's own runs (its sensors' jobs too) go on."""
    return {k: v for k, v in snapshot.items() if k != "Dagster runs"}


def _print_figures(readers: Readers, before: dict[str, Any], after: dict[str, Any]) -> None:
    print(f"  readers: {readers.figures()}")
    print(f"  {compared(before, after)}")


def compared(before: dict[str, Any], after: dict[str, Any]) -> str:
    changed = {k: (before[k], after[k]) for k in before if before[k] != after[k]}
    if not changed:
        return "store before and after: the same"
    return "store before -> after: " + "; ".join(
        f"{k}: {a} -> {b}" for k, (a, b) in changed.items()
    )


def _pack(
    work: Path, plugin: str, records: int, path: str, today: date
) -> tuple[stand_in.Pack, bytes]:
    """A public value plug-in from the tool's template whose first run prints its whole source,
    `records` daily values up to yesterday served at `path`: the pack and the source."""

    def whole(manifest: dict[str, Any]) -> None:
        manifest["backfill"] = "all"
        manifest["sources"][0]["url"] = f"https://{SOURCE_HOST}{path}"
        manifest["sources"][0]["maxBytes"] = 20 * 1024 * 1024
        manifest["series"][0]["cadence"] = "daily"

    pack = stand_in.value_plugin_pack(work, plugin, whole)
    first = today - timedelta(days=records)
    lines = [f"{first + timedelta(days=n)},{50 + (n % 1000) / 100:.4f}\n" for n in range(records)]
    return pack, ("date,rate\n" + "".join(lines)).encode()


@dataclass
class Built:
    topology: Topology
    operator: httpx.Client
    reader: httpx.Client
    today: date
    packs: dict[str, stand_in.Pack]
    figures: list[str]

    def readers(self) -> Readers:
        return Readers(self.topology.lb, self.reader.cookies, self.today.isoformat())

    def store(self) -> dict[str, Any]:
        return store(self.topology.plain_url())

    def runs(self, plugin: str) -> list[dict[str, Any]]:
        return list(ok(self.operator.get(f"/api/v1/host/plugins/{plugin}/runs")))


@pytest.fixture(scope="module")
def built(
    source_server: TLSServer,  # noqa: F811
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[Built]:
    """The topology built once for the module: the two plug-ins registered (not approved), an
    operator and a reader signed up through HAProxy."""
    work = tmp_path_factory.mktemp("topology")
    today = datetime.now(UTC).date()
    made = Topology(work)
    try:
        took = made.build()
        figures = [f"built: {', '.join(f'{k} {v:.1f} s' for k, v in took.items())}"]
        operator = signed_up_operator(made.lb, made.database_url)
        reader = signed_up_person(made.lb, made.database_url, "reader@example.org")
        packs = {}
        for plugin, records, path in (
            (BIG, BIG_RECORDS, "/big.csv"),
            (SMALL, SMALL_RECORDS, "/small.csv"),
        ):
            pack, source = _pack(work, plugin, records, path, today)
            source_server.routes[path] = lambda h, s=source: h.reply(200, s)
            stand_in.registered(operator, pack)
            packs[plugin] = pack
        yield Built(made, operator, reader, today, packs, figures)
    finally:
        made.teardown()


def test_each_role_runs_on_its_own_machine_and_haproxy_spreads_readers(built: Built) -> None:
    top = built.topology
    machines = Counter(
        httpx.get(f"{top.lb}/health", timeout=10).headers["x-almanac-machine"] for _ in range(6)
    )
    assert machines == {"api1": 3, "api2": 3}, machines
    for name in ("api1", "api2"):
        health = httpx.get(f"{top.api(name)}/health", timeout=10).json()
        assert health["parts"] == {"api": "running"}, health
        with pytest.raises(httpx.ConnectError):
            httpx.get(f"http://{top[name].address}:3000/server_info", timeout=5)
    with pytest.raises(httpx.ConnectError):
        httpx.get(f"http://{top['dagster'].address}:8000/health", timeout=5)
    assert graphql(top.ui, "{ version }")["version"]
    for line in built.figures:
        print(line)


def _approve(built: Built, plugin: str) -> None:
    stand_in.approved(built.operator, built.packs[plugin])
    stand_in.shown(built.reader, plugin)


RUNS = """query ($filter: RunsFilter) {
  runsOrError(filter: $filter) { ... on Runs { results { runId status tags { key value } } } }
}"""


def dagster_runs(ui: str, plugin: str) -> list[dict[str, Any]]:
    """The Dagster runs of a plug-in, newest first, as the webserver lists them."""
    variables = {"filter": {"tags": [{"key": "almanac/plugin", "value": plugin}]}}
    return list(graphql(ui, RUNS, variables)["runsOrError"]["results"])


def _recorded(run: dict[str, Any]) -> bool:
    tags = {tag["key"]: tag["value"] for tag in run["tags"]}
    return run["status"] in ("SUCCESS", "FAILURE", "CANCELED") and "almanac/recorded" in tags


def test_the_dagster_machine_killed_while_a_run_writes_and_started_again(built: Built) -> None:
    top = built.topology
    before = built.store()
    readers = built.readers()
    with (
        psycopg.connect(top.plain_url(), autocommit=True) as watcher,
        psycopg.connect(top.plain_url()) as holder,
        readers.running(),
    ):
        held = {"holder": holder.info.backend_pid}
        holder.execute(stand_in.HOLD)
        _approve(built, BIG)
        _approve(built, SMALL)
        top.wait_until(
            "the big run's write",
            lambda: watcher.execute(stand_in.HELD_WRITE, held).fetchall(),
            RUN_SECONDS,
        )
        killed = top["dagster"].kill()
        killed_at = time.monotonic()
        holder.rollback()  # the write's backend goes on, to find its client gone
        started = top.start_dagster()
        small = top.wait_until(
            "the queued run's success after the start",
            lambda: [r for r in built.runs(SMALL) if r["outcome"] == "success"],
            SETTLE_SECONDS,
        )
        settled_at = time.monotonic()
        settled = top.wait_until(
            "the killed run failed with its outcome kept",
            lambda: (
                all(_recorded(r) for r in dagster_runs(top.ui, BIG)) and len(built.runs(BIG)) == 1
            ),
            SETTLE_SECONDS,
        )
    after = built.store()
    print(
        f"Dagster machine killed ({killed} processes) while the big run wrote; started again, "
        f"its webserver answering in {started:.1f} s; the queued run succeeded {small:.1f} s "
        f"later; the killed run's outcome kept {settled + (settled_at - killed_at):.1f} s after "
        "the kill"
    )
    _print_figures(readers, before, after)
    [big_run] = dagster_runs(top.ui, BIG)
    [big] = built.runs(BIG)
    # The write was held uncommitted until its machine was gone: never half-written.
    assert (big["trigger"], big["outcome"]) == ("first", "failure"), big
    assert after["records"].get(BIG, 0) == 0
    assert big_run["status"] == "FAILURE"
    [small_run] = dagster_runs(top.ui, SMALL)
    assert small_run["status"] == "SUCCESS"
    assert [r["outcome"] for r in built.runs(SMALL)] == ["success"]
    assert after["records"][SMALL] == SMALL_RECORDS
    assert after["store runs sharing a Dagster run"] == 0
    assert readers.failed() == [], readers.figures()


def test_an_api_machine_killed_and_started_again(built: Built) -> None:
    top = built.topology
    before = built.store()
    readers = built.readers()
    with readers.running():
        time.sleep(2)
        killed = top["api1"].kill()
        top.wait_until("HAProxy marking api1 down", lambda: top.server_states()["api1"] != "UP")
        time.sleep(2)
        restarted = top.start_api("api1")
        back = top.wait_for_haproxy()
        back_at = time.monotonic()
        time.sleep(3)
    fault = (
        f"api1 killed ({killed} processes), started again in {restarted:.1f} s, in HAProxy "
        f"{back:.1f} s later"
    )
    _api1_answers_again(built, readers, before, back_at, fault)


def _api1_answers_again(
    built: Built, readers: Readers, before: dict[str, Any], back_at: float, fault: str
) -> None:
    """After a fault of api1 (`fault` says what it was): the requests it took once back in
    HAProxy at `back_at` printed with the figures, no reader failed, the store unchanged."""
    after = built.store()
    taken = readers.machines_since(back_at)
    print(f"{fault}, then took {taken['api1']} of {sum(taken.values())} requests")
    _print_figures(readers, before, after)
    assert readers.failed() == [], readers.figures()
    assert taken["api1"] > 0, taken
    assert kept(after) == kept(before)


def _not_restarted(top: Topology, machine: str) -> None:
    log = top.log(machine).read_text(errors="replace")
    assert "started again" not in log, log[-3000:]


def test_postgresql_restarted(built: Built) -> None:
    top = built.topology
    before = built.store()
    readers = built.readers()
    days = [(built.today - timedelta(days=n)).isoformat() for n in (3, 4)]
    with readers.running():
        time.sleep(2)
        launch_partition_backfill(top.ui, SMALL, days)
        restart = top.restart_postgres()
        time.sleep(5)
    # Dagster reconnects on its own: the backfill's runs and one launched after the restart
    # end with one outcome each.
    after_day = (built.today - timedelta(days=5)).isoformat()
    launch_partition_backfill(top.ui, SMALL, [after_day])
    top.wait_until(
        "the backfills' runs ended with their outcomes kept",
        lambda: (
            len([r for r in built.runs(SMALL) if r["trigger"] == "backfill"]) == 3
            and all(_recorded(r) for r in dagster_runs(top.ui, SMALL))
        ),
        RUN_SECONDS,
    )
    after = built.store()
    failed = readers.failed()
    window = (failed[-1].ended - failed[0].began) if failed else 0.0
    backfills = {r["today"]: r["outcome"] for r in built.runs(SMALL) if r["trigger"] == "backfill"}
    print(
        f"PostgreSQL restarted in {restart:.1f} s; readers failed for {window:.1f} s; "
        f"backfilled days: {backfills}"
    )
    _print_figures(readers, before, after)
    for machine in ("api1", "api2", "dagster"):
        _not_restarted(top, machine)
    assert backfills[after_day] == "success"
    # No write lost or doubled: one store run a Dagster run, every record once.
    assert after["store runs sharing a Dagster run"] == 0
    assert after["records"] == before["records"]
    assert sum(after["runs"][SMALL].values()) == sum(before["runs"][SMALL].values()) + 3
    assert window <= restart + 2 * GET_SECONDS, readers.figures()


def test_an_api_machine_cut_from_postgresql_then_mended(built: Built) -> None:
    top = built.topology
    before = built.store()
    readers = built.readers()
    with readers.running():
        time.sleep(2)
        top.cut("api1", "pg")
        cut_at = time.monotonic()
        try:
            down = top.wait_until(
                "HAProxy marking api1 down", lambda: top.server_states()["api1"] != "UP"
            )
            time.sleep(max(0.0, CUT_SECONDS - (time.monotonic() - cut_at)))
        finally:
            top.mend("api1")
        mended_at = time.monotonic()
        back = top.wait_until(
            "api1 back in HAProxy", lambda: top.server_states()["api1"] == "UP", BACK_SECONDS
        )
        back_at = time.monotonic()
        time.sleep(3)
    fault = (
        f"api1 cut from PostgreSQL for {mended_at - cut_at:.1f} s: out of HAProxy "
        f"{down:.1f} s after the cut, back {back:.1f} s after the mend"
    )
    _api1_answers_again(built, readers, before, back_at, fault)
    _not_restarted(top, "api1")
