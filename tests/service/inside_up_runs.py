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

import os
import re
import time
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.sandbox.tls_server import TLSServer
from tests.service import stand_in
from tests.service.stand_in import source_server  # noqa: F401  (a fixture)
from tests.service.up import (
    EXAMPLES,
    Service,
    alive,
    check_executions,
    descendants,
    launch_partition_backfill,
    plugin_asset_node,
)

PLUGIN = "stand-in-rates"
RUN_SECONDS = 420
CATALOG_SECONDS = 60
"""The bound within which a plug-in approved while the service runs is an asset in the
webserver (issue 30: within a minute, without a restart)."""
CHECKS = ["freshness", "held", "volume"]


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


def _runs_until(
    operator: httpx.Client, plugin_id: str, deadline: float, up: Service
) -> list[dict[str, Any]]:
    while time.monotonic() < deadline:
        assert up.process.poll() is None, "almanac up stopped: " + up.log.read_text()[-5000:]
        runs = stand_in.ok(operator.get(f"/api/v1/host/plugins/{plugin_id}/runs"))
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
    runs = stand_in.ok(operator.get(f"/api/v1/host/plugins/{plugin_id}/runs"))
    return [run for run in runs if run["trigger"] == trigger]


def test_a_plugin_approved_over_http_is_an_asset_runs_and_backfills(
    source_server: TLSServer,  # noqa: F811
    tmp_path: Path,
) -> None:
    pack = stand_in.value_plugin_pack(tmp_path, PLUGIN)
    source = pack.fixture_source().decode()
    source_server.routes["/rates.csv"] = lambda h: h.reply(200, source.encode())

    # As in production: PostgreSQL for the store and Dagster (or the embedded default), the
    # API in two worker processes.
    with stand_in.served(tmp_path / "home", os.environ.get("UP_DATABASE_URL")) as service:
        up, operator, health = service.up, service.operator, service.health
        assert (health["status"], health["database"], health["down"]) == ("ok", "ok", [])

        # The examples are registered and approved at first start on PostgreSQL too (their
        # first runs may have failed already: no source is reachable from this namespace).
        listed = {p["id"]: p for p in stand_in.ok(operator.get("/api/v1/host/plugins"))}
        assert sorted(listed) == sorted(EXAMPLES)
        for example in listed.values():
            assert example["approved_digest"] == example["current_digest"] is not None, example
            assert example["state"] in ("approved", "failing"), example

        stand_in.registered(operator, pack)
        stand_in.approved(operator, pack)
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
        assert run["digest"] == pack.digest
        lines = [line for line in source.splitlines()[1:] if line.split(",")[0] <= run["today"]]
        assert lines, "the template's source holds rates up to today"
        assert run["new"] == len(lines)
        # The run downloaded its source; the version's checks (queued at registration) fetch
        # the real source once too.
        assert {r.path for r in source_server.requests} == {"/rates.csv"}
        assert set(source_server.sni) == {stand_in.SOURCE_HOST}

        dates = sorted(line.split(",")[0] for line in lines)
        stored = stand_in.ok(
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
        reader = stand_in.signed_up_person(up.api, service.database_url, "reader@example.org")
        stand_in.shown(reader, PLUGIN)
        for _ in range(4):  # new connections, so the proxy-less kernel spreads them
            with httpx.Client(base_url=up.api, timeout=30, cookies=reader.cookies) as fresh:
                drawn = stand_in.ok(
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
        for email in (stand_in.EMAIL, "reader@example.org"):
            note = f"mail to {email} (kept in the outbox, no SMTP server set): Verify"
            assert note in out, out[-5000:]
            assert re.search(
                rf"{re.escape(note)}[^\n]*\n  {re.escape(up.api)}/api/v1/auth/verify", out
            )
        assert [pid for pid in started if alive(pid)] == [], "Ctrl-C left processes running"
