"""One example plug-in from upload to a reader's installed days through the API alone, with the
real parts: the live app on PostgreSQL, the locked-room checks as Dagster runs of the checks job
(sources and listing pages on a loopback HTTPS server with a test CA), a reviewer's approval,
publishing, the plug-in's run launched by the due sensor through Dagster's run queue into the
real locked room, and the reader's store and days. A next version uploaded, checked and put in
review does not stop the published version running on its schedule."""

from __future__ import annotations

import json
from datetime import datetime, timedelta
from pathlib import Path

import dagster as dg
import pytest
from sqlalchemy import Engine, select

from almanac.assets.tags import TAG_SHADOW, TAG_TRIGGER, asset_key
from almanac.platform.store.plugins import plugin_status
from almanac.platform.store.tables import records
from tests.api.conftest import Api
from tests.api.test_host import UK, empty_plugin_tables
from tests.orchestration.harness import Orchestrator, SourceServer, store_runs
from tests.publishing.test_review_and_store import decide, desk, reviewer
from tests.publishing.test_submission import attest, files_with, may_submit, send
from tests.publishing.test_upload_checks import HOSTS, serve_uk
from tests.publishing.test_uploads import Publisher, new_org

V1 = "/api/v1"


def _checked(pub: Publisher, orch: Orchestrator, upload_id: int, at: datetime) -> dict:
    """The checks' runs go through the sensor and the run queue; the upload's answer after."""
    minute = orch.minute(at)
    assert minute.checks, "the checks job ran"
    assert all(run.status == dg.DagsterRunStatus.SUCCESS for run in minute.checks)
    shown = pub.owner.get(f"{pub.uploads}/{upload_id}").json()
    failing = {c["name"]: c["findings"] for c in shown["checks"] if c["status"] != "passed"}
    assert not failing, failing
    assert shown["state"] == "checked"
    return shown


@pytest.mark.timeout(600)
def test_an_example_goes_from_upload_to_a_readers_installed_days(api: Api, tmp_path: Path) -> None:
    empty_plugin_tables(api.engine)
    owner, org = new_org(api, "owner@bank.example", "Bank")
    pub = Publisher(api, owner, org)
    may_submit(pub)
    rev = reviewer(api, "rev@service.example")
    start = api.clock()

    def at(minutes: float) -> datetime:
        """Both clocks, the app's and Dagster's, at `minutes` after the start."""
        moment = start + timedelta(minutes=minutes)
        api.clock.moment = moment
        return moment

    with SourceServer(HOSTS) as server:
        serve_uk(server)
        with Orchestrator.open(
            tmp_path, api.engine, downloader=server.downloader, start=start
        ) as orch:
            made = send(pub, files_with())
            _checked(pub, orch, made["id"], at(1))
            attest(pub, made["id"])
            submitted = pub.owner.post(f"{pub.uploads}/{made['id']}/submit")
            assert submitted.status_code == 200, submitted.text
            at(30)
            reviewed = desk(rev, made["id"])["reviewed"]
            assert decide(rev, made["id"], "approve", reviewed).status_code == 200
            published = pub.owner.post(f"{pub.uploads}/{made['id']}/publish")
            assert published.status_code == 200, published.text
            # Live within minutes: the next sensor minute launches its first run.
            minute = orch.minute(at(31))
            assert minute.launched_plugins == [UK]
            [run] = store_runs(api.engine, UK)
            assert run["outcome"] == "success" and run["trigger"] == "first", run
            with api.engine.connect() as conn:
                status = plugin_status(conn, UK)
            assert run["version_id"] == status.approved_version_id
            assert status.approved_digest == made["digest"] and run["new"] > 0

            # A reader finds it in the store, installs it, and reads its days.
            reader = api.signed_in("reader@example.net")
            found = reader.get(f"{V1}/store/plugins", params={"q": "bank holidays"}).json()
            assert [e["plugin_id"] for e in found] == [UK]
            page = reader.post(f"{V1}/store/plugins/{UK}/install").json()
            assert page["entry"]["installed"] and page["last_success"] is not None
            days = reader.get(
                f"{V1}/reader/days",
                params={"from": "2022-12-20", "to": "2023-01-05", "today": "2026-11-02"},
            )
            assert days.status_code == 200, days.text
            [entry] = days.json()["plugins"]
            assert entry["plugin"] == UK and entry["status"] == "running"
            boxing = next(d for d in entry["days"] if d["date"] == "2022-12-26")
            [section] = boxing["sections"]
            assert any("Boxing Day" in json_text(row) for row in section["rows"])

            # A next version is uploaded, checked and put in review; the published version
            # keeps running on its schedule (06:00 London) meanwhile.
            nxt_files = files_with(version="1.1.0", releaseNotes={"en": "A comment."})
            nxt_files["fetch.mjs"] = b"// 1.1.0\n" + nxt_files["fetch.mjs"]
            nxt = send(pub, nxt_files)
            shown = _checked(pub, orch, nxt["id"], at(40))
            assert shown["record_diff"] is not None
            attest(pub, nxt["id"])
            assert pub.owner.post(f"{pub.uploads}/{nxt['id']}/submit").status_code == 200
            next_six = (start + timedelta(days=1)).replace(hour=6, minute=1)
            minute = orch.minute(at((next_six - start).total_seconds() / 60))
            assert minute.launched_plugins == [UK]
            runs = store_runs(api.engine, UK)
            assert [r["trigger"] for r in runs] == ["first", "schedule"]
            assert {r["version_id"] for r in runs} == {status.approved_version_id}
            assert runs[-1]["outcome"] == "success"
            with api.engine.connect() as conn:
                assert plugin_status(conn, UK).state == "approved"
            assert pub.owner.get(f"{pub.uploads}/{nxt['id']}").json()["state"] == "in_review"

            # Published with a shadow period of 1: the next scheduled Dagster run is one shadow
            # pair, tagged and described as such, writing once (the current version's records).
            at((next_six - start).total_seconds() / 60 + 30)
            approving = decide(rev, nxt["id"], "approve", desk(rev, nxt["id"])["reviewed"])
            assert approving.status_code == 200, approving.text
            shadowed = pub.owner.post(f"{pub.uploads}/{nxt['id']}/publish", json={"shadow": 1})
            assert shadowed.status_code == 200, shadowed.text
            kept = stored_records(api.engine)
            minute = orch.minute(at((next_six - start).total_seconds() / 60 + 24 * 60))
            [pair] = minute.launched
            assert pair.status == dg.DagsterRunStatus.SUCCESS
            assert (pair.tags[TAG_SHADOW], pair.tags[TAG_TRIGGER]) == ("1.1.0", "schedule")
            [written] = orch.instance.all_logs(
                pair.run_id, of_type=dg.DagsterEventType.ASSET_MATERIALIZATION
            )
            materialization = written.asset_materialization
            assert materialization is not None and materialization.asset_key == asset_key(UK)
            shown = {k: v.value for k, v in materialization.metadata.items()}
            assert (shown["shadow version"], shown["shadow outcome"]) == ("1.1.0", "passed")
            assert shown["shadow rollout"] == "promoted", "a shadow period of 1 run is done"
            zero = {"new": 0, "revised": 0, "moved": 0, "missing": 0}
            assert shown["shadow diff"] == dict.fromkeys(SERIES, zero)
            last = store_runs(api.engine, UK)[-1]
            assert last["version_id"] == status.approved_version_id
            assert (
                stored_records(api.engine) == kept == {(status.approved_digest, n) for _, n in kept}
            )
    empty_plugin_tables(api.engine)


SERIES = ("england-and-wales", "northern-ireland", "scotland")


def stored_records(engine: Engine) -> set[tuple[str, int]]:
    """The plug-in's records as (the digest of the version that wrote it, id)."""
    with engine.connect() as conn:
        rows = conn.execute(
            select(records.c.digest, records.c.id).where(records.c.plugin_id == UK)
        ).all()
    return {(d, i) for d, i in rows}


def json_text(row: dict) -> str:
    return json.dumps(row, ensure_ascii=False)
