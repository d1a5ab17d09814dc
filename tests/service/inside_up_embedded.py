"""Inside a network namespace of its own (run by `test_up.py`): two `almanac up` instances side
by side on their own data folders and ports, each serving the API and the Dagster UI, the
example plug-ins approved on the fresh store and shown as assets, and Ctrl-C stopping every
process it started. The examples' first runs reach for their real hosts, which resolve to
nothing here."""

from __future__ import annotations

import time
from pathlib import Path

import httpx
import pytest

from tests.service.namespace import loopback_up
from tests.service.up import (
    EXAMPLES,
    START_SECONDS,
    alive,
    almanac_up,
    asset_keys,
    descendants,
    wait_for,
)


@pytest.fixture(autouse=True, scope="module")
def _loopback() -> None:
    loopback_up()


def test_two_instances_serve_side_by_side_and_stop_cleanly_on_ctrl_c(tmp_path: Path) -> None:
    with almanac_up(tmp_path / "one") as one, almanac_up(tmp_path / "two") as two:
        deadline = time.monotonic() + START_SECONDS
        for service in (one, two):
            health = wait_for(f"{service.api}/health", deadline, service)
            assert health.json() == {"status": "ok", "database": "ok"}
            wait_for(f"{service.ui}/server_info", deadline, service)
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
        # The other instance is untouched by the first one's stop, and stops the same way.
        assert httpx.get(f"{two.api}/health", timeout=5).status_code == 200
        started = descendants(two.process.pid)
        two.stop()
        assert [pid for pid in started if alive(pid)] == [], "Ctrl-C left processes running"
