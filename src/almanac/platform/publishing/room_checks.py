"""The locked-room checks of an uploaded version: queued, run, and always brought to an end."""

from __future__ import annotations

import io
import json
import logging
import os
import tempfile
import zipfile
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import date, datetime, timedelta
from pathlib import Path
from typing import Any, Protocol

from sqlalchemy import Connection, select
from sqlalchemy.orm import Session, sessionmaker

from almanac.platform.contract.context import (
    build_run_context,
    format_instant,
    run_context_from_fixture,
    series_state_of_records,
    today_in_zone,
)
from almanac.platform.contract.manifest import Manifest, parse_manifest
from almanac.platform.contract.pack import check_code, folder_files, read_pack
from almanac.platform.contract.problems import Problem
from almanac.platform.contract.records import check_batch
from almanac.platform.mail import Mailer, MailMessage, send_all
from almanac.platform.publishing.diff import record_diff
from almanac.platform.publishing.models import (
    CheckStatus,
    PortalUpload,
    ReviewInformation,
    UploadCheck,
    UploadState,
    VersionCheckInput,
)
from almanac.platform.publishing.network import (
    HostFailure,
    Probe,
    could_not_run_is_due,
    every_host_failed_a_network_way,
    service_network_is_down,
)
from almanac.platform.publishing.review import review_example_problems
from almanac.platform.publishing.roles import manager_addresses
from almanac.platform.store.reading import series_state
from almanac.platform.store.tables import blobs, version_files, versions

log = logging.getLogger(__name__)

ROOM_CHECKS = ("fixtures", "cases", "examples", "sources", "links")
"""The locked-room checks: the fixtures run twice (identical, equal to fixtures/records.jsonl),
each fixtures/runs/<case>, the example days of review.json and the listing in the fixtures'
output, the real sources once (the batch checked like a scheduled run's), each listing link."""
CHECK_DEADLINE = timedelta(minutes=15)
"""A room check not final this long after it was queued fails with PLG-CHECK-DEADLINE."""
FINAL = (CheckStatus.PASSED, CheckStatus.FAILED)
FIXTURE_CHECKS = frozenset({"fixtures", "cases", "examples"})
"""The room checks that run on the fixtures (the network checks are `sources` and `links`)."""
NETWORK_DOWN = "CHECK-NETWORK-UNAVAILABLE"
"""The one finding of a check that could not run: the service's network, not the version."""


class RoomOutcome(Protocol):
    """What the locked room answers for one run (`almanac.sandbox.room.RoomResult`)."""

    @property
    def exit_code(self) -> int | None: ...
    @property
    def stdout(self) -> bytes: ...
    @property
    def reason(self) -> str | None: ...
    @property
    def killed_by(self) -> Any: ...


Tried = tuple[HostFailure | None, ...]
"""How each host a network check tried went: None when reached, else how it failed."""


class SourceUnavailable(Exception):
    """A real source or link could not be fetched; `reason` says why (the downloader's words).
    `tried` has one entry per host tried on the way: None when reached, else how it failed."""

    def __init__(
        self, reason: str, tried: Sequence[HostFailure | None] = (HostFailure.ANSWERED,)
    ) -> None:
        super().__init__(reason)
        self.reason = reason
        self.tried = tuple(tried)


class Sources(Protocol):
    """The safe downloader, as the checks use it: the declared sources of a manifest once, as
    a scheduled run downloads them, and one link (raising SourceUnavailable); and the
    operator's known-good probe (None when none is set)."""

    def download(self, manifest: Manifest, today: date, work: Path) -> Mapping[str, Path]: ...

    def reach(self, url: str, today: date, work: Path) -> None: ...

    def probe(self, today: date) -> Probe | None: ...


RoomRun = Callable[
    [Mapping[str, bytes], Mapping[str, Path], Mapping[str, Any], Manifest], RoomOutcome
]
"""One fetcher run in the locked room: covered files, source files, run context, manifest
(for its limits)."""


def queue_room_checks(
    db: Session, upload: PortalUpload, now: datetime, deadline: timedelta = CHECK_DEADLINE
) -> None:
    """Queue the room checks of an upload (after its static checks): the upload is being
    checked until each is final."""
    for name in ROOM_CHECKS:
        db.add(
            UploadCheck(
                upload_id=upload.id,
                name=name,
                status=CheckStatus.QUEUED,
                findings=[],
                queued_at=now,
                deadline_at=now + deadline,
            )
        )
    upload.state = UploadState.CHECKING
    db.flush()


@dataclass(frozen=True, slots=True)
class QueuedUpload:
    """An upload with room checks waiting: the sensor asks for one checks run per queueing."""

    upload_id: int
    queued_at: datetime


def queued_uploads(db: Session) -> list[QueuedUpload]:
    """Uploads being checked whose room checks are queued, oldest first."""
    rows = db.execute(
        select(UploadCheck.upload_id, UploadCheck.queued_at)
        .join(PortalUpload, PortalUpload.id == UploadCheck.upload_id)
        .where(
            UploadCheck.status == CheckStatus.QUEUED,
            PortalUpload.state == UploadState.CHECKING,
        )
        .distinct()
        .order_by(UploadCheck.queued_at, UploadCheck.upload_id)
    ).all()
    return [QueuedUpload(u, at) for u, at in rows if u is not None]


def _finding(problem: Problem) -> dict[str, Any]:
    out: dict[str, Any] = {"code": problem.code, "message": problem.message}
    if problem.path is not None:
        out["path"] = problem.path
    if problem.line is not None:
        out["line"] = problem.line
    return out


def _settle(db: Session, upload_id: int) -> list[MailMessage]:
    """The upload is checked once every check is final (a withdrawn one stays withdrawn); when
    some failed, the mail that tells the organization's owners and admins."""
    upload = db.get(PortalUpload, upload_id)
    if upload is None or upload.state != UploadState.CHECKING:
        return []
    checks = db.scalars(
        select(UploadCheck).where(UploadCheck.upload_id == upload_id).order_by(UploadCheck.id)
    ).all()
    if not all(CheckStatus(c.status) in FINAL for c in checks):
        return []
    upload.state = UploadState.CHECKED
    failed = [c for c in checks if c.status == CheckStatus.FAILED]
    if not failed:
        return []
    lines = [
        f"The checks of {upload.plugin_id} {upload.version} (upload {upload.id}) finished, "
        f"and {len(failed)} of {len(checks)} failed:",
        "",
    ]
    for check in failed:
        lines.append(f"- {check.name}:")
        lines.extend(f"    {f['code']}: {f['message']}" for f in check.findings[:5])
        if len(check.findings) > 5:
            lines.append(f"    ... and {len(check.findings) - 5} more")
    lines += [
        "",
        "Every finding, with its fix and docs link, is on the version's page: "
        f"/api/v1/portal/organizations/{upload.organization_id}/uploads/{upload.id}",
    ]
    subject = f"Checks failed: {upload.plugin_id} {upload.version}"
    body = "\n".join(lines) + "\n"
    return [
        MailMessage(to=address, subject=subject, body=body)
        for address in manager_addresses(db, upload.organization_id)
    ]


def expire_overdue(db: Session, now: datetime) -> list[MailMessage]:
    """Every check not final past its deadline fails with PLG-CHECK-DEADLINE and its reason
    (nothing is left "validating"); the mail to send once this is committed."""
    overdue = db.scalars(
        select(UploadCheck).where(
            UploadCheck.status.in_([CheckStatus.QUEUED, CheckStatus.RUNNING]),
            UploadCheck.deadline_at <= now,
        )
    ).all()
    touched: list[int] = []  # uploads (a host version has no state to settle)
    for check in overdue:
        was = "queued" if check.status == CheckStatus.QUEUED else "running"
        problem = Problem(
            "PLG-CHECK-DEADLINE",
            f"the {check.name} check was still {was} at its deadline "
            f"{format_instant(check.deadline_at)}; re-run the checks",
        )
        check.status = CheckStatus.FAILED
        check.findings = [*check.findings, _finding(problem)]
        check.finished_at = now
        if check.upload_id is not None:
            touched.append(check.upload_id)
    messages: list[MailMessage] = []
    for upload_id in sorted(set(touched)):
        messages.extend(_settle(db, upload_id))
    db.flush()
    return messages


@dataclass(frozen=True, slots=True)
class NetworkOutage:
    """The checks that could not run because the service's network was down, as the host's
    notice and the operators' alert tell them: how many, since when, the newest one's words."""

    checks: int
    since: datetime
    last_at: datetime
    last_message: str


def network_outage(db: Session) -> NetworkOutage | None:
    """The checks (of uploads and host versions) waiting for the network; None when none."""
    rows = db.execute(
        select(UploadCheck.finished_at, UploadCheck.findings)
        .where(UploadCheck.status == CheckStatus.COULD_NOT_RUN)
        .order_by(UploadCheck.finished_at, UploadCheck.id)
    ).all()
    if not rows:
        return None
    first, last = rows[0], rows[-1]
    said = [f["message"] for f in last.findings if f.get("code") == NETWORK_DOWN]
    return NetworkOutage(
        checks=len(rows),
        since=first.finished_at,
        last_at=last.finished_at,
        last_message=said[0] if said else "",
    )


def requeue_for_network(
    db: Session, now: datetime, probe_reached: bool | None, deadline: timedelta = CHECK_DEADLINE
) -> int:
    """Queue again each check that could not run and is due (`network.could_not_run_is_due`:
    with a probe set, once it answers; without one, 10 minutes after), with a new deadline;
    the checks sensor then asks for their run. Returns how many were queued."""
    waiting = db.scalars(
        select(UploadCheck).where(UploadCheck.status == CheckStatus.COULD_NOT_RUN)
    ).all()
    queued = 0
    for check in waiting:
        since = check.finished_at or check.queued_at
        if not could_not_run_is_due(since, probe_reached, now):
            continue
        check.status = CheckStatus.QUEUED
        check.findings = []
        check.queued_at = now
        check.started_at = None
        check.finished_at = None
        check.deadline_at = now + deadline
        queued += 1
    db.flush()
    return queued


def _first_difference(got: str, want: str) -> tuple[int, str, str]:
    got_lines, want_lines = got.split("\n"), want.split("\n")
    for number, (a, b) in enumerate(zip(got_lines, want_lines, strict=False), start=1):
        if a != b:
            return number, a[:120], b[:120]
    number = min(len(got_lines), len(want_lines)) + 1
    return number, "(end)" if len(got_lines) < number else got_lines[number - 1][:120], "(end)"


def _run_problems(result: RoomOutcome, label: str) -> list[Problem]:
    if result.killed_by is not None:
        reason = result.reason or "stopped at its limits"
        return [Problem("PLG-RUN-KILLED", f"{label}: {reason}")]
    if result.exit_code != 0:
        reason = result.reason or f"exit {result.exit_code}"
        return [Problem("PLG-RUN-FAILED", f"{label} exited {result.exit_code}: {reason}")]
    return []


@dataclass
class _Folder:
    manifest: Manifest
    files: dict[str, bytes]
    covered: dict[str, bytes]
    fixture: dict[str, Any]

    def sources(self, root: Path, case: str | None) -> dict[str, Path]:
        out: dict[str, Path] = {}
        for source in self.manifest.sources:
            rel = f"fixtures/sources/{source.name}"
            if case is not None and f"fixtures/runs/{case}/sources/{source.name}" in self.files:
                rel = f"fixtures/runs/{case}/sources/{source.name}"
            target = root / (case or "_base") / source.name
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(self.files.get(rel, b""))
            out[source.name] = target
        return out

    def cases(self) -> list[str]:
        prefix = "fixtures/runs/"
        return sorted(
            {
                p[len(prefix) :].split("/", 1)[0]
                for p in self.files
                if p.startswith(prefix) and p.count("/") >= 3
            }
        )


def sent_review(db: Session, upload_id: int) -> bytes | None:
    """The review information sent separately for an upload (it takes the place of the
    upload's review.json), as review.json's bytes; None when none was sent."""
    row = db.get(ReviewInformation, upload_id)
    return None if row is None else json.dumps(row.document, ensure_ascii=False).encode()


def _folder(upload: PortalUpload, review: bytes | None = None) -> _Folder:
    unpacked = read_pack(upload.archive)
    code = check_code(unpacked.folder, unpacked.files, unpacked.pack_info)
    manifest = code.manifest
    if review is not None:
        unpacked.files["review.json"] = review
    if "fixtures/context.json" in unpacked.files:
        fixture = json.loads(unpacked.files["fixtures/context.json"])
    else:
        fixture = {
            "now": format_instant(upload.uploaded_at),
            "today": today_in_zone(upload.uploaded_at, manifest.timezone).isoformat(),
        }
    return _Folder(manifest, unpacked.files, code.files, fixture)


def fixtures_check(
    folder: _Folder, room: RoomRun, tmp: Path
) -> tuple[list[Problem], list[dict[str, Any]]]:
    """The fixtures run twice: both exit 0 with the same bytes (PLG-RUN-NOT-DETERMINISTIC),
    every record valid, and the output equal to fixtures/records.jsonl byte for byte
    (PLG-FIXTURE-MISMATCH, first differing line). Also the records, for the run cases."""
    manifest = folder.manifest
    context = run_context_from_fixture(folder.fixture, manifest)
    sources = folder.sources(tmp, None)
    first = room(folder.covered, sources, context, manifest)
    problems = _run_problems(first, "fixture run")
    if problems:
        return problems, []
    batch = check_batch(first.stdout.splitlines(), manifest, context["today"])
    problems.extend(
        Problem(p.code, f"fixture run output {p.message}", path=p.path, line=p.line)
        for p in batch.problems
    )
    second = room(folder.covered, sources, context, manifest)
    if second.exit_code != 0 or second.stdout != first.stdout:
        line, was, then = _first_difference(
            second.stdout.decode("utf-8", "replace"), first.stdout.decode("utf-8", "replace")
        )
        problems.append(
            Problem(
                "PLG-RUN-NOT-DETERMINISTIC",
                f"the fetcher printed different output on a second run of the same files "
                f"(line {line}: {then} then {was})",
                line=line,
            )
        )
    expected = folder.files.get("fixtures/records.jsonl", b"")
    if first.stdout != expected:
        line, got, want = _first_difference(
            first.stdout.decode("utf-8", "replace"), expected.decode("utf-8", "replace")
        )
        problems.append(
            Problem(
                "PLG-FIXTURE-MISMATCH",
                f"fixtures/records.jsonl line {line} differs: the fetcher printed {got}, the "
                f"file has {want}",
                path="fixtures/records.jsonl",
                line=line,
            )
        )
    return problems, batch.records


def _case_context(folder: _Folder, case: str, base: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    given = folder.files.get(f"fixtures/runs/{case}/context.json")
    fixture = json.loads(given) if given is not None else folder.fixture
    state = series_state_of_records(folder.manifest, base, date.fromisoformat(fixture["today"]))
    return run_context_from_fixture(fixture, folder.manifest, series_state=state, backfill=False)


def cases_check(
    folder: _Folder, room: RoomRun, tmp: Path, base: Sequence[Mapping[str, Any]]
) -> list[Problem]:
    """Each fixtures/runs/<case>: records equal to its records.jsonl, or the failure its
    expect.json names (PLG-RUN-EXPECTED-FAILURE: records printed, wrong exit, reason missing)."""
    problems: list[Problem] = []
    for case in folder.cases():
        rel = f"fixtures/runs/{case}"
        label = f"run case {case}"
        context = _case_context(folder, case, base)
        result = room(folder.covered, folder.sources(tmp, case), context, folder.manifest)
        expect_raw = folder.files.get(f"{rel}/expect.json")
        if expect_raw is not None:
            expect = json.loads(expect_raw)
            why: list[str] = []
            wanted = expect.get("exit")
            if result.exit_code == 0 and result.killed_by is None:
                why.append("it exited 0")
            elif wanted is not None and result.exit_code != wanted:
                why.append(f"it exited {result.exit_code}, not {wanted}")
            if result.stdout:
                why.append("it printed records")
            reason = str(expect.get("reason") or "")
            if reason and reason.lower() not in (result.reason or "").lower():
                why.append(f'its last stderr line "{result.reason or ""}" lacks "{reason}"')
            if why:
                problems.append(
                    Problem(
                        "PLG-RUN-EXPECTED-FAILURE",
                        f"{label} must fail but {'; '.join(why)}",
                        path=f"{rel}/expect.json",
                    )
                )
            continue
        found = _run_problems(result, label)
        if found:
            problems.extend(found)
            continue
        expected = folder.files.get(f"{rel}/records.jsonl", b"")
        if result.stdout != expected:
            line, got, want = _first_difference(
                result.stdout.decode("utf-8", "replace"), expected.decode("utf-8", "replace")
            )
            problems.append(
                Problem(
                    "PLG-FIXTURE-MISMATCH",
                    f"{rel}/records.jsonl line {line} differs: the fetcher printed {got}, the "
                    f"file has {want}",
                    path=f"{rel}/records.jsonl",
                    line=line,
                )
            )
    return problems


def examples_check(folder: _Folder, records: Sequence[Mapping[str, Any]]) -> list[Problem]:
    """The example days of review.json (PLG-REVIEW-EXAMPLE: the expected figures, state or
    title on that day in that series) and of the listing (PLG-LISTING-EXAMPLE: a record on
    that day) in what the fixtures produce."""
    problems = review_example_problems(_json_object(folder.files.get("review.json")), records)
    days = {str(record.get("date")) for record in records}
    listing = _json_object(folder.files.get("listing.json"))
    shown_days = listing.get("examples") if listing is not None else None
    for index, example in enumerate(shown_days if isinstance(shown_days, list) else []):
        day = example.get("date") if isinstance(example, Mapping) else None
        if isinstance(day, str) and day not in days:
            problems.append(
                Problem(
                    "PLG-LISTING-EXAMPLE",
                    f"listing.json examples[{index}].date: the fixtures give no record on {day}",
                    path=f"examples[{index}].date",
                )
            )
    return problems


def _json_object(raw: bytes | None) -> Mapping[str, Any] | None:
    if raw is None:
        return None
    try:
        found = json.loads(raw)
    except (ValueError, UnicodeDecodeError):
        return None
    return found if isinstance(found, Mapping) else None


@dataclass(frozen=True, slots=True)
class RealBatch:
    """The records the version printed on today's real downloads, checked like a scheduled
    run's batch (empty when the run or the batch failed), and its today."""

    today: date
    records: tuple[Mapping[str, Any], ...]


def sources_check(
    folder: _Folder,
    room: RoomRun,
    sources: Sources,
    tmp: Path,
    now: datetime,
    series_state: Mapping[str, tuple[date | None, int]],
) -> tuple[list[Problem], RealBatch, Tried]:
    """The real sources once through the safe downloader (PLG-SOURCE-DOWNLOAD), the fetcher
    run on them in the locked room with the run context of today, and the batch checked like
    a scheduled run's (a source that is not what the fetcher knows: PLG-RUN-FAILED with the
    fetcher's reason). Also how each host tried went (`Tried`)."""
    manifest = folder.manifest
    today = today_in_zone(now, manifest.timezone)
    work = tmp / "real"
    work.mkdir(parents=True, exist_ok=True)
    try:
        paths = sources.download(manifest, today, work)
    except SourceUnavailable as error:
        failed = [Problem("PLG-SOURCE-DOWNLOAD", f"real sources: {error.reason}")]
        return failed, RealBatch(today, ()), error.tried
    reached: Tried = tuple(None for _ in manifest.sources)
    context = build_run_context(manifest, now=now, series_state=dict(series_state))
    result = room(folder.covered, paths, context, manifest)
    problems = _run_problems(result, "the run on the real sources")
    if problems:
        return problems, RealBatch(today, ()), reached
    batch = check_batch(result.stdout.splitlines(), manifest, today)
    if not batch.ok:
        return (
            [
                Problem(
                    p.code, f"the run on the real sources: {p.message}", path=p.path, line=p.line
                )
                for p in batch.problems
            ],
            RealBatch(today, ()),
            reached,
        )
    return [], RealBatch(today, tuple(batch.records)), reached


def listing_links(listing: Mapping[str, Any] | None) -> list[tuple[str, str]]:
    """(path, url) of each link of a listing: privacy, support url, each source's page and
    licence url."""
    if listing is None:
        return []
    found: list[tuple[str, str]] = []
    links = listing.get("links")
    if isinstance(links, Mapping):
        if isinstance(links.get("privacy"), str):
            found.append(("links.privacy", links["privacy"]))
        support = links.get("support")
        if isinstance(support, Mapping) and isinstance(support.get("url"), str):
            found.append(("links.support.url", support["url"]))
    entries = listing.get("sources")
    for index, entry in enumerate(entries if isinstance(entries, list) else []):
        if not isinstance(entry, Mapping):
            continue
        if isinstance(entry.get("page"), str):
            found.append((f"sources[{index}].page", entry["page"]))
        licence = entry.get("licence")
        if isinstance(licence, Mapping) and isinstance(licence.get("url"), str):
            found.append((f"sources[{index}].licence.url", licence["url"]))
    return found


def links_check(
    folder: _Folder, sources: Sources, tmp: Path, now: datetime
) -> tuple[list[Problem], Tried]:
    """Each listing link: https, a public address, an answer within the short time-out
    (PLG-LISTING-LINK-DEAD with the downloader's reason). Also how each link's host went."""
    problems: list[Problem] = []
    tried: list[HostFailure | None] = []
    today = now.date()
    for index, (path, url) in enumerate(
        listing_links(_json_object(folder.files.get("listing.json")))
    ):
        work = tmp / f"link-{index}"
        work.mkdir(parents=True, exist_ok=True)
        try:
            sources.reach(url, today, work)
        except SourceUnavailable as error:
            tried.extend(error.tried)
            problems.append(
                Problem(
                    "PLG-LISTING-LINK-DEAD",
                    f"listing.json {path}: {url}: {error.reason}",
                    path=path,
                )
            )
        else:
            tried.append(None)
    return problems, tuple(tried)


class NetworkJudge:
    """Decides, for the network checks of one checks run, whether a failure is the publisher's
    or the service's own network (`network.service_network_is_down`); asks the operator's probe
    at most once, and only when every host of a check failed a network way."""

    def __init__(self, sources: Sources, today: date) -> None:
        self._sources = sources
        self._today = today
        self._probe: Probe | None = None
        self._probed = False

    def probe(self) -> Probe | None:
        if not self._probed:
            self._probe = self._sources.probe(self._today)
            self._probed = True
        return self._probe

    def judge(self, problems: list[Problem], tried: Tried) -> list[Problem]:
        """The check's findings as they stand, or, when the network was down, the one finding
        that says so (the check could not run) in place of findings blaming the URLs."""
        if not every_host_failed_a_network_way(tried):
            return problems
        probe = self.probe()
        if not service_network_is_down(tried, None if probe is None else probe.reached):
            return problems
        return [network_down_problem(problems, probe)]


def network_down_problem(failures: Sequence[Problem], probe: Probe | None) -> Problem:
    """CHECK-NETWORK-UNAVAILABLE: what the downloader said, without blaming the URLs, and that
    the check runs again by itself."""
    said = failures[0].message if failures else "no host answered"
    if len(failures) > 1:
        said += f"; and {len(failures) - 1} more the same way"
    if probe is not None:
        said += f"; the probe {probe.url} did not answer either"
    return Problem(
        NETWORK_DOWN,
        "the service could not reach the network, so this check could not run "
        f"({said}); it runs again by itself once the network is back",
    )


def check_status(problems: Sequence[Problem]) -> CheckStatus:
    """A check's final status from its findings: could not run (the service's network), failed
    (an error) or passed."""
    if any(p.code == NETWORK_DOWN for p in problems):
        return CheckStatus.COULD_NOT_RUN
    if any(p.severity == "error" for p in problems):
        return CheckStatus.FAILED
    return CheckStatus.PASSED


def _stored_state(
    sessions: sessionmaker[Session], folder: _Folder, today: date
) -> dict[str, tuple[date | None, int]]:
    """The series state of the plug-in's stored records (none before its first version): the
    run on the real sources gets the context a scheduled run would."""
    keys = [s.key for s in folder.manifest.series]
    with sessions() as db:
        found = series_state(db.connection(), folder.manifest.id, keys, today)
    return {key: (state.last, state.count) for key, state in found.items()}


def _begin(
    sessions: sessionmaker[Session], upload_id: int, now: datetime
) -> tuple[PortalUpload, frozenset[str]] | None:
    """The upload's queued checks marked running; the upload and their names (a check that
    could not run is queued again alone, and only it runs)."""
    with sessions() as db:
        upload = db.get(PortalUpload, upload_id)
        if upload is None or upload.state != UploadState.CHECKING:
            return None
        queued = db.scalars(
            select(UploadCheck).where(
                UploadCheck.upload_id == upload_id, UploadCheck.status == CheckStatus.QUEUED
            )
        ).all()
        if not queued:
            return None
        for check in queued:
            check.status = CheckStatus.RUNNING
            check.started_at = now
        db.commit()
        db.expunge(upload)
        return upload, frozenset(check.name for check in queued)


def _finish(
    sessions: sessionmaker[Session],
    upload_id: int,
    results: Mapping[str, list[Problem]],
    now: datetime,
    diff: dict[str, Any] | None,
) -> list[MailMessage]:
    with sessions() as db:
        upload = db.get(PortalUpload, upload_id)
        if upload is not None and "sources" in results:
            upload.record_diff = diff
        _record_results(db, UploadCheck.upload_id == upload_id, results, now)
        messages = _settle(db, upload_id)
        db.commit()
    return messages


def _record_results(
    db: Session, subject: Any, results: Mapping[str, list[Problem]], now: datetime
) -> None:
    """The running checks of one subject become passed or failed with their findings (failed,
    PLG-CHECK-DEADLINE added, when they end after their deadline), or could not run (the
    service's network was down: no deadline applies, it runs again by itself)."""
    for check in db.scalars(
        select(UploadCheck).where(subject, UploadCheck.status == CheckStatus.RUNNING)
    ):
        problems = results.get(check.name)
        if problems is None:
            continue
        status = check_status(problems)
        if now > check.deadline_at and status is not CheckStatus.COULD_NOT_RUN:
            problems = [
                *problems,
                Problem(
                    "PLG-CHECK-DEADLINE",
                    f"the {check.name} check ended at {format_instant(now)}, after its "
                    f"deadline {format_instant(check.deadline_at)}; re-run the checks",
                ),
            ]
            status = check_status(problems)
        check.status = status
        check.findings = [_finding(p) for p in problems]
        check.finished_at = now
    db.flush()


def run_room_checks(
    sessions: sessionmaker[Session],
    upload_id: int,
    room: RoomRun,
    sources: Sources,
    mailer: Mailer,
    clock: Callable[[], datetime],
) -> dict[str, CheckStatus]:
    """Run the queued room checks of an upload (never in a web request): marked running, run
    in the locked room, then passed or failed with their findings. A check that ends after
    its deadline fails with PLG-CHECK-DEADLINE. A network check whose every host failed
    because the service's own network was down could not run (`NetworkJudge`). The owners and
    admins are mailed when the checks finish with failures. Returns each check's status."""
    begun = _begin(sessions, upload_id, clock())
    if begun is None:
        return {}
    upload, wanted = begun
    with sessions() as db:
        review = sent_review(db, upload_id)
    folder = _folder(upload, review)
    results: dict[str, list[Problem]] = {}
    diff: dict[str, Any] | None = None
    with tempfile.TemporaryDirectory(prefix="almanac-checks-") as tmp:
        try:
            if wanted & FIXTURE_CHECKS:
                fixtures, records = fixtures_check(folder, room, Path(tmp))
                results["fixtures"] = fixtures
                results["cases"] = cases_check(folder, room, Path(tmp), records)
                results["examples"] = examples_check(folder, records)
            now = clock()
            today = today_in_zone(now, folder.manifest.timezone)
            network = NetworkJudge(sources, today)
            if "sources" in wanted:
                real, batch, tried = sources_check(
                    folder, room, sources, Path(tmp), now, _stored_state(sessions, folder, today)
                )
                results["sources"] = network.judge(real, tried)
                if batch.records:
                    with sessions() as db:
                        found = record_diff(db.connection(), folder.manifest, batch.records, today)
                    diff = None if found is None else found.as_dict()
            if "links" in wanted:
                results["links"] = network.judge(*links_check(folder, sources, Path(tmp), now))
        except Exception as error:  # the room refused, or anything else: the checks still end
            log.exception("room checks of upload %s", upload_id)
            reason = str(error)[:300] or type(error).__name__
            failure = [Problem("PLG-RUN-FAILED", f"the checks could not run: {reason}")]
            results = {name: results.get(name, failure) for name in wanted}
    done = clock()
    send_all(mailer, _finish(sessions, upload_id, results, done, diff), done)
    with sessions() as db:
        rows = db.scalars(select(UploadCheck).where(UploadCheck.upload_id == upload_id))
        return {row.name: CheckStatus(row.status) for row in rows}


VERSION_CHECKS = ROOM_CHECKS
"""The room checks of a version registered at the host: an upload's (its whole pack is kept for
them, listing and review.json included)."""


def archive_of_folder(folder: str | os.PathLike[str]) -> bytes:
    """A folder on the server packed as a ZIP of `<id>/<path>` entries (its every file, as
    `pack` takes them), the input of its checks."""
    root = Path(folder)
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for path, content in sorted(folder_files(root).items()):
            archive.writestr(zipfile.ZipInfo(f"{root.name}/{path}", (1980, 1, 1, 0, 0, 0)), content)
    return buffer.getvalue()


def queue_version_checks(
    db: Session,
    version_id: int,
    archive: bytes,
    now: datetime,
    deadline: timedelta = CHECK_DEADLINE,
) -> bool:
    """Queue the room checks of a version an operator registered (its pack, or its folder
    packed), once: the same version registered again keeps its checks. True when queued."""
    known = db.scalar(select(UploadCheck.id).where(UploadCheck.version_id == version_id))
    if known is not None:
        return False
    db.add(VersionCheckInput(version_id=version_id, archive=archive))
    for name in VERSION_CHECKS:
        db.add(
            UploadCheck(
                version_id=version_id,
                name=name,
                status=CheckStatus.QUEUED,
                findings=[],
                queued_at=now,
                deadline_at=now + deadline,
            )
        )
    db.flush()
    return True


@dataclass(frozen=True, slots=True)
class QueuedVersion:
    """A host version whose room checks wait for their run."""

    version_id: int
    queued_at: datetime


def queued_versions(db: Session) -> list[QueuedVersion]:
    """Host versions with queued room checks, oldest first."""
    rows = db.execute(
        select(UploadCheck.version_id, UploadCheck.queued_at)
        .where(UploadCheck.version_id.is_not(None), UploadCheck.status == CheckStatus.QUEUED)
        .distinct()
        .order_by(UploadCheck.queued_at, UploadCheck.version_id)
    ).all()
    return [QueuedVersion(v, at) for v, at in rows if v is not None]


@dataclass(frozen=True, slots=True)
class RoomCheck:
    """One room check of a host version as its page shows it."""

    name: str
    status: CheckStatus
    findings: tuple[Problem, ...]
    queued_at: datetime
    started_at: datetime | None
    finished_at: datetime | None
    deadline_at: datetime


def stored_problem(found: Mapping[str, Any]) -> Problem:
    """A finding as kept in a check's row, a Problem again."""
    named = str(found["code"])
    return Problem(named, str(found["message"]), path=found.get("path"), line=found.get("line"))


def version_room_checks(conn: Connection, version_id: int) -> list[RoomCheck]:
    """The room checks of a host version (empty for a version registered before they existed)."""
    rows = conn.execute(
        select(
            UploadCheck.name,
            UploadCheck.status,
            UploadCheck.findings,
            UploadCheck.queued_at,
            UploadCheck.started_at,
            UploadCheck.finished_at,
            UploadCheck.deadline_at,
        )
        .where(UploadCheck.version_id == version_id)
        .order_by(UploadCheck.id)
    ).all()
    return [
        RoomCheck(
            name=row.name,
            status=CheckStatus(row.status),
            findings=tuple(stored_problem(f) for f in row.findings),
            queued_at=row.queued_at,
            started_at=row.started_at,
            finished_at=row.finished_at,
            deadline_at=row.deadline_at,
        )
        for row in rows
    ]


def _version_folder(db: Session, version_id: int, now: datetime) -> _Folder | None:
    found = db.execute(select(versions.c.manifest).where(versions.c.id == version_id)).first()
    if found is None:
        return None
    manifest = parse_manifest(found[0]).manifest
    if manifest is None:
        return None
    files = {
        path: bytes(content)
        for path, content in db.execute(
            select(version_files.c.path, blobs.c.content)
            .join(blobs, blobs.c.sha256 == version_files.c.sha256)
            .where(version_files.c.version_id == version_id)
        ).all()
    }
    kept = db.get(VersionCheckInput, version_id)
    everything = read_pack(kept.archive).files if kept is not None else dict(files)
    if "fixtures/context.json" in everything:
        fixture = json.loads(everything["fixtures/context.json"])
    else:
        fixture = {
            "now": format_instant(now),
            "today": today_in_zone(now, manifest.timezone).isoformat(),
        }
    return _Folder(manifest, everything, files, fixture)


def _version_fixture_checks(folder: _Folder, room: RoomRun, tmp: Path) -> dict[str, list[Problem]]:
    """The fixtures, cases and examples checks of a host version; a folder without fixtures
    fails the first two with the rule it breaks (the examples need the fixtures' records)."""
    missing = [
        p
        for p in (
            "fixtures/records.jsonl",
            *(f"fixtures/sources/{s.name}" for s in folder.manifest.sources),
        )
        if p not in folder.files
    ]
    if missing:
        first = missing[0]
        rule = (
            "PLG-FIXTURE-RECORDS-MISSING"
            if first.endswith("records.jsonl")
            else "PLG-FIXTURE-SOURCE-MISSING"
        )
        problem = Problem(
            rule, f"{first} is missing: the fetcher cannot run on fixtures", path=first
        )
        return {"fixtures": [problem], "cases": [problem], "examples": examples_check(folder, [])}
    fixtures, records = fixtures_check(folder, room, tmp)
    return {
        "fixtures": fixtures,
        "cases": cases_check(folder, room, tmp, records),
        "examples": examples_check(folder, records),
    }


def run_version_checks(
    sessions: sessionmaker[Session],
    version_id: int,
    room: RoomRun,
    sources: Sources,
    clock: Callable[[], datetime],
) -> dict[str, CheckStatus]:
    """The room checks of a host version, as an upload's: the fixtures twice, each run case,
    the example days, the real sources once, the listing links (each of those two could not
    run when the service's network was down). A folder without fixtures fails the fixture
    checks with the rule it breaks."""
    subject = UploadCheck.version_id == version_id
    now = clock()
    with sessions() as db:
        queued = db.scalars(
            select(UploadCheck).where(subject, UploadCheck.status == CheckStatus.QUEUED)
        ).all()
        if not queued:
            return {}
        for check in queued:
            check.status = CheckStatus.RUNNING
            check.started_at = now
        wanted = frozenset(check.name for check in queued)
        folder = _version_folder(db, version_id, now)
        db.commit()
    results: dict[str, list[Problem]] = {}
    with tempfile.TemporaryDirectory(prefix="almanac-checks-") as tmp:
        try:
            if folder is None:
                raise ValueError("the version's manifest no longer passes")
            if wanted & FIXTURE_CHECKS:
                results.update(_version_fixture_checks(folder, room, Path(tmp)))
            when = clock()
            today = today_in_zone(when, folder.manifest.timezone)
            network = NetworkJudge(sources, today)
            if "sources" in wanted:
                real, _, tried = sources_check(
                    folder, room, sources, Path(tmp), when, _stored_state(sessions, folder, today)
                )
                results["sources"] = network.judge(real, tried)
            if "links" in wanted:
                results["links"] = network.judge(*links_check(folder, sources, Path(tmp), when))
        except Exception as error:
            log.exception("room checks of host version %s", version_id)
            reason = str(error)[:300] or type(error).__name__
            failure = [Problem("PLG-RUN-FAILED", f"the checks could not run: {reason}")]
            results = {name: results.get(name, failure) for name in wanted}
    with sessions() as db:
        _record_results(db, subject, results, clock())
        db.commit()
        return {c.name: c.status for c in version_room_checks(db.connection(), version_id)}
