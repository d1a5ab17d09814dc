"""`almanac up` started for real as the README starts it (a child process whose webserver,
daemon and API are its own children), and what a test needs to wait for it and stop it."""

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
from typing import Any

import httpx
import pytest

REPO = Path(__file__).resolve().parents[2]
EXAMPLES = sorted(p.name for p in (REPO / "examples").iterdir() if (p / "plugin.json").is_file())
START_SECONDS = 240


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def descendants(pid: int) -> set[int]:
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
            found |= {child, *descendants(child)}
    return found


def alive(pid: int) -> bool:
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
    log: Path

    def stop(self) -> str:
        """Ctrl-C, as a person stops it; returns everything it printed. Fails unless it ends
        within a minute with exit status 0."""
        self.process.send_signal(signal.SIGINT)
        self.process.wait(timeout=60)
        output = self.log.read_text()
        assert self.process.returncode == 0, output[-5000:]
        return output


@contextmanager
def almanac_up(
    home: Path,
    database_url: str | None = None,
    args: tuple[str, ...] = (),
    settings: dict[str, str] | None = None,
) -> Iterator[Service]:
    """`almanac up` as the README starts it (with `args`), on its embedded default or on
    `database_url`, with other `settings` of the environment (`ALMANAC_RUN_SLOTS`, ...)."""
    api_port, ui_port = free_port(), free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ALMANAC_", "DAGSTER_"))}
    env.update(settings or {})
    env.update(
        ALMANAC_HOME=str(home), ALMANAC_PORT=str(api_port), ALMANAC_DAGSTER_PORT=str(ui_port)
    )
    if database_url is not None:
        env["ALMANAC_DATABASE_URL"] = database_url
    # Its output goes to a file: a pipe nobody reads fills up and stops every process that
    # logs to it (the API's request log first).
    log = home.parent / f"{home.name}.log"
    with log.open("w") as out:
        process = subprocess.Popen(
            [str(Path(sys.executable).parent / "almanac"), "up", *args],
            env=env,
            stdout=out,
            stderr=subprocess.STDOUT,
            text=True,
            start_new_session=True,
        )
    service = Service(
        process, home, f"http://127.0.0.1:{api_port}", f"http://127.0.0.1:{ui_port}", log
    )
    try:
        yield service
    finally:
        # `almanac up` starts each child in a session of its own: only its own stop (SIGINT)
        # reaches them, and a kill of its group alone would leave them running.
        children = descendants(process.pid)
        if process.poll() is None:
            process.send_signal(signal.SIGINT)
            try:
                process.wait(timeout=60)
            except subprocess.TimeoutExpired:
                os.killpg(process.pid, signal.SIGKILL)
        for pid in children | descendants(process.pid):
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        process.wait()


def almanac(
    *args: str, home: Path | None = None, database_url: str | None = None
) -> subprocess.CompletedProcess[str]:
    """Another `almanac` command (`backup`, `restore`, ...) as an operator runs it, with only
    these settings."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ALMANAC_", "DAGSTER_"))}
    if home is not None:
        env["ALMANAC_HOME"] = str(home)
    if database_url is not None:
        env["ALMANAC_DATABASE_URL"] = database_url
    return subprocess.run(
        [str(Path(sys.executable).parent / "almanac"), *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )


def wait_for(url: str, deadline: float, service: Service) -> httpx.Response:
    """The first 200 answer of `url`; fails with the service's output when none comes."""
    while time.monotonic() < deadline:
        assert service.process.poll() is None, (
            "almanac up stopped before answering:\n" + (service.log.read_text()[-5000:])
        )
        try:
            response = httpx.get(url, timeout=2)
            if response.status_code == 200:
                return response
        except httpx.HTTPError:
            pass
        time.sleep(0.5)
    pytest.fail(
        f"{url} did not answer within {START_SECONDS} s:\n{service.log.read_text()[-5000:]}"
    )


def asset_keys(ui: str) -> set[str]:
    query = "{ assetNodes { assetKey { path } } }"
    answer = httpx.post(f"{ui}/graphql", json={"query": query}, timeout=30)
    answer.raise_for_status()
    return {"/".join(n["assetKey"]["path"]) for n in answer.json()["data"]["assetNodes"]}


def graphql(ui: str, query: str, variables: dict[str, object] | None = None) -> dict[str, Any]:
    """One GraphQL request to the Dagster webserver, as its UI sends them."""
    answer = httpx.post(
        f"{ui}/graphql", json={"query": query, "variables": variables or {}}, timeout=60
    )
    answer.raise_for_status()
    body = answer.json()
    assert "errors" not in body, body
    return body["data"]


ASSET_NODE = """query ($key: AssetKeyInput!) {
  assetNodes(assetKeys: [$key]) {
    isPartitioned
    partitionKeys
    assetChecksOrError { ... on AssetChecks { checks { name } } }
  }
}"""


def plugin_asset_node(ui: str, plugin_id: str) -> dict[str, Any] | None:
    """The webserver's asset node of a plug-in (partitions and checks), or None."""
    nodes = graphql(ui, ASSET_NODE, {"key": {"path": ["plugins", plugin_id]}})["assetNodes"]
    return nodes[0] if nodes else None


def launch_partition_backfill(ui: str, plugin_id: str, days: list[str]) -> str:
    """What the UI's "Materialize selected partitions" sends: a backfill of `days`."""
    query = """mutation ($params: LaunchBackfillParams!) {
      launchPartitionBackfill(backfillParams: $params) {
        __typename
        ... on LaunchBackfillSuccess { backfillId }
        ... on PythonError { message }
      }
    }"""
    params = {"partitionNames": days, "assetSelection": [{"path": ["plugins", plugin_id]}]}
    launched = graphql(ui, query, {"params": params})["launchPartitionBackfill"]
    assert launched["__typename"] == "LaunchBackfillSuccess", launched
    return str(launched["backfillId"])


def check_executions(ui: str, plugin_id: str, check: str) -> list[dict[str, Any]]:
    """The webserver's evaluations of one of a plug-in's asset checks, newest first."""
    query = """query ($key: AssetKeyInput!, $name: String!) {
      assetCheckExecutions(assetKey: $key, checkName: $name, limit: 20) {
        status
        evaluation { success }
      }
    }"""
    variables = {"key": {"path": ["plugins", plugin_id]}, "name": check}
    return list(graphql(ui, query, variables)["assetCheckExecutions"])
