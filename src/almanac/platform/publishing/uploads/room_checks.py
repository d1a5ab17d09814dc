"""The five locked-room checks of a version, one function each, and what they need: the
fixtures run twice (`fixtures_check`), each run case (`cases_check`), the example days
(`examples_check`), the real sources once (`sources_check`) and each listing link
(`links_check`); the ports they run through (the locked room, `RoomRun`; the safe
downloader, `Sources`) and the judge that tells the service's own network from the
publisher's URLs (`NetworkJudge`).

Pure of the store: the pipeline (`check_pipeline`) reads a version's files into a
`RoomFolder`, runs these and records what they found; the queue (`check_queue`) holds the
checks' rows.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from datetime import date, datetime
from pathlib import Path
from typing import Any, Protocol

from almanac.platform.contract.context import (
    build_run_context,
    run_context_from_fixture,
    series_state_of_records,
    today_in_zone,
)
from almanac.platform.contract.manifest import Manifest
from almanac.platform.contract.problems import Problem
from almanac.platform.contract.records import check_batch
from almanac.platform.contract.review import review_example_problems
from almanac.platform.publishing.models import CheckStatus
from almanac.platform.publishing.uploads.network import (
    HostFailure,
    Probe,
    every_host_failed_a_network_way,
    service_network_is_down,
)

ROOM_CHECKS = ("fixtures", "cases", "examples", "sources", "links")
"""The locked-room checks: the fixtures run twice (identical, equal to fixtures/records.jsonl),
each fixtures/runs/<case>, the example days of review.json and the listing in the fixtures'
output, the real sources once (the batch checked like a scheduled run's), each listing link."""
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


def _first_difference(got: str, want: str) -> tuple[int, str, str]:
    got_lines, want_lines = got.split("\n"), want.split("\n")
    for number, (a, b) in enumerate(zip(got_lines, want_lines, strict=False), start=1):
        if a != b:
            return number, a[:120], b[:120]
    number = min(len(got_lines), len(want_lines)) + 1
    return number, "(end)" if len(got_lines) < number else got_lines[number - 1][:120], "(end)"


def _mismatch(folder: RoomFolder, path: str, printed: bytes) -> list[Problem]:
    """PLG-FIXTURE-MISMATCH when what the fetcher printed is not the file at `path` byte for
    byte, at the first differing line."""
    expected = folder.files.get(path, b"")
    if printed == expected:
        return []
    line, got, want = _first_difference(
        printed.decode("utf-8", "replace"), expected.decode("utf-8", "replace")
    )
    return [
        Problem(
            "PLG-FIXTURE-MISMATCH",
            f"{path} line {line} differs: the fetcher printed {got}, the file has {want}",
            path=path,
            line=line,
        )
    ]


def _run_problems(result: RoomOutcome, label: str) -> list[Problem]:
    if result.killed_by is not None:
        reason = result.reason or "stopped at its limits"
        return [Problem("PLG-RUN-KILLED", f"{label}: {reason}")]
    if result.exit_code != 0:
        reason = result.reason or f"exit {result.exit_code}"
        return [Problem("PLG-RUN-FAILED", f"{label} exited {result.exit_code}: {reason}")]
    return []


@dataclass
class RoomFolder:
    """What the room checks read of a version: its manifest, every file of its pack, the
    digest-covered files the fetcher runs with, and the fixture context (fixtures/context.json,
    or the version's own moment)."""

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


def fixture_checks(
    folder: RoomFolder, room: RoomRun, tmp: Path
) -> Iterator[tuple[str, list[Problem]]]:
    """The fixtures, cases and examples checks, each (name, findings) as soon as it ends, so
    that a later one failing to run leaves the earlier findings standing. A folder without
    fixtures (a host version's: an upload without them is refused at upload) fails the first
    two with the rule it breaks (the examples need the fixtures' records)."""
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
        yield "fixtures", [problem]
        yield "cases", [problem]
        yield "examples", examples_check(folder, [])
        return
    fixtures, records = fixtures_check(folder, room, tmp)
    yield "fixtures", fixtures
    yield "cases", cases_check(folder, room, tmp, records)
    yield "examples", examples_check(folder, records)


def fixtures_check(
    folder: RoomFolder, room: RoomRun, tmp: Path
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
    problems.extend(_mismatch(folder, "fixtures/records.jsonl", first.stdout))
    return problems, batch.records


def _case_context(
    folder: RoomFolder, case: str, base: Sequence[Mapping[str, Any]]
) -> dict[str, Any]:
    given = folder.files.get(f"fixtures/runs/{case}/context.json")
    fixture = json.loads(given) if given is not None else folder.fixture
    state = series_state_of_records(folder.manifest, base, date.fromisoformat(fixture["today"]))
    return run_context_from_fixture(fixture, folder.manifest, series_state=state, backfill=False)


def cases_check(
    folder: RoomFolder, room: RoomRun, tmp: Path, base: Sequence[Mapping[str, Any]]
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
        problems.extend(_mismatch(folder, f"{rel}/records.jsonl", result.stdout))
    return problems


def examples_check(folder: RoomFolder, records: Sequence[Mapping[str, Any]]) -> list[Problem]:
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
    folder: RoomFolder,
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
    folder: RoomFolder, sources: Sources, tmp: Path, now: datetime
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
