"""Inside a network namespace of its own (run by `test_up.py`): two `almanac up` instances side
by side on their own data folders and ports, each serving the API and the Dagster UI, the
example plug-ins approved on the fresh store and shown as assets, and Ctrl-C stopping every
process it started; the second instance, its Dagster daemon killed, starts it again while its
readers are answered (one start serves both tests). The examples' first runs reach for their
real hosts, which resolve to nothing here."""

from __future__ import annotations

import os
import signal
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from tests.service.namespace import loopback_up
from tests.service.up import (
    EXAMPLES,
    START_SECONDS,
    Service,
    alive,
    almanac_up,
    asset_keys,
    descendants,
    graphql,
    wait_for,
)


@pytest.fixture(autouse=True, scope="module")
def _loopback() -> None:
    loopback_up()


@pytest.fixture(scope="module")
def instances(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Service, Service]]:
    """Two `almanac up` side by side on their own data folders and ports, once both answer."""
    work = tmp_path_factory.mktemp("up")
    with almanac_up(work / "one") as one, almanac_up(work / "two") as two:
        deadline = time.monotonic() + START_SECONDS
        for service in (one, two):
            wait_for(f"{service.api}/health", deadline, service)
            wait_for(f"{service.ui}/server_info", deadline, service)
        yield one, two


def test_two_instances_serve_side_by_side_and_stop_cleanly_on_ctrl_c(
    instances: tuple[Service, Service],
) -> None:
    one, two = instances
    deadline = time.monotonic() + START_SECONDS
    for service in (one, two):
        health = httpx.get(f"{service.api}/health", timeout=10).json()
        assert (health["status"], health["database"], health["down"]) == ("ok", "ok", [])
        assert (service.home / "almanac.db").is_file()
        assert (service.home / "dagster" / "dagster.yaml").is_file()
    # Each instance's UI shows its own example plug-ins, approved on its fresh store.
    for service in (one, two):
        while True:
            keys = {k for k in asset_keys(service.ui) if k.startswith("plugins/")}
            if keys or time.monotonic() > deadline:
                break
            time.sleep(1)
        assert keys == {f"plugins/{plugin_id}" for plugin_id in EXAMPLES}
    tool = httpx.get(f"{one.api}/tool/almanac-plugin.mjs", timeout=10)
    assert tool.status_code == 200 and "almanac-plugin" in tool.text

    started = descendants(one.process.pid)
    assert len(started) >= 3, "the webserver, the daemon and the API run as children"
    out = one.stop()
    assert f"Dagster UI: {one.ui}" in out and f"API:        {one.api}" in out
    for plugin_id in EXAMPLES:
        assert f"approved at first start: {plugin_id} sha256:" in out
    assert [pid for pid in started if alive(pid)] == [], "Ctrl-C left processes running"
    # The other instance is untouched by the first one's stop (the next test stops it).
    assert httpx.get(f"{two.api}/health", timeout=5).status_code == 200


def _part_pids(service: Service, marker: bytes) -> set[int]:
    found = set()
    for pid in descendants(service.process.pid):
        try:
            command = Path(f"/proc/{pid}/cmdline").read_bytes()
        except OSError:
            continue
        if marker in command:
            found.add(pid)
    return found


DAEMON_HEALTH = "{ instance { daemonHealth { allDaemonStatuses { daemonType healthy } } } }"


def test_a_killed_daemon_is_started_again_while_readers_are_answered(
    instances: tuple[Service, Service],
) -> None:
    """Issue 31: the scheduler crashing no longer takes the API down with it. (The second
    instance, which then stops as cleanly as the first.)"""
    _, up = instances
    [daemon] = _part_pids(up, b"dagster-daemon\x00run")
    answers: list[int] = []
    seen_down: list[list[str]] = []
    stop = threading.Event()

    def read() -> None:
        with httpx.Client(base_url=up.api, timeout=10) as client:
            while not stop.is_set():
                try:
                    answers.append(client.get("/signin").status_code)
                    health = client.get("/health")
                except httpx.HTTPError:
                    answers.append(-1)
                    continue
                answers.append(health.status_code)
                seen_down.append(health.json()["down"])
                time.sleep(0.05)

    reader = threading.Thread(target=read)
    reader.start()
    try:
        time.sleep(1)
        killed_at = time.monotonic()
        os.kill(daemon, signal.SIGKILL)
        while not (_part_pids(up, b"dagster-daemon\x00run") - {daemon}):
            assert time.monotonic() - killed_at < 60, up.log.read_text()[-3000:]
            time.sleep(0.1)
        back = time.monotonic() - killed_at
        healthy = None
        while time.monotonic() - killed_at < 120:
            statuses = graphql(up.ui, DAEMON_HEALTH)["instance"]["daemonHealth"]
            healthy = {s["daemonType"]: s["healthy"] for s in statuses["allDaemonStatuses"]}
            if healthy.get("SENSOR") and healthy.get("QUEUED_RUN_COORDINATOR"):
                break
            time.sleep(1)
        assert healthy and healthy["SENSOR"] and healthy["QUEUED_RUN_COORDINATOR"], healthy
        healthy_after = time.monotonic() - killed_at
        time.sleep(1)
    finally:
        stop.set()
        reader.join()
    print(f"daemon started again {back:.1f} s after SIGKILL, healthy after {healthy_after:.1f} s")
    assert up.process.poll() is None, "almanac up went on"
    assert answers and set(answers) == {200}, sorted(set(answers))
    assert ["dagster-daemon"] in seen_down, "/health said which part was down"
    assert seen_down[-1] == []
    started = descendants(up.process.pid)
    out = up.stop()
    assert "almanac: dagster-daemon ended with status -9; starting it in 1 s" in out
    assert "almanac: dagster-daemon started again (restart 1)" in out
    assert [pid for pid in started if alive(pid)] == [], "Ctrl-C left processes running"
