"""Rollouts on real parts: the live app on PostgreSQL, decision and hold mail through a real SMTP
server on loopback, the plug-in's runs through the run pipeline with the real locked room and
the real source downloader (the example's file served over TLS from a stand-in public address,
as test_publish_end_to_end.py serves it), and a reader's days through the reader API.

One published plug-in carries the whole story, so the setup is paid once: version 1.1.0 drops
a series and retitles Christmas Day, shadows two runs (diffs exact, promoted after the second,
readers' days changing only with the run after), is rolled back by the publisher (its records
stay as revisions); 1.2.0 fails on the live file (held after one shadow run, one mail, the
current version untouched) and is stopped; 1.3.0 is promoted early; 1.4.0 is stopped while
shadowing; an agent without publishing is refused each move by AGENT_MAY_NOT_PUBLISH."""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import date
from typing import Any

import httpx
import pytest
from sqlalchemy import func, select

from almanac.orchestration.pipeline import RunPipeline, RunRequestFacts
from almanac.platform.lifecycle import RunTrigger
from almanac.platform.store.plugins import plugin_status
from almanac.platform.store.tables import records, revisions
from almanac.sandbox.room import LockedRoom
from almanac.sandbox.smtp import MailSettings, SmtpMailer
from tests.agents.helpers import agent_token, bearer
from tests.api.conftest import Api, assert_problem
from tests.api.test_host import UK
from tests.api.test_mail import Inbox, smtp  # noqa: F401  (fixture)
from tests.orchestration.harness import SourceServer, store_runs
from tests.publishing.test_review_and_store import (  # noqa: F401  (fixtures)
    api,
    approved,
    listing_url,
    mails_to,
    pub,
    publish,
    reviewer,
)
from tests.publishing.test_submission import files_with, may_submit
from tests.publishing.test_upload_checks import EXAMPLE, HOSTS, serve_uk
from tests.publishing.test_uploads import (  # noqa: F401  (fixtures)
    Publisher,
    new_org,
    publisher,
    sqlite_api,
)

V1 = "/api/v1"
LIVE = json.loads((EXAMPLE / "fixtures" / "sources" / "bank-holidays-json").read_bytes())
CHRISTMAS = {
    division: sorted(
        e["date"]
        for e in LIVE[division]["events"]
        if e["title"] == "Christmas Day" and not e["notes"]
    )
    for division in ("england-and-wales", "scotland")
}
"""The plain Christmas Days of each division the update keeps, in the file served."""
OWNER = "owner@bank.example"
BEFORE = dict.fromkeys(("england-and-wales", "scotland", "northern-ireland"), "Christmas Day")
AFTER = {
    **BEFORE,
    "england-and-wales": "Christmas Day holiday",
    "scotland": "Christmas Day holiday",
}
"""Readers' Christmas Day 2023 before and after 1.1.0 writes (Northern Ireland's records kept)."""


def update(
    version: str, fetch: str | None = None, *, drop_ireland: bool = False
) -> dict[str, bytes]:
    """The example at `version`: `fetch` replaces the fetcher; `drop_ireland` removes the
    northern-ireland series from the manifest, the fixtures and the review examples."""
    files = files_with(version=version, releaseNotes={"en": f"Version {version}."})
    files["fetch.mjs"] = (fetch or files["fetch.mjs"].decode()).encode()
    if drop_ireland:
        manifest = json.loads(files["plugin.json"])
        manifest["series"] = [s for s in manifest["series"] if s["key"] != "northern-ireland"]
        files["plugin.json"] = json.dumps(manifest, indent=2).encode()
        kept = [
            line
            for line in files["fixtures/records.jsonl"].decode().splitlines()
            if json.loads(line)["series"] != "northern-ireland"
        ]
        files["fixtures/records.jsonl"] = ("\n".join(kept) + "\n").encode()
        review = json.loads(files["review.json"])
        review["examples"] = [
            e
            if e["series"] != "northern-ireland"
            else {
                "date": "2022-12-26",
                "series": "england-and-wales",
                "expect": {"state": "scheduled", "title": "Boxing Day"},
            }
            for e in review["examples"]
        ]
        files["review.json"] = json.dumps(review).encode()
    return files


def retitled(fetch: str) -> str:
    """1.1.0's fetcher: Northern Ireland left out, Christmas Day retitled."""
    return fetch.replace(
        "for (const division of DIVISIONS) {",
        "for (const division of DIVISIONS.filter((d) => d !== 'northern-ireland')) {",
    ).replace(
        "title: title.slice(0, 200),",
        "title: (title === 'Christmas Day' ? 'Christmas Day holiday' : title).slice(0, 200),",
    )


def failing(fetch: str) -> str:
    """1.2.0's fetcher: expects a field the live file does not have."""
    return fetch.replace(
        "const divisions = parseBankHolidays(readFileSync(path, 'utf8'), SOURCE);",
        "const text = readFileSync(path, 'utf8');\n"
        "  if (!JSON.parse(text)['england-and-wales'].updated) "
        "throw new SourceError(`${SOURCE}: no 'updated' field`);\n"
        "  const divisions = parseBankHolidays(text, SOURCE);",
    )


@pytest.fixture
def served() -> Iterator[SourceServer]:
    with SourceServer(HOSTS) as server:
        serve_uk(server)
        yield server


class Story:
    """The plug-in's runs and the publisher's, reader's and agents' views of it."""

    def __init__(self, published: Publisher, server: SourceServer, port: int) -> None:
        self.pub = published
        self.api = published.api
        self.pipeline = RunPipeline(
            published.api.engine,
            downloader=server.downloader(published.api.clock),
            room=LockedRoom(),
            clock=published.api.clock,
            mailer=SmtpMailer(MailSettings(smtp_host="127.0.0.1", smtp_port=port)),
            base_url=published.api.base_url,
        )
        self.base = listing_url(published)

    def run(
        self, trigger: RunTrigger = RunTrigger.SCHEDULE, today: date | None = None
    ) -> dict[str, Any]:
        day = today or self.api.clock().date()
        self.pipeline.run(RunRequestFacts(UK, day, trigger))
        return store_runs(self.api.engine, UK)[-1]

    def publish(self, files: dict[str, bytes], rev: httpx.Client, shadow: int) -> int:
        upload_id = approved(self.pub, rev, files)
        done = self.pub.owner.post(
            f"{self.pub.uploads}/{upload_id}/publish", json={"shadow": shadow}
        )
        assert done.status_code == 200, done.text
        return upload_id

    def rollout(self) -> dict[str, Any]:
        shown = self.pub.owner.get(f"{self.base}/rollouts")
        assert shown.status_code == 200, shown.text
        return shown.json()[0]

    def move(self, move: str, reason: str, client: httpx.Client | None = None) -> httpx.Response:
        return (client or self.pub.owner).post(
            f"{self.base}/rollout/{move}", json={"reason": reason}
        )

    def approved_version(self) -> str | None:
        with self.api.engine.connect() as conn:
            return plugin_status(conn, UK).approved_version

    def counts(self) -> tuple[int, int]:
        with self.api.engine.connect() as conn:
            kept = conn.execute(
                select(func.count()).select_from(records).where(records.c.plugin_id == UK)
            ).scalar_one()
            earlier = conn.execute(select(func.count()).select_from(revisions)).scalar_one()
        return kept, earlier


def christmas_titles(reader: httpx.Client) -> dict[str, str]:
    """What the reader's calendar shows on Christmas Day 2023, by series."""
    days = reader.get(
        f"{V1}/reader/days",
        params={"from": "2023-12-20", "to": "2024-01-02", "today": "2026-11-02"},
    )
    assert days.status_code == 200, days.text
    [entry] = days.json()["plugins"]
    christmas = next(d for d in entry["days"] if d["date"] == "2023-12-25")
    rows = [row for section in christmas["sections"] for row in section["rows"]]
    return {row["series"]: row["label"] for row in rows}


def revised(diff: dict[str, Any], series: str) -> list[tuple[str, str, str]]:
    return [
        (r["date"], r["old"]["title"], r["new"]["title"])
        for r in diff["series"][series]["revised_records"]
    ]


def published_story(
    pub: Publisher,  # noqa: F811
    served: SourceServer,
    smtp: tuple[Inbox, int],  # noqa: F811
) -> tuple[Story, Inbox, httpx.Client]:
    """Version 1.0.0 published (not run yet), its story, the inbox and a reviewer."""
    inbox, port = smtp
    rev = reviewer(pub.api, "rev@service.example")
    assert publish(pub, approved(pub, rev, files_with())).status_code == 200
    return Story(pub, served, port), inbox, rev


@pytest.mark.timeout(600)
def test_a_rollout_shadows_holds_promotes_stops_and_rolls_back(
    pub: Publisher,  # noqa: F811
    served: SourceServer,
    smtp: tuple[Inbox, int],  # noqa: F811
) -> None:
    story, inbox, rev = published_story(pub, served, smtp)
    app = pub.api
    first = story.run()
    assert first["outcome"] == "success" and first["new"] == 58 + 65 + 72, first
    reader = app.signed_in("reader@example.net")
    assert reader.post(f"{V1}/store/plugins/{UK}/install").status_code == 200
    assert christmas_titles(reader) == BEFORE
    fetch = files_with()["fetch.mjs"].decode()
    agent = bearer(app, agent_token(app, pub.owner, pub.org, may_publish=False))

    # 1.1.0 with a shadow period of 2: the current version writes, the new one only compares.
    upload_11 = story.publish(update("1.1.0", retitled(fetch), drop_ireland=True), rev, 2)
    shown = story.rollout()
    assert (shown["state"], shown["runs_done"], shown["shadow_runs"]) == ("shadowing", 0, 2)
    kept_before = story.counts()
    one = story.run()
    assert one["outcome"] == "success" and one["version_id"] == first["version_id"]
    assert (one["new"], one["revised"]) == (0, 0), one
    assert story.counts() == kept_before, "nothing the shadow version printed is stored"
    shown = story.rollout()
    assert (shown["state"], shown["runs_done"]) == ("shadowing", 1)
    [shadow] = shown["shadows"]
    assert shadow["passed"] and shadow["run_id"] == one["id"] and shadow["seconds"] > 0
    assert shadow["summary"] == {
        "england-and-wales": {"new": 0, "revised": 5, "moved": 0, "missing": 0},
        "scotland": {"new": 0, "revised": 5, "moved": 0, "missing": 0},
    }
    assert shadow["removed_series"] == {"northern-ireland": 72}
    full = pub.owner.get(shown["diff_links"][0].removeprefix(app.base_url))
    assert full.status_code == 200, full.text
    for division, dates in CHRISTMAS.items():
        assert revised(full.json(), division) == [
            (d, "Christmas Day", "Christmas Day holiday") for d in dates
        ]
    assert christmas_titles(reader) == BEFORE
    # The review desk shows the shadow diffs of the version it reviewed.
    on_desk = rev.get(f"{V1}/review/uploads/{upload_11}").json()
    assert [s["id"] for s in on_desk["shadow_runs"]] == [shadow["id"]]

    # An agent approved without publishing may not move the rollout.
    for move in ("promote", "stop", "roll-back"):
        assert_problem(story.move(move, "agent", agent), 403, "AGENT_MAY_NOT_PUBLISH")

    two = story.run()
    assert two["version_id"] == first["version_id"], "the second shadow run's pair wrote 1.0.0"
    shown = story.rollout()
    assert (shown["state"], shown["runs_done"]) == ("promoted", 2)
    assert story.approved_version() == "1.1.0"
    assert christmas_titles(reader) == BEFORE, "readers move at the next run"
    three = story.run()
    assert three["version_id"] != first["version_id"] and three["revised"] == 10, three
    assert christmas_titles(reader) == AFTER
    history = [m["action"] for m in pub.owner.get(f"{story.base}/history").json()]
    assert history[-3:] == ["rollout-shadowing", "publish", "rollout-promoted"]

    # The publisher rolls back: 1.0.0 is current at once; 1.1.0's records stay as revisions.
    _, revisions_before = story.counts()
    back = story.move("roll-back", "the new titles confuse readers")
    assert back.status_code == 200, back.text
    assert back.json()["state"] == "rolled_back"
    assert story.approved_version() == "1.0.0"
    four = story.run()
    assert four["version_id"] == first["version_id"] and four["revised"] == 10, four
    assert story.counts()[1] == revisions_before + 10
    assert christmas_titles(reader) == BEFORE
    at_host = app.signed_in("op@service.example", operator=True).get(f"{V1}/host/plugins/{UK}")
    assert at_host.status_code == 200, at_host.text
    rolled = [m for m in at_host.json()["moves"] if m["action"] == "roll-back"]
    assert [m["detail"]["reason"] for m in rolled] == ["the new titles confuse readers"], rolled
    assert_problem(story.move("roll-back", "again"), 409, "STATE-CONFLICT")

    # 1.2.0 fails on the live file: held after its first shadow run, one mail, 1.0.0 untouched.
    story.publish(update("1.2.0", failing(fetch)), rev, 3)
    before = story.counts()
    mails_before = len(mails_to(inbox, OWNER))
    five = story.run()
    assert five["outcome"] == "success" and five["version_id"] == first["version_id"]
    assert story.counts() == before and story.approved_version() == "1.0.0"
    shown = story.rollout()
    assert (shown["state"], shown["runs_done"]) == ("held", 1)
    assert "no 'updated' field" in shown["reason"] and str(five["id"]) in shown["reason"]
    inbox.wait(mails_before + 1)
    assert mails_to(inbox, OWNER)[mails_before:] == ["Rollout held: uk-bank-holidays 1.2.0"]
    link = f"{app.base_url}/portal/{pub.org}/plugins/{UK}#rollout-{shown['id']}"
    assert link in inbox.messages[-1][1].get_payload(decode=True).decode()
    page = pub.owner.get(link.removeprefix(app.base_url))
    assert page.status_code == 200 and f'id="rollout-{shown["id"]}"' in page.text
    notices = pub.owner.get(f"{V1}/portal/organizations/{pub.org}/notices").json()
    assert notices[0]["kind"] == "rollout-held" and str(five["id"]) in notices[0]["body"]
    with app.engine.connect() as conn:
        assert plugin_status(conn, UK).state == "approved"
    six = story.run()
    assert story.rollout()["runs_done"] == 1, "a held rollout runs no more shadows"
    assert six["version_id"] == first["version_id"]
    assert_problem(story.move("promote", "no"), 409, "STATE-CONFLICT")
    stopped = story.move("stop", "fixing the fetcher")
    assert stopped.status_code == 200 and stopped.json()["state"] == "stopped"

    # 1.3.0 promoted early, after no shadow run at all.
    story.publish(update("1.3.0"), rev, 5)
    early = story.move("promote", "the diff of 1.1.0 was checked already")
    assert early.status_code == 200, early.text
    assert early.json()["state"] == "promoted" and story.approved_version() == "1.3.0"

    # 1.4.0 stopped while shadowing: 1.3.0 stays current.
    story.publish(update("1.4.0"), rev, 2)
    story.run()
    stopped = story.move("stop", "not now")
    assert stopped.status_code == 200 and stopped.json()["state"] == "stopped"
    assert stopped.json()["runs_done"] == 1
    story.run()
    assert story.rollout()["runs_done"] == 1 and story.approved_version() == "1.3.0"


def test_a_shadow_period_needs_a_live_plugin_and_one_to_five_runs(pub: Publisher) -> None:  # noqa: F811
    rev = reviewer(pub.api, "rev@service.example")
    upload_id = approved(pub, rev, files_with())
    url = f"{pub.uploads}/{upload_id}/publish"
    assert_problem(pub.owner.post(url, json={"shadow": 6}), 422, "REQUEST-INVALID")
    refused = assert_problem(pub.owner.post(url, json={"shadow": 2}), 409, "STATE-CONFLICT")
    assert "not live" in refused["detail"]
    assert pub.owner.post(url, json={"shadow": 0}).status_code == 200


@pytest.mark.timeout(300)
def test_a_rollout_on_the_embedded_sqlite_default(
    sqlite_api: Api,  # noqa: F811
    served: SourceServer,
    smtp: tuple[Inbox, int],  # noqa: F811
) -> None:
    """The same moves on SQLite: a shadow run, its promotion, the publisher's roll back, a
    failing update held, then stopped."""
    inbox, port = smtp
    owner, org = new_org(sqlite_api, OWNER, "Bank")
    on_sqlite = Publisher(sqlite_api, owner, org)
    may_submit(on_sqlite)
    story = Story(on_sqlite, served, port)
    rev = reviewer(sqlite_api, "rev@service.example")
    assert publish(on_sqlite, approved(on_sqlite, rev, files_with())).status_code == 200
    first = story.run()
    fetch = files_with()["fetch.mjs"].decode()
    story.publish(update("1.1.0", retitled(fetch), drop_ireland=True), rev, 1)
    story.run()
    shown = story.rollout()
    assert (shown["state"], shown["runs_done"]) == ("promoted", 1)
    assert shown["shadows"][0]["summary"]["scotland"]["revised"] == 5
    assert story.approved_version() == "1.1.0"
    assert story.move("roll-back", "back to 1.0.0").json()["state"] == "rolled_back"
    assert story.approved_version() == "1.0.0"
    story.publish(update("1.2.0", failing(fetch)), rev, 1)
    held = story.run()
    assert held["version_id"] == first["version_id"]
    assert story.rollout()["state"] == "held"
    inbox.wait(1)
    assert "Rollout held: uk-bank-holidays 1.2.0" in mails_to(inbox, OWNER)
    assert story.move("stop", "fixing it").json()["state"] == "stopped"


def without_england(fetch: str) -> str:
    """A fetcher that leaves out every England and Wales record its manifest still declares."""
    return fetch.replace(
        "for (const division of DIVISIONS) {",
        "for (const division of DIVISIONS.filter((d) => d !== 'england-and-wales')) {",
    )


def slow(files: dict[str, bytes]) -> dict[str, bytes]:
    """The update with a time limit of 1 second and a fetcher that sleeps 3 first."""
    manifest = json.loads(files["plugin.json"])
    manifest["limits"] = {"seconds": 1}
    files["plugin.json"] = json.dumps(manifest, indent=2).encode()
    files["fetch.mjs"] = (
        b"await new Promise((done) => setTimeout(done, 3000));\n" + files["fetch.mjs"]
    )
    return files


FIXTURE_DAY = date(2022, 11, 4)
"""The day of the file served: its snapshot windows hold stored records a version can leave out."""


@pytest.mark.timeout(600)
def test_holds_by_limits_and_every_stop_and_only_scheduled_runs_shadow(
    pub: Publisher,  # noqa: F811
    served: SourceServer,
    smtp: tuple[Inbox, int],  # noqa: F811
) -> None:
    story, inbox, rev = published_story(pub, served, smtp)
    app = pub.api
    operator = app.signed_in("op@service.example", operator=True)
    first = story.run(RunTrigger.FIRST, FIXTURE_DAY)
    assert first["outcome"] == "success", first
    fetch = files_with()["fetch.mjs"].decode()

    # 1.1.0 leaves out a series' records: a resume or a backfill runs no shadow; the retry of a
    # scheduled run does, and the projected withdrawals beyond the Held limits hold it.
    story.publish(update("1.1.0", without_england(fetch)), rev, 2)
    story.run(RunTrigger.RESUME, FIXTURE_DAY)
    story.run(RunTrigger.BACKFILL, date(2022, 11, 3))
    assert story.rollout()["runs_done"] == 0, "only scheduled runs (and their retries) shadow"
    before = story.counts()
    retried = story.run(RunTrigger.RETRY, FIXTURE_DAY)
    assert retried["version_id"] == first["version_id"] and story.counts() == before
    held = story.rollout()
    assert (held["state"], held["runs_done"]) == ("held", 1)
    missing = held["shadows"][0]["summary"]["england-and-wales"]["missing"]
    assert missing > 10 and held["shadows"][0]["summary"]["scotland"]["missing"] == 0
    assert f"series england-and-wales: the new version leaves out {missing}" in held["reason"]

    def holds() -> list[str]:
        return [s for s in mails_to(inbox, OWNER) if s.startswith("Rollout held")]

    assert holds() == ["Rollout held: uk-bank-holidays 1.1.0"]

    # 1.2.0, published with a shadow period meanwhile, replaces the held rollout (recorded),
    # and is held by its own time limit.
    story.publish(slow(update("1.2.0")), rev, 1)
    replaced = pub.owner.get(f"{story.base}/rollouts").json()[1]
    assert (replaced["version"], replaced["state"]) == ("1.1.0", "stopped")
    assert replaced["reason"].startswith("version 1.2.0 (upload ")
    story.run(today=FIXTURE_DAY)
    timed_out = story.rollout()
    assert timed_out["state"] == "held" and "ran past 1 second" in timed_out["reason"], timed_out
    assert story.approved_version() == "1.0.0"
    assert holds()[1:] == ["Rollout held: uk-bank-holidays 1.2.0"]

    # The host's shelf stops 1.3.0's rollout; a version published at once replaces 1.4.0's.
    story.publish(update("1.3.0"), rev, 2)
    assert operator.post(f"{V1}/host/plugins/{UK}/take-off-shelf").status_code == 200
    shelved = story.rollout()
    assert (shelved["state"], shelved["reason"]) == (
        "stopped",
        "the service took the plug-in off the shelf",
    )
    assert operator.post(f"{V1}/host/plugins/{UK}/put-on-shelf").status_code == 200
    story.publish(update("1.4.0"), rev, 2)
    upload_15 = approved(pub, rev, update("1.5.0"))
    assert publish(pub, upload_15).status_code == 200
    now_replaced = story.rollout()
    assert (now_replaced["version"], now_replaced["state"]) == ("1.4.0", "stopped")
    assert (
        now_replaced["reason"] == f"version 1.5.0 (upload {upload_15}) was published in its place"
    )
    assert story.approved_version() == "1.5.0"

    # The host's takedown stops 1.6.0's; the owner's retire stops 1.7.0's.
    story.publish(update("1.6.0"), rev, 2)
    takedown = {"reason": "checking", "message": "This plug-in is taken down for a check."}
    assert operator.post(f"{V1}/host/plugins/{UK}/takedown", json=takedown).status_code == 200
    assert story.rollout()["reason"] == "the service took the plug-in down"
    with app.engine.connect() as conn:
        digest = plugin_status(conn, UK).approved_digest
    restored = operator.post(f"{V1}/host/plugins/{UK}/takedown/restore", json={"digest": digest})
    assert restored.status_code == 200, restored.text
    story.publish(update("1.7.0"), rev, 2)
    assert pub.owner.post(f"{story.base}/retire", json={"confirm": UK}).status_code == 200
    retired = story.rollout()
    assert (retired["version"], retired["state"]) == ("1.7.0", "stopped")
    assert retired["reason"] == "the plug-in was retired"
    states = [r["state"] for r in pub.owner.get(f"{story.base}/rollouts").json()]
    assert states == ["stopped"] * 6, "each held one too, once 1.3.0 replaced 1.2.0's"
    history = [m["action"] for m in pub.owner.get(f"{story.base}/history").json()]
    assert history.count("rollout-stopped") == 6 and history.count("rollout-held") == 2
