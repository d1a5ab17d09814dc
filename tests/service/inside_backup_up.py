"""Inside a network namespace of its own (run by `test_backup.py`): the real `almanac up` on its
embedded default, with an example plug-in's records written by the store's write path and a
reader showing it; `almanac backup` while the service runs; `almanac restore` into a fresh data
folder; the real `almanac up` on that folder serves the reader, signed in with the same
password, the same days, the same plug-ins, and shows the same Dagster runs.

Both services hold plug-in runs (`ALMANAC_RUN_SLOTS=0`: the examples' first runs wait in the
queue), so nothing but the backup and restore stands between the two answers."""

from __future__ import annotations

import json
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import httpx
import pytest

from almanac.platform.contract.records import check_batch
from almanac.platform.lifecycle import RunTrigger
from almanac.platform.store.engine import make_engine
from almanac.platform.store.write import RunFacts, write_run
from almanac.settings import load_settings
from tests.api.sqlite_writer import approved
from tests.audience.helpers import example_records
from tests.service.namespace import loopback_up
from tests.service.stand_in import PASSWORD, signed_up_person
from tests.service.up import START_SECONDS, Service, almanac, almanac_up, graphql, wait_for

EXAMPLE = "ecb-reference-rates"
READER = "reader@example.org"
HELD = {"ALMANAC_RUN_SLOTS": "0"}
RUNS = "{ runsOrError { ... on Runs { results { runId } } } }"


@pytest.fixture(autouse=True, scope="module")
def _loopback() -> None:
    loopback_up()


def _started(up: Service) -> None:
    deadline = time.monotonic() + START_SECONDS
    wait_for(f"{up.ui}/server_info", deadline, up)
    health = wait_for(f"{up.api}/health", deadline, up).json()
    assert (health["status"], health["database"], health["down"]) == ("ok", "ok", [])


def _read(client: httpx.Client, today: str) -> tuple[Any, Any]:
    """The reader's 61 days around the example's today, and the plug-ins the reader sees."""
    day = datetime.fromisoformat(today).date()
    params = {
        "from": (day - timedelta(days=30)).isoformat(),
        "to": (day + timedelta(days=30)).isoformat(),
        "today": today,
    }
    days = client.get("/api/v1/reader/days", params=params)
    assert days.status_code == 200, days.text
    plugins = client.get("/api/v1/reader/plugins")
    assert plugins.status_code == 200, plugins.text
    return days.json(), plugins.json()


def _runs(up: Service) -> set[str]:
    return {r["runId"] for r in graphql(up.ui, RUNS)["runsOrError"]["results"]}


def test_almanac_up_on_a_restored_home_serves_the_same_reader_days(tmp_path: Path) -> None:
    original, restored = tmp_path / "original", tmp_path / "restored"
    backup = tmp_path / "almanac.tar.gz"
    database_url = load_settings({"ALMANAC_HOME": str(original)}).database_url
    records, fixture_today = example_records(EXAMPLE)
    today = fixture_today.isoformat()

    with almanac_up(original, settings=HELD) as up:
        _started(up)
        # A run of the example written as a run worker writes it: its fixture records,
        # checked by the contract, through the store's write path, beside the running service.
        engine = make_engine(database_url)
        try:
            code, manifest = approved(engine, EXAMPLE)
            checked = check_batch([json.dumps(r) for r in records], manifest, fixture_today)
            assert checked.ok, checked.reason()
            now = datetime.now(UTC)
            write_run(
                engine,
                plugin_id=EXAMPLE,
                version_id=code.version_id,
                digest=code.digest,
                manifest=manifest,
                run=RunFacts(
                    today=fixture_today, trigger=RunTrigger.SCHEDULE, started_at=now, now=now
                ),
                batch=checked.records,
            )
        finally:
            engine.dispose()
        reader = signed_up_person(up.api, database_url, READER)
        shown = reader.put(
            "/api/v1/reader/preferences",
            json={"preferences": {f"plugins.{EXAMPLE}.shown": True}},
        )
        assert shown.status_code == 200, shown.text
        days, plugins = _read(reader, today)
        [entry] = days["plugins"]
        assert entry["plugin"] == EXAMPLE
        rows = [row for day in entry["days"] for s in day["sections"] for row in s["rows"]]
        assert len(rows) > 20, "the reader's days show the example's rates"
        # The examples' first runs are queued in Dagster (held by the pool's limit 0).
        deadline = time.monotonic() + START_SECONDS
        while len(runs := _runs(up)) < 1 and time.monotonic() < deadline:
            time.sleep(2)
        assert runs, up.log.read_text()[-5000:]

        said = almanac("backup", str(backup), home=original)
        assert said.returncode == 0, said.stdout + said.stderr
        assert up.process.poll() is None, "the service ran all along"
        up.stop()

    said = almanac("restore", str(backup), home=restored)
    assert said.returncode == 0, said.stdout + said.stderr

    with almanac_up(restored, settings=HELD) as again:
        _started(again)
        reader = httpx.Client(base_url=again.api, timeout=30)
        signed = reader.post("/api/v1/auth/signin", json={"email": READER, "password": PASSWORD})
        assert signed.status_code == 200, signed.text
        assert _read(reader, today) == (days, plugins)
        assert runs <= _runs(again), "the runs Dagster had before the backup came back"
        again.stop()
