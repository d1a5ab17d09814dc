"""The plug-in asset checks and alerts through the real Dagster machinery (`tests/orchestration/
harness.py`: a real instance, the sensor daemon's and the run queue's iterations, runs executed
in this process, the real downloader over TLS and the real locked room), the clock frozen and
moved by the test, the store on the embedded SQLite default, and the alert mail handed to a real
SMTP server on loopback.

One plug-in, daily at 06:00 in Berlin (05:00 UTC in January), whose fetcher prints as many
events as its source says, in a series with a 30-day snapshot window: it succeeds with 12, then
prints nothing three days running (the volume check warns; the third run would withdraw 12
records and is Held), then its source breaks (Failing, then stale after the second scheduled
time and its retry, and still Failing past a day)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from email.message import Message
from pathlib import Path

import dagster as dg
import pytest
from sqlalchemy import Engine
from sqlalchemy.orm import Session, sessionmaker

from almanac.assets.tags import asset_key
from almanac.orchestration.folders import register_folder
from almanac.platform.alerts.send import choose_recipients, sent_alerts
from almanac.platform.store.engine import writing
from almanac.sandbox.smtp import MailSettings, SmtpMailer
from tests.alerts.conftest import Inbox
from tests.orchestration.harness import (
    Minute,
    Orchestrator,
    SourceServer,
    approve,
    source_host,
    source_path,
    state_of,
    store_runs,
    write_plugin,
)

PLUGIN = "counts"
OPS = "ops@example.org"
COUNTING_FETCHER = """\
// Prints as many happened events as its source says, one a day back from today.
import { readFileSync } from 'node:fs';
const context = JSON.parse(readFileSync(0, 'utf8'));
const n = Number(readFileSync(context.sources.data, 'utf8').trim());
if (!Number.isInteger(n)) {
  process.stderr.write('the source holds no count\\n');
  process.exit(2);
}
const today = Date.parse(`${context.today}T00:00:00Z`);
for (let i = 0; i < n; i++) {
  const date = new Date(today - i * 86400000).toISOString().slice(0, 10);
  process.stdout.write(JSON.stringify({
    kind: 'event', series: 'ticks', date, id: `tick-${date}`, state: 'happened', title: 'Tick',
  }) + '\\n');
}
"""


def utc(*parts: int) -> datetime:
    return datetime(*parts, tzinfo=UTC)


def six_in_berlin(day: int) -> datetime:
    return utc(2026, 1, day, 5, 0)


T0 = utc(2026, 1, 5, 9, 0)


@dataclass
class Checks:
    orch: Orchestrator
    server: SourceServer
    inbox: Inbox
    seen: int = 0

    def minute(self, at: datetime) -> Minute:
        """One minute at `at`, then the next (the sensor starts the checks after the run the
        store kept), every run ended."""
        done = self.orch.minute(at)
        after = self.orch.minute(at + timedelta(minutes=1))
        assert not self.orch.queued()
        for run in done.plugin_checks + after.plugin_checks:
            assert run.status == dg.DagsterRunStatus.SUCCESS
        return Minute(
            done.created + after.created,
            done.launched + after.launched,
            plugin_checks=done.plugin_checks + after.plugin_checks,
        )

    def result(self, name: str) -> tuple[str, str]:
        """The latest evaluation of a check of the plug-in: status and description."""
        key = dg.AssetCheckKey(asset_key(PLUGIN), name)
        record = self.orch.instance.get_latest_asset_check_evaluation_record(key)
        assert record is not None and record.event is not None
        assert record.event.dagster_event is not None
        evaluation = record.event.dagster_event.event_specific_data
        assert isinstance(evaluation, dg.AssetCheckEvaluation)
        return record.status.value, evaluation.description or ""

    def statuses(self) -> dict[str, str]:
        return {name: self.result(name)[0] for name in ("freshness", "volume", "held")}

    def new_mail(self) -> list[tuple[list[str], Message]]:
        got = self.inbox.messages[self.seen :]
        self.seen = len(self.inbox.messages)
        return got


@pytest.fixture
def checks(tmp_path: Path, sqlite_engine: Engine, smtp: tuple[Inbox, int]) -> Iterator[Checks]:
    inbox, port = smtp
    mailer = SmtpMailer(MailSettings(smtp_host="127.0.0.1", smtp_port=port))
    folder = write_plugin(
        tmp_path / "plugins",
        PLUGIN,
        schedule="0 6 * * *",
        timezone="Europe/Berlin",
        fetcher=COUNTING_FETCHER,
    )
    manifest = json.loads((folder / "plugin.json").read_text())
    manifest["series"][0]["snapshot"] = {"back": "30d", "ahead": "0d"}
    (folder / "plugin.json").write_text(json.dumps(manifest, indent=2) + "\n")
    sessions = sessionmaker(writing(sqlite_engine), expire_on_commit=False)
    with sessions() as db:
        choose_recipients(db, [OPS], by="host@example.org", now=T0)
        db.commit()
    with (
        SourceServer([source_host(PLUGIN)]) as server,
        Orchestrator.open(
            tmp_path,
            sqlite_engine,
            downloader=server.downloader,
            start=T0,
            plugin_checks=True,
            mailer=lambda: mailer,
        ) as orch,
    ):
        register_folder(sqlite_engine, folder, now=T0)
        approve(sqlite_engine, PLUGIN, T0)
        yield Checks(orch, server, inbox)


def test_each_check_passes_and_fails_and_the_alerts_are_mailed_once_a_day(
    checks: Checks, sqlite_engine: Engine
) -> None:
    c = checks
    # The checks are on the plug-in's asset, in a job of their own (shown in the Dagster UI).
    graph = c.orch.build().resolve_asset_graph()
    assert {k.name for k in graph.asset_check_keys if k.asset_key == asset_key(PLUGIN)} == {
        "freshness",
        "volume",
        "held",
    }

    # The first run prints 12 records: every check passes, no mail.
    c.server.serve(source_path(PLUGIN), b"12\n")
    done = c.minute(T0)
    assert [r.status for r in done.launched] == [dg.DagsterRunStatus.SUCCESS]
    # The checks' runs select the checks alone: no plug-in is materialized by them.
    assert done.plugin_checks
    for run in done.plugin_checks:
        assert run.asset_selection == frozenset() and len(run.asset_check_selection or ()) == 3
    assert c.statuses() == {"freshness": "SUCCEEDED", "volume": "SUCCEEDED", "held": "SUCCEEDED"}
    assert c.result("volume")[1] == "printed 12 records"
    assert c.new_mail() == []

    # An empty batch is a success, but the volume check warns.
    c.server.serve(source_path(PLUGIN), b"0\n")
    c.minute(six_in_berlin(6))
    assert [r["outcome"] for r in store_runs(sqlite_engine, PLUGIN)] == ["success"] * 2
    assert c.statuses() == {"freshness": "SUCCEEDED", "volume": "FAILED", "held": "SUCCEEDED"}
    assert c.result("volume")[1] == (
        "the newest successful run printed no records; the successes before it printed up to "
        "12: is a source broken?"
    )
    c.orch.minute(six_in_berlin(7))
    assert c.new_mail() == []

    # The third empty run would withdraw 12 records: Held. The operators are mailed.
    c.minute(six_in_berlin(8))
    assert c.statuses() == {"freshness": "SUCCEEDED", "volume": "FAILED", "held": "FAILED"}
    assert c.result("held")[1].startswith("held: ticks: 12 records (first missing 2025-12-25")
    [(to, held_mail)] = c.new_mail()
    assert to == [OPS] and held_mail["Subject"] == "Almanac: plug-in counts is Held"
    body = held_mail.get_payload(decode=True).decode()
    assert "Series ticks: 12 records" in body and "https://almanac.test/host/plugins/counts" in body
    # The checks run every 15 minutes; the same day sends nothing again.
    quarter = c.orch.minute(six_in_berlin(8) + timedelta(minutes=20))
    assert len(quarter.plugin_checks) == 1 and quarter.launched == []
    assert c.new_mail() == []

    # The source breaks: Failing (operators mailed, with the reason and the failed source), and
    # Held again on a new day. Still fresh: one scheduled time missed.
    c.server.fail(source_path(PLUGIN), 404)
    c.minute(six_in_berlin(9))
    assert state_of(sqlite_engine, PLUGIN) == "failing"
    assert c.statuses()["freshness"] == "SUCCEEDED"
    mails = {m["Subject"]: m for _, m in c.new_mail()}
    assert sorted(mails) == [
        "Almanac: plug-in counts is Failing",
        "Almanac: plug-in counts is Held",
    ]
    failing = mails["Almanac: plug-in counts is Failing"].get_payload(decode=True).decode()
    assert "could not download data: the server answered HTTP 404, not 200" in failing
    assert f"Source that failed: data (https://{source_host(PLUGIN)}{source_path(PLUGIN)})" in (
        failing
    )
    # A day later the retry (left open since 06:30 yesterday) fails too: still Failing, and
    # Held on a new day. Still fresh until today's scheduled time has had its 30 minutes.
    c.minute(six_in_berlin(10))
    assert [r["trigger"] for r in store_runs(sqlite_engine, PLUGIN)[-2:]] == ["schedule", "retry"]
    assert c.statuses()["freshness"] == "SUCCEEDED"
    subjects = sorted(m["Subject"] for _, m in c.new_mail())
    assert subjects == [
        "Almanac: plug-in counts is Held",
        "Almanac: plug-in counts is still Failing",
    ]
    # Half an hour on, the checks (every 15 minutes, no run) find it stale; nothing more is
    # mailed today.
    quarter = c.orch.minute(six_in_berlin(10) + timedelta(minutes=30))
    assert quarter.launched == [] and len(quarter.plugin_checks) == 1
    status, description = c.result("freshness")
    assert status == "FAILED"
    assert description == (
        "stale: no success since 2026-01-08 06:00 CET; the scheduled times 2026-01-09 06:00 CET "
        "and 2026-01-10 06:00 CET passed, each with its 30-minute retry"
    )
    assert c.new_mail() == []

    # Every alert is kept, one a day per cause.
    with Session(sqlite_engine) as db:
        kept = [(a.cause, a.day.isoformat(), a.recipients) for a in sent_alerts(db)]
    assert sorted(kept, key=lambda k: (k[1], k[0])) == [
        ("held", "2026-01-08", [OPS]),
        ("failing", "2026-01-09", [OPS]),
        ("held", "2026-01-09", [OPS]),
        ("held", "2026-01-10", [OPS]),
        ("still-failing", "2026-01-10", [OPS]),
    ]


def test_the_checks_run_while_plugin_runs_are_held(checks: Checks) -> None:
    """The checks never take the plug-ins' pool: with its limit at 0 (a deployment) the
    plug-in's run waits in the queue while the checks run."""
    c = checks
    c.server.serve(source_path(PLUGIN), b"3\n")
    c.orch.set_slots(0)
    done = c.orch.minute(T0)
    assert done.launched == [] and len(c.orch.queued()) == 1
    assert [r.status for r in done.plugin_checks] == [dg.DagsterRunStatus.SUCCESS]
    assert c.result("freshness") == ("SUCCEEDED", "not run yet: the first run starts at once")
    assert c.result("volume") == ("SUCCEEDED", "no successful run yet")
