"""`almanac up` for real: two instances side by side on their own data folders and ports, each
serving the API and the Dagster UI, the example plug-ins approved on the fresh store and shown
as assets, and Ctrl-C stopping every process it started."""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest

REPO = Path(__file__).resolve().parents[2]
EXAMPLES = sorted(p.name for p in (REPO / "examples").iterdir() if (p / "plugin.json").is_file())
START_SECONDS = 240


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _descendants(pid: int) -> set[int]:
    found: set[int] = set()
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[1]) == pid:
            child = int(entry.name)
            found |= {child, *_descendants(child)}
    return found


def _alive(pid: int) -> bool:
    try:
        state = (Path("/proc") / str(pid) / "stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


@dataclass
class Service:
    process: subprocess.Popen[str]
    home: Path
    api: str
    ui: str
    output: list[str]


@contextmanager
def almanac_up(home: Path) -> Iterator[Service]:
    api_port, ui_port = _free_port(), _free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ALMANAC_", "DAGSTER_"))}
    env.update(
        ALMANAC_HOME=str(home), ALMANAC_PORT=str(api_port), ALMANAC_DAGSTER_PORT=str(ui_port)
    )
    process = subprocess.Popen(
        [str(Path(sys.executable).parent / "almanac"), "up"],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,
    )
    service = Service(
        process, home, f"http://127.0.0.1:{api_port}", f"http://127.0.0.1:{ui_port}", []
    )
    try:
        yield service
    finally:
        # `almanac up` starts each child in a session of its own: only its own stop (SIGINT)
        # reaches them, and a kill of its group alone would leave them running.
        children = _descendants(process.pid)
        if process.poll() is None:
            process.send_signal(signal.SIGINT)
            try:
                process.wait(timeout=60)
            except subprocess.TimeoutExpired:
                os.killpg(process.pid, signal.SIGKILL)
        for pid in children | _descendants(process.pid):
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        process.wait()


def _wait_for(url: str, deadline: float, process: subprocess.Popen[str]) -> httpx.Response:
    while time.monotonic() < deadline:
        assert process.poll() is None, "almanac up stopped before answering"
        try:
            response = httpx.get(url, timeout=2)
            if response.status_code == 200:
                return response
        except httpx.HTTPError:
            pass
        time.sleep(0.5)
    pytest.fail(f"{url} did not answer within {START_SECONDS} s")


def _asset_keys(ui: str) -> set[str]:
    query = "{ assetNodes { assetKey { path } } }"
    answer = httpx.post(f"{ui}/graphql", json={"query": query}, timeout=30)
    answer.raise_for_status()
    return {"/".join(n["assetKey"]["path"]) for n in answer.json()["data"]["assetNodes"]}


def test_two_instances_serve_side_by_side_and_stop_cleanly_on_ctrl_c(tmp_path: Path) -> None:
    with almanac_up(tmp_path / "one") as one, almanac_up(tmp_path / "two") as two:
        deadline = time.monotonic() + START_SECONDS
        for service in (one, two):
            health = _wait_for(f"{service.api}/health", deadline, service.process)
            assert health.json() == {"status": "ok", "database": "ok"}
            _wait_for(f"{service.ui}/server_info", deadline, service.process)
            assert (service.home / "almanac.db").is_file()
            assert (service.home / "dagster" / "dagster.yaml").is_file()
        # Each instance's UI shows its own example plug-ins, approved on its fresh store.
        for service in (one, two):
            while True:
                keys = _asset_keys(service.ui)
                if keys or time.monotonic() > deadline:
                    break
                time.sleep(1)
            assert keys == {f"plugins/{plugin_id}" for plugin_id in EXAMPLES}
        tool = httpx.get(f"{one.api}/tool/almanac-plugin.mjs", timeout=10)
        assert tool.status_code == 200 and "almanac-plugin" in tool.text

        started = _descendants(one.process.pid)
        assert len(started) >= 3, "the webserver, the daemon and the API run as children"
        one.process.send_signal(signal.SIGINT)
        out, _ = one.process.communicate(timeout=60)
        assert one.process.returncode == 0, out
        assert f"Dagster UI: {one.ui}" in out and f"API:        {one.api}" in out
        for plugin_id in EXAMPLES:
            assert f"approved at first start: {plugin_id} sha256:" in out
        assert [pid for pid in started if _alive(pid)] == [], "Ctrl-C left processes running"
        # The other instance is untouched by the first one's stop, and stops the same way.
        assert httpx.get(f"{two.api}/health", timeout=5).status_code == 200
        started = _descendants(two.process.pid)
        two.process.send_signal(signal.SIGINT)
        out, _ = two.process.communicate(timeout=60)
        assert two.process.returncode == 0, out
        assert [pid for pid in started if _alive(pid)] == [], "Ctrl-C left processes running"


def test_a_second_start_approves_nothing_and_a_changed_example_stays_pending(
    tmp_path: Path,
) -> None:
    import json
    import shutil

    from almanac.platform.store import plugins as store_plugins
    from almanac.platform.store.engine import make_engine
    from almanac.service import prepare
    from almanac.settings import load_settings

    examples = tmp_path / "examples"
    shutil.copytree(REPO / "examples", examples)
    settings = load_settings({"ALMANAC_HOME": str(tmp_path / "home")})
    registered, approved = prepare(settings, examples=examples)
    assert registered == EXAMPLES
    assert [plugin_id for plugin_id, _ in approved] == EXAMPLES

    changed = EXAMPLES[0]
    manifest_path = examples / changed / "plugin.json"
    manifest = json.loads(manifest_path.read_text())
    major, minor, patch = manifest["version"].split(".")
    manifest["version"] = f"{major}.{minor}.{int(patch) + 1}"
    manifest_path.write_text(json.dumps(manifest, indent=2) + "\n")
    registered, approved = prepare(settings, examples=examples)
    assert registered == EXAMPLES and approved == []
    engine = make_engine(settings.database_url)
    try:
        with engine.connect() as conn:
            states = {p: store_plugins.plugin_status(conn, p).state for p in EXAMPLES}
    finally:
        engine.dispose()
    assert states[changed] == "pending"
    assert {p: s for p, s in states.items() if p != changed} == dict.fromkeys(
        EXAMPLES[1:], "approved"
    )
