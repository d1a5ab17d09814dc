"""Inside a network namespace of its own (run by `test_up.py`): the real `almanac up` on a fresh
PostgreSQL database (`UP_DATABASE_URL`, reached through a Unix socket relay), or on its embedded
default when that is unset, with no test-only Dagster instance in between. It registers the
example plug-ins at first start; an operator registers a new plug-in's pack over HTTP and
approves it by digest; the plug-in becomes an asset in the running webserver, with its
partitions and checks; the daemon starts its first run, the downloader fetches its source over
TLS from a public stand-in address, the locked room runs the fetcher, and the records are read
back through the reader API; an analyst backfills two days through the webserver, and the
plug-in's checks are evaluated."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import httpx
import pytest
import trustme
from sqlalchemy import create_engine, text

from almanac.node import node_binary
from almanac.settings import load_settings
from tests.sandbox.tls_server import TLSServer
from tests.service.namespace import PUBLIC, enter_public_stand_in
from tests.service.up import (
    EXAMPLES,
    REPO,
    START_SECONDS,
    Service,
    alive,
    almanac_up,
    check_executions,
    descendants,
    launch_partition_backfill,
    plugin_asset_node,
    wait_for,
)

SOURCE_HOST = "rates.example.org"
PLUGIN = "stand-in-rates"
EMAIL = "operator@example.org"
PASSWORD = "a long pass phrase for the operator"
RUN_SECONDS = 420
CATALOG_SECONDS = 60
"""The bound within which a plug-in approved while the service runs is an asset in the
webserver (issue 30: within a minute, without a restart)."""
CHECKS = ["freshness", "held", "volume"]


@pytest.fixture(scope="module")
def source_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[TLSServer]:
    ca = trustme.CA()
    enter_public_stand_in([SOURCE_HOST], ca.cert_pem.bytes(), tmp_path_factory.mktemp("ns"))
    with TLSServer(ca, (SOURCE_HOST,), bind=(PUBLIC, 443)) as server:
        yield server


def _tool(*args: str, cwd: Path) -> str:
    done = subprocess.run(
        [str(node_binary()), str(REPO / "tool" / "almanac-plugin.mjs"), *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=180,
        env={**os.environ, "ALMANAC_PLUGIN_NOW": datetime.now(UTC).isoformat()},
    )
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout


def _plugin_pack(work: Path) -> tuple[bytes, str, str]:
    """A new public value plug-in made from the tool's template, its one source on the stand-in
    host; returns the packed archive, its digest and the source file served."""
    _tool("init", PLUGIN, "--kind", "value", cwd=work)
    folder = work / PLUGIN
    manifest = json.loads((folder / "plugin.json").read_text())
    manifest["audience"] = "public"
    manifest["sources"][0]["url"] = f"https://{SOURCE_HOST}/rates.csv"
    (folder / "plugin.json").write_text(json.dumps(manifest, indent=2) + "\n")
    out = _tool("pack", PLUGIN, "--out", str(work / "pack.zip"), cwd=work)
    digest = re.search(r"^digest (sha256:[0-9a-f]{64})$", out, re.MULTILINE)
    assert digest, out
    source = (folder / "fixtures" / "sources" / manifest["sources"][0]["name"]).read_text()
    return (work / "pack.zip").read_bytes(), digest.group(1), source


def _person(api: str, database_url: str, email: str) -> httpx.Client:
    """A new person as one becomes one: sign-up over HTTP, the mailed link (kept in the
    outbox: no SMTP here), sign-in over HTTP."""
    client = httpx.Client(base_url=api, timeout=30)
    made = client.post("/api/v1/auth/signup", json={"email": email, "password": PASSWORD})
    assert made.status_code == 201, made.text
    engine = create_engine(database_url)
    with engine.connect() as conn:
        body = conn.execute(
            text("SELECT body FROM mail_outbox WHERE to_address = :to ORDER BY id DESC"),
            {"to": email},
        ).scalar_one()
    engine.dispose()
    link = re.search(r"https?://\S+/api/v1/auth/verify\?token=\S+", body)
    assert link, body
    assert client.get(link.group(0)).status_code == 200
    signed = client.post("/api/v1/auth/signin", json={"email": email, "password": PASSWORD})
    assert signed.status_code == 200, signed.text
    return client


def _operator(api: str, database_url: str) -> httpx.Client:
    """An operator: a new person granted the role by `almanac staff grant` on the machine."""
    client = _person(api, database_url, EMAIL)
    granted = subprocess.run(
        [str(Path(sys.executable).parent / "almanac"), "staff", "grant", EMAIL, "operator"],
        env={**os.environ, "ALMANAC_DATABASE_URL": database_url},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert granted.returncode == 0, granted.stderr
    return client


def _api_workers(up: Service) -> int:
    """How many processes the API's uvicorn started to serve requests."""
    for pid in descendants(up.process.pid):
        try:
            command = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ")
        except OSError:
            continue
        if b"almanac.service:api_app" in command:
            # uvicorn's workers are multiprocessing children (beside its resource tracker).
            return sum(
                b"spawn_main" in Path(f"/proc/{child}/cmdline").read_bytes()
                for child in descendants(pid)
                if Path(f"/proc/{child}").exists()
            )
    return 0


def _ok(response: httpx.Response, status: int = 200) -> Any:
    assert response.status_code == status, response.text
    return response.json()


def _runs_until(
    operator: httpx.Client, plugin_id: str, deadline: float, up: Service
) -> list[dict[str, Any]]:
    while time.monotonic() < deadline:
        assert up.process.poll() is None, "almanac up stopped: " + up.log.read_text()[-5000:]
        runs = _ok(operator.get(f"/api/v1/host/plugins/{plugin_id}/runs"))
        if runs:
            return runs
        time.sleep(2)
    pytest.fail(f"{plugin_id} never ran within {RUN_SECONDS} s: " + up.log.read_text()[-5000:])


def _asset_within(up: Service, plugin_id: str, bound: float) -> tuple[dict[str, Any], float]:
    """The plug-in's asset node once the webserver shows it, and how long that took."""
    started = time.monotonic()
    while time.monotonic() - started < bound:
        node = plugin_asset_node(up.ui, plugin_id)
        if node is not None:
            return node, time.monotonic() - started
        time.sleep(1)
    pytest.fail(f"{plugin_id} is no asset {bound} s after approval: " + up.log.read_text()[-5000:])


def _runs_of(operator: httpx.Client, plugin_id: str, trigger: str) -> list[dict[str, Any]]:
    runs = _ok(operator.get(f"/api/v1/host/plugins/{plugin_id}/runs"))
    return [run for run in runs if run["trigger"] == trigger]


def test_a_plugin_approved_over_http_is_an_asset_runs_and_backfills(
    source_server: TLSServer, tmp_path: Path
) -> None:
    home = tmp_path / "home"
    given = os.environ.get("UP_DATABASE_URL")
    database_url = given or load_settings({"ALMANAC_HOME": str(home)}).database_url
    archive, digest, source = _plugin_pack(tmp_path)
    source_server.routes["/rates.csv"] = lambda h: h.reply(200, source.encode())

    # As in production: PostgreSQL for the store and Dagster (or the embedded default), the
    # API in two worker processes.
    with almanac_up(home, given, ("--api-workers", "2")) as up:
        deadline = time.monotonic() + START_SECONDS
        health = wait_for(f"{up.api}/health", deadline, up).json()
        assert (health["status"], health["database"], health["down"]) == ("ok", "ok", [])
        wait_for(f"{up.ui}/server_info", deadline, up)
        operator = _operator(up.api, database_url)

        # The examples are registered and approved at first start on PostgreSQL too (their
        # first runs may have failed already: no source is reachable from this namespace).
        listed = {p["id"]: p for p in _ok(operator.get("/api/v1/host/plugins"))}
        assert sorted(listed) == sorted(EXAMPLES)
        for example in listed.values():
            assert example["approved_digest"] == example["current_digest"] is not None, example
            assert example["state"] in ("approved", "failing"), example

        made = _ok(
            operator.post(
                "/api/v1/host/plugins/pack",
                content=archive,
                headers={"Content-Type": "application/zip"},
            ),
            201,
        )
        assert (made["plugin_id"], made["digest"]) == (PLUGIN, digest)
        approved = _ok(
            operator.post(f"/api/v1/host/plugins/{PLUGIN}/approve", json={"digest": digest})
        )
        assert approved["state"] == "approved"
        # The running webserver shows it as a partitioned asset with its three checks.
        node, took = _asset_within(up, PLUGIN, CATALOG_SECONDS)
        print(f"asset in the webserver {took:.1f} s after approval")
        assert node["isPartitioned"] and len(node["partitionKeys"]) > 300
        checks = node["assetChecksOrError"]["checks"]
        assert sorted(check["name"] for check in checks) == CHECKS

        # The daemon (sensor, queue, run worker) starts the first run on its own.
        run_deadline = time.monotonic() + RUN_SECONDS
        [run] = _runs_until(operator, PLUGIN, run_deadline, up)
        assert (run["outcome"], run["reason"], run["trigger"]) == ("success", None, "first")
        assert run["digest"] == digest
        lines = [line for line in source.splitlines()[1:] if line.split(",")[0] <= run["today"]]
        assert lines, "the template's source holds rates up to today"
        assert run["new"] == len(lines)
        # The run downloaded its source; the version's checks (queued at registration) fetch
        # the real source once too.
        assert {r.path for r in source_server.requests} == {"/rates.csv"}
        assert set(source_server.sni) == {SOURCE_HOST}

        dates = sorted(line.split(",")[0] for line in lines)
        stored = _ok(
            operator.get(
                f"/api/v1/reader/plugins/{PLUGIN}/records",
                params={"from": dates[0], "to": dates[-1]},
            )
        )
        assert sorted(
            (r["record"]["date"], r["record"]["fields"]["rate"]) for r in stored["records"]
        ) == sorted((d, float(rate)) for d, rate in (line.split(",") for line in lines))

        # A reader turns the plug-in on and sees each rate on its day, from either API worker.
        assert _api_workers(up) == 2
        reader = _person(up.api, database_url, "reader@example.org")
        shown = reader.put(
            "/api/v1/reader/preferences",
            json={"preferences": {f"plugins.{PLUGIN}.shown": True}},
        )
        assert shown.status_code == 200, shown.text
        for _ in range(4):  # new connections, so the proxy-less kernel spreads them
            with httpx.Client(base_url=up.api, timeout=30, cookies=reader.cookies) as fresh:
                drawn = _ok(
                    fresh.get(
                        "/api/v1/reader/days",
                        params={"from": dates[0], "to": dates[-1], "today": run["today"]},
                    )
                )
            [entry] = drawn["plugins"]
            assert entry["plugin"] == PLUGIN and entry["status"] == "running"
            on_days = {
                day["date"]
                for day in entry["days"]
                for section in day["sections"]
                for row in section["rows"]
                if row["type"] == "value" and row["date"] == day["date"]
            }
            assert on_days == set(dates)

        # An analyst backfills two past days from the webserver, as the UI's partitions
        # dialog does; the daemon runs both, and the plug-in's checks are evaluated.
        days = node["partitionKeys"][-4:-2]
        launch_partition_backfill(up.ui, PLUGIN, days)
        while len(backfilled := _runs_of(operator, PLUGIN, "backfill")) < 2:
            assert time.monotonic() < run_deadline, up.log.read_text()[-5000:]
            time.sleep(2)
        assert sorted((r["today"], r["outcome"]) for r in backfilled) == [
            (day, "success") for day in days
        ]
        while not all(check_executions(up.ui, PLUGIN, name) for name in CHECKS):
            assert time.monotonic() < run_deadline, up.log.read_text()[-5000:]
            time.sleep(2)
        for name in CHECKS:
            [*_, first] = check_executions(up.ui, PLUGIN, name)
            assert first["status"] in ("SUCCEEDED", "FAILED"), (name, first)
            assert first["evaluation"] is not None, (name, first)

        # The examples' own first runs were recorded too: their real hosts resolve to nothing
        # in this namespace, so each failed with the downloader's reason.
        for plugin_id in EXAMPLES:
            [example_run] = _runs_until(operator, plugin_id, run_deadline, up)
            assert example_run["outcome"] == "failure"
            assert example_run["reason"].startswith("could not download ")

        started = descendants(up.process.pid)
        out = up.stop()
        for plugin_id in EXAMPLES:
            assert f"approved at first start: {plugin_id} sha256:" in out
        # No SMTP server: the API workers printed each verification mail on the console, on
        # PostgreSQL as on the embedded default (issue 30).
        for email in (EMAIL, "reader@example.org"):
            note = f"mail to {email} (kept in the outbox, no SMTP server set): Verify"
            assert note in out, out[-5000:]
            assert re.search(
                rf"{re.escape(note)}[^\n]*\n  {re.escape(up.api)}/api/v1/auth/verify", out
            )
        assert [pid for pid in started if alive(pid)] == [], "Ctrl-C left processes running"
