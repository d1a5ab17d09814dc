"""The locked-room checks of uploads as runs of the checks job on a real Dagster instance, each
in the real locked room, over real PostgreSQL, the real sources and listing links served by a
local HTTPS server with a test CA: the fixtures twice, each run case, the example days, the real
sources, the listing links, passing and failing; a check past its deadline failing with its
reason; the job in its own pool; the record diff of an update, its counts exact."""

from __future__ import annotations

import io
import json
from collections.abc import Iterator
from datetime import UTC, date, datetime, timedelta
from pathlib import Path

import dagster as dg
import pytest
from sqlalchemy import Engine, select, text
from sqlalchemy.orm import Session

from almanac.api.schemas.host import VersionOut
from almanac.definitions import build_definitions
from almanac.platform import hosting
from almanac.platform.contract.pack import check_folder, check_pack
from almanac.platform.lifecycle import RunTrigger
from almanac.platform.mail import OutboxMailer
from almanac.platform.mail.models import OutboxMessage
from almanac.platform.publishing.models import CheckStatus, UploadState
from almanac.platform.publishing.uploads import check_queue, uploads
from almanac.platform.publishing.uploads.room_checks import Sources, listing_links
from almanac.platform.store import moves
from almanac.platform.store.engine import write_transaction
from almanac.platform.store.plugins import plugin_status
from almanac.platform.store.write import RunFacts, write_run
from almanac.sandbox.tool_imports import import_problems
from almanac.sensors.upload_checks import (
    CHECKS_JOB,
    CHECKS_POOL,
    CHECKS_SENSOR,
    DownloaderSources,
)
from almanac.settings import Settings
from tests.api.test_host import UK, folder_files, zip_of
from tests.orchestration.conftest import fresh_postgres_engine
from tests.orchestration.harness import FrozenClock, SourceServer
from tests.publishing.dagster_ticks import Ticker
from tests.publishing.helpers import Org, organization

T0 = datetime(2026, 11, 2, 12, 0, tzinfo=UTC)
EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / UK
LISTING = json.loads((EXAMPLE / "listing.json").read_text(encoding="utf-8"))
HOSTS = sorted({"www.gov.uk", *(url.split("/")[2] for _, url in listing_links(LISTING))})


def serve_uk(server: SourceServer) -> None:
    """The example's real source (its fixture file) and a page for each listing link."""
    server.serve_example(EXAMPLE)
    for _, url in listing_links(LISTING):
        if "/bank-holidays.json" not in url:
            server.serve("/" + url.split("/", 3)[3], b"<html>a page</html>")


def sources_of(server: SourceServer, clock: FrozenClock) -> Sources:
    return DownloaderSources(server.downloader(clock), server.downloader(clock))


def definitions(tmp_path: Path, engine: Engine, clock: FrozenClock, server: SourceServer):
    def build() -> dg.Definitions:
        return build_definitions(
            settings=Settings(tmp_path, 0, 0, str(engine.url), "https://almanac.test"),
            engine=engine,
            catalog=[],
            clock=clock,
            check_sources=lambda: sources_of(server, clock),
            mailer=lambda: OutboxMailer(engine, console=io.StringIO()),
        )

    return build


# Prints the fetcher's lines in a random order: the same files give other bytes each run.
SHUFFLED = b"""import { writeSync } from "node:fs";
const __lines = [];
process.stdout.write = (chunk) => { __lines.push(String(chunk)); return true; };
process.on("exit", () => {
  const all = __lines.join("").split("\\n").filter(Boolean);
  for (let i = all.length - 1; i > 0; i--) {
    const j = Math.floor(Math.random() * (i + 1));
    [all[i], all[j]] = [all[j], all[i]];
  }
  writeSync(1, all.map((l) => l + "\\n").join(""));
});
"""


@pytest.fixture
def engine() -> Iterator[Engine]:
    with fresh_postgres_engine("uploadchecks") as made:
        yield made


def _upload(engine: Engine, org: Org, files: dict[str, bytes], at: datetime) -> int:
    with Session(engine, expire_on_commit=False) as db:
        answer = uploads.upload(
            db, org.id, org.owner, uploads.examine(zip_of(files), import_problems), at
        )
        db.commit()
    assert answer.upload.state is UploadState.CHECKING
    return answer.upload.id


def _checks(engine: Engine, org: Org, upload_id: int) -> dict[str, uploads.CheckView]:
    with Session(engine) as db:
        found = uploads.show_upload(db, org.id, org.owner, upload_id)
    return {c.name: c for c in found.checks}


def _state(engine: Engine, org: Org, upload_id: int) -> UploadState:
    with Session(engine) as db:
        return uploads.show_upload(db, org.id, org.owner, upload_id).state


def _mail(engine: Engine) -> list[tuple[str, str, str]]:
    with Session(engine) as db:
        rows = db.scalars(select(OutboxMessage).order_by(OutboxMessage.id)).all()
        return [(r.to_address, r.subject, r.body) for r in rows]


def _codes(check: uploads.CheckView) -> list[str]:
    return [p.code for p in check.findings]


@pytest.fixture
def server() -> Iterator[SourceServer]:
    """The example's real source and listing pages on a local HTTPS server (test CA)."""
    with SourceServer(HOSTS) as running:
        serve_uk(running)
        yield running


def test_room_checks_run_as_dagster_runs_in_their_own_pool(
    engine: Engine, passwords, tmp_path: Path, server: SourceServer
) -> None:
    clock = FrozenClock(T0)
    with Session(engine, expire_on_commit=False) as db:
        org = organization(db, passwords, T0, "checks")

    good = _upload(engine, org, folder_files(UK), T0)
    shuffled = folder_files(UK)
    shuffled["fetch.mjs"] = SHUFFLED + shuffled["fetch.mjs"]
    shuffled["plugin.json"] = json.dumps(
        {**json.loads(shuffled["plugin.json"]), "version": "1.0.1"}
    ).encode()
    flaky = _upload(engine, org, shuffled, T0)
    wrong_case = folder_files(UK)
    wrong_case["fixtures/runs/ics-instead-of-json/expect.json"] = json.dumps(
        {"exit": 2, "reason": "words the fetcher never prints"}
    ).encode()
    wrong_case["fixtures/runs/later-file/records.jsonl"] += b""  # unchanged: the later run passes
    wrong_case["README.md"] = b"# a listing-only change\n"
    not_failing = _upload(engine, org, wrong_case, T0)

    build = definitions(tmp_path, engine, clock, server)
    with Ticker.open(tmp_path, clock, build) as dagster:
        repository = build().get_repository_def()
        assert CHECKS_JOB in repository.job_names
        assert CHECKS_SENSOR in {s.name for s in repository.sensor_defs}
        job = repository.get_job(CHECKS_JOB)
        assert {node.definition.pool for node in job.graph.node_dict.values()} == {CHECKS_POOL}

        runs = dagster.step(T0 + timedelta(minutes=1))
        assert sorted(r.job_name for r in runs) == [CHECKS_JOB] * 3
        assert all(r.status == dg.DagsterRunStatus.SUCCESS for r in runs)
        # A second tick asks for nothing more: every check is final.
        assert dagster.step(T0 + timedelta(minutes=2)) == []

        # The owners and admins are told of each upload whose checks finished with failures.
        mailed = _mail(engine)
        assert sorted((to, subject) for to, subject, _ in mailed) == sorted(
            (to, f"Checks failed: {UK} {version}")
            for to in (org.owner.email, org.admin.email)
            for version in ("1.0.1", "1.0.0")
        )
        body = next(b for _, s, b in mailed if s.endswith("1.0.1"))
        assert "PLG-RUN-NOT-DETERMINISTIC" in body
        # The version's page under the service's public address, not an API path.
        assert f"page: https://almanac.test/portal/{org.id}/uploads/{flaky}\n" in body
        assert org.member.email not in {to for to, _, _ in mailed}

        passed = _checks(engine, org, good)
        for name in ("fixtures", "cases", "examples", "sources", "links"):
            assert passed[name].status is CheckStatus.PASSED, (name, passed[name].findings)
        assert _state(engine, org, good) is UploadState.CHECKED
        # Not an update (nothing of the plug-in is stored): no record diff.
        with Session(engine) as db:
            assert uploads.show_upload(db, org.id, org.owner, good).record_diff is None

        # Round 2: a wrong example day, a dead listing link, and a real source that is not
        # what the fetcher knows (an ICS file where it reads JSON).
        wrong_example = folder_files(UK)
        review = json.loads(wrong_example["review.json"])
        review["examples"][1]["expect"]["title"] = "Boxing Day"
        wrong_example["review.json"] = json.dumps(review).encode()
        wrong = _upload(engine, org, wrong_example, clock())
        dead_link = folder_files(UK)
        listing = json.loads(dead_link["listing.json"])
        listing["links"]["privacy"] = "https://example.org/gone"
        dead_link["listing.json"] = json.dumps(listing).encode()
        dead = _upload(engine, org, dead_link, clock())
        server.fail("/gone", 404)
        ics = EXAMPLE / "fixtures" / "runs" / "ics-instead-of-json" / "sources"
        server.serve("/bank-holidays.json", (ics / "bank-holidays-json").read_bytes())
        runs = dagster.step(T0 + timedelta(minutes=3))
        assert len(runs) == 2 and all(r.status == dg.DagsterRunStatus.SUCCESS for r in runs)

        # Round 3: the real source is gone.
        gone_files = folder_files(UK)
        gone_files["README.md"] = b"# another listing-only change\n"
        gone = _upload(engine, org, gone_files, clock())
        server.fail("/bank-holidays.json", 404)
        [run] = dagster.step(T0 + timedelta(minutes=4))
        assert run.status == dg.DagsterRunStatus.SUCCESS
        real = _checks(engine, org, gone)["sources"]
        assert real.status is CheckStatus.FAILED and _codes(real) == ["PLG-SOURCE-DOWNLOAD"]
        assert "404" in real.findings[0].message

    examples = _checks(engine, org, wrong)
    assert examples["examples"].status is CheckStatus.FAILED
    assert _codes(examples["examples"]) == ["PLG-REVIEW-EXAMPLE"]
    assert "examples[1]" in examples["examples"].findings[0].message
    assert examples["links"].status is CheckStatus.PASSED
    links = _checks(engine, org, dead)
    assert links["links"].status is CheckStatus.FAILED
    assert _codes(links["links"]) == ["PLG-LISTING-LINK-DEAD"]
    assert "links.privacy" in links["links"].findings[0].message
    assert links["examples"].status is CheckStatus.PASSED
    for upload_id in (wrong, dead):
        real = _checks(engine, org, upload_id)["sources"]
        assert real.status is CheckStatus.FAILED
        assert _codes(real) == ["PLG-RUN-FAILED"]
        assert "not JSON" in real.findings[0].message

    failed = _checks(engine, org, flaky)
    assert failed["fixtures"].status is CheckStatus.FAILED
    assert "PLG-RUN-NOT-DETERMINISTIC" in _codes(failed["fixtures"])
    assert "PLG-FIXTURE-MISMATCH" in _codes(failed["fixtures"])

    case = _checks(engine, org, not_failing)
    assert case["fixtures"].status is CheckStatus.PASSED
    assert case["cases"].status is CheckStatus.FAILED
    assert _codes(case["cases"]) == ["PLG-RUN-EXPECTED-FAILURE"]
    assert "lacks" in case["cases"].findings[0].message
    assert all(c.finished_at is not None for c in case.values())


def test_a_check_past_its_deadline_fails_with_its_reason(
    engine: Engine, passwords, tmp_path: Path
) -> None:
    clock = FrozenClock(T0)
    with Session(engine, expire_on_commit=False) as db:
        org = organization(db, passwords, T0, "late")
    late = _upload(engine, org, folder_files(UK), T0)

    with (
        SourceServer(HOSTS) as server,
        Ticker.open(tmp_path, clock, definitions(tmp_path, engine, clock, server)) as dagster,
    ):
        # No run reached the checks before their deadline (say the pool was held): the
        # sensor's tick after it fails them, and asks for no run.
        assert dagster.step(T0 + timedelta(minutes=16)) == []
    checks = _checks(engine, org, late)
    for name in ("fixtures", "cases"):
        assert checks[name].status is CheckStatus.FAILED
        assert _codes(checks[name]) == ["PLG-CHECK-DEADLINE"]
        assert "deadline" in checks[name].findings[0].message
    assert _state(engine, org, late) is UploadState.CHECKED
    mailed = _mail(engine)
    assert sorted(to for to, _, _ in mailed) == sorted([org.owner.email, org.admin.email])
    assert all("PLG-CHECK-DEADLINE" in body for _, _, body in mailed)


def _lines(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]


def independent_counts(
    stored: list[dict], printed: list[dict], today: date
) -> dict[str, tuple[int, int, int, int]]:
    """(new, revised, moved, missing) per series, worked out here from the two files by the
    spec's words ("Stored-record behaviour", "Event record", snapshot windows of 1y back and
    3y ahead), without the store write's code."""
    key = lambda r: (r["series"], r["date"], r["id"])  # noqa: E731  (events: every UK record)
    before = {key(r): r for r in stored}
    after = {key(r): r for r in printed}
    by_event = {(r["series"], r["id"]): r["date"] for r in printed}
    low, high = today.replace(year=today.year - 1), today.replace(year=today.year + 3)
    out = {}
    for series in ("england-and-wales", "scotland", "northern-ireland"):
        new = sum(1 for k in after if k[0] == series and k not in before)
        revised = sum(
            1 for k, r in after.items() if k[0] == series and k in before and before[k] != r
        )
        moved_keys = {
            k
            for k in before
            if k[0] == series
            and k not in after
            and by_event.get((series, k[2])) not in (None, k[1])
        }
        missing = sum(
            1
            for k in before
            if k[0] == series
            and k not in after
            and k not in moved_keys
            and low <= date.fromisoformat(k[1]) <= high
        )
        out[series] = (new, revised, len(moved_keys), missing)
    return out


def test_the_record_diff_of_an_update_on_the_later_files(
    engine: Engine, passwords, tmp_path: Path
) -> None:
    later_now = datetime(2025, 5, 29, 12, 0, tzinfo=UTC)
    clock = FrozenClock(later_now)
    with Session(engine, expire_on_commit=False) as db:
        org = organization(db, passwords, T0, "diff")
    # Version 1.0.0 published at the host for the organization, with the records its fixture
    # run gives stored by a scheduled run on the fixture's day.
    code = check_pack(zip_of(folder_files(UK)))
    later = EXAMPLE / "fixtures" / "runs" / "later-file"
    printed = _lines(later / "records.jsonl")
    # Beside the fixture's records: an event the later file moves (its id printed a week
    # later), and one inside Scotland's snapshot window that the later file leaves out.
    summer = next(
        r for r in printed if r["series"] == "england-and-wales" and r["date"].startswith("2025-08")
    )
    stored = [
        *_lines(EXAMPLE / "fixtures" / "records.jsonl"),
        {**summer, "date": "2025-08-18", "state": "scheduled"},
        {
            "kind": "event",
            "series": "scotland",
            "id": "made-up-holiday-2025",
            "date": "2025-06-02",
            "state": "scheduled",
            "title": "Made-up holiday",
        },
    ]
    with write_transaction(engine) as conn:
        hosting.register_code(
            conn, code, origin="upload", by="host@example.org", now=T0,
            publisher_organization_id=org.id,
        )  # fmt: skip
        status = plugin_status(conn, UK)
        moves.approve(conn, UK, digest_shown=status.current_digest, by="host@example.org", now=T0)
        status = plugin_status(conn, UK)
    fixture_day = datetime(2022, 11, 4, 12, 0, tzinfo=UTC)
    write_run(
        engine,
        plugin_id=UK,
        version_id=status.approved_version_id,
        digest=status.approved_digest,
        manifest=code.manifest,
        run=RunFacts(
            today=date(2022, 11, 4),
            trigger=RunTrigger.SCHEDULE,
            started_at=fixture_day,
            now=fixture_day,
        ),
        batch=stored,
    )
    # The update: version 1.0.1, checked on the day of the later fixture files.
    update_files = folder_files(UK)
    update_files["plugin.json"] = json.dumps(
        {**json.loads(update_files["plugin.json"]), "version": "1.0.1"}
    ).encode()
    upload_id = _upload(engine, org, update_files, later_now)
    with SourceServer(HOSTS) as server:
        serve_uk(server)
        server.serve("/bank-holidays.json", (later / "sources" / "bank-holidays-json").read_bytes())
        with Ticker.open(tmp_path, clock, definitions(tmp_path, engine, clock, server)) as dagster:
            [run] = dagster.step(later_now + timedelta(minutes=1))
            assert run.status == dg.DagsterRunStatus.SUCCESS
    checks = _checks(engine, org, upload_id)
    assert checks["sources"].status is CheckStatus.PASSED, checks["sources"].findings
    with Session(engine) as db:
        diff = uploads.show_upload(db, org.id, org.owner, upload_id).record_diff
    assert diff is not None and diff["today"] == "2025-05-29"
    got = {
        key: (s["new"], s["revised"], s["moved"], s["missing"]) for key, s in diff["series"].items()
    }
    assert got == independent_counts(stored, printed, date(2025, 5, 29))
    print("record diff counts", got)
    assert got == EXPECTED_DIFF
    for key, series in diff["series"].items():
        for kind in ("new", "revised", "moved", "missing"):
            assert len(series[f"{kind}_records"]) == min(series[kind], 50), (key, kind)
    england = diff["series"]["england-and-wales"]
    revised = england["revised_records"][0]
    assert set(revised) == {"date", "key", "kind", "old", "new"}
    assert revised["old"] != revised["new"] and isinstance(revised["new"], dict)
    assert england["moved_records"] == [
        {
            "date": "2025-08-18",
            "key": summer["id"],
            "kind": "event",
            "content": {"state": "scheduled", "title": summer["title"], "value": None},
            "to": summer["date"],
        }
    ]
    [missing] = diff["series"]["scotland"]["missing_records"]
    assert missing["key"] == "made-up-holiday-2025" and missing["misses"] == 1
    assert missing["content"]["title"] == "Made-up holiday"
    assert diff["removed_series"] == []
    # Nothing was written: the stored records are the fixture's, as before.
    with engine.connect() as conn:
        count = conn.execute(
            text("SELECT count(*) FROM records WHERE plugin_id = :id"), {"id": UK}
        ).scalar_one()
    assert count == len(stored)


EXPECTED_DIFF = {
    # (new, revised, moved, missing)
    "england-and-wales": (33, 10, 1, 0),
    "scotland": (37, 12, 0, 1),
    "northern-ireland": (41, 12, 0, 0),
}


def test_a_host_registration_gets_the_same_checks_on_its_version_page(
    engine: Engine, tmp_path: Path
) -> None:
    clock = FrozenClock(T0)
    # A pack, as the host's pack route takes it, and a folder on the server without fixtures
    # (a fetcher that cannot run on them): both registered by an operator.
    pack = zip_of(folder_files(UK))
    folder = tmp_path / "folder" / UK
    for path, content in folder_files(UK).items():
        if not path.startswith("fixtures/"):
            (folder / path).parent.mkdir(parents=True, exist_ok=True)
            (folder / path).write_bytes(content)
    doc = json.loads((folder / "plugin.json").read_bytes())
    (folder / "plugin.json").write_text(json.dumps({**doc, "version": "1.0.1"}))
    with Session(engine, expire_on_commit=False) as db:
        packed = hosting.register_code(
            db.connection(), check_pack(pack), origin="upload", by="op@example.org", now=T0
        )
        assert check_queue.queue_version_checks(db, packed.version_id, pack, T0)
        assert not check_queue.queue_version_checks(db, packed.version_id, pack, T0)  # once
        from_folder = hosting.register_code(
            db.connection(), check_folder(folder), origin="folder", by="op@example.org", now=T0
        )
        assert check_queue.queue_version_checks(
            db, from_folder.version_id, check_queue.archive_of_folder(folder), T0
        )
        db.commit()
    with engine.connect() as conn:
        page = VersionOut.read(conn, UK, packed.version_id, "https://almanac.test")
    names = ("fixtures", "cases", "examples", "sources", "links")
    assert [(c.name, c.status) for c in page.checks.room] == [(n, "queued") for n in names]
    with SourceServer(HOSTS) as server:
        serve_uk(server)
        with Ticker.open(tmp_path, clock, definitions(tmp_path, engine, clock, server)) as dagster:
            runs = dagster.step(T0 + timedelta(minutes=1))
            assert len(runs) == 2 and all(r.job_name == CHECKS_JOB for r in runs)
            assert all(r.status == dg.DagsterRunStatus.SUCCESS for r in runs)
    with engine.connect() as conn:
        good = VersionOut.read(conn, UK, packed.version_id, "https://almanac.test").checks.room
        bare = VersionOut.read(conn, UK, from_folder.version_id, "https://almanac.test").checks.room
    assert [(c.name, c.status) for c in good] == [(n, "passed") for n in names], [
        c.findings for c in good
    ]
    statuses = {c.name: (c.status, [f.code for f in c.findings]) for c in bare}
    assert statuses["fixtures"] == ("failed", ["PLG-FIXTURE-RECORDS-MISSING"])
    assert statuses["cases"] == ("failed", ["PLG-FIXTURE-RECORDS-MISSING"])
    # The real sources still run the fetcher once, as a scheduled run would; the listing's
    # example days need the fixtures' records, which a folder without fixtures lacks.
    assert statuses["sources"] == ("passed", [])
    assert statuses["links"] == ("passed", [])
    assert statuses["examples"][0] == "failed"
    assert set(statuses["examples"][1]) == {"PLG-REVIEW-EXAMPLE", "PLG-LISTING-EXAMPLE"}
    assert all(f.docs.endswith(f"/docs/problems/{f.code}") for c in bare for f in c.findings)
