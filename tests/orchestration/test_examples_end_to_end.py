"""End to end on PostgreSQL, for every example in `examples/` (issue 8, "End to end").

For each example: the folder is packed by the real tool (`almanac-plugin.mjs pack`), the archive
is registered at the host over HTTP by an operator and approved by the digest the host page
shows; the minute sensor picks up the approval and the run goes through the real pipeline (the
service's `SourceDownloader` over TLS against a test CA and resolver, the example's fixture files
served under its manifest's URL paths, the locked room, the contract, the store write) at the
moment of the example's `fixtures/context.json`, so the run's today is the fixture's today.
A signed-in reader turns the plug-in on and reads the reader API's days, which must equal the
tool's `preview --json` for the same days, and its raw records, which must equal the fixture's.

Then a later scheduled run (not a backfill) at the moment of the example's later-run case
(`fixtures/runs/<case>/` with `records.jsonl`), with that case's source files served: the run
counts on the host's runs endpoint must be exactly what comparing the case's records with the
fixture's gives ("Stored-record behaviour", "Stored record in a snapshot window"), the raw
records must show the revisions with the old content kept, the moved marks and the new records,
and the reader's days must equal `preview --run <case>`. An example without a later case runs a
second time on the same files at its next scheduled minute, and nothing changes.

The examples share one PostgreSQL database (made for this module), one source server and one
live API; each gets its own Dagster instance, because each lives at its own moment (2016 to
2026) and the sensor's interval bookkeeping cannot go back in time. An example is paused at the
host when its test ends, so it does not run at the next example's moments.
"""

from __future__ import annotations

import hashlib
import json
import re
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta
from functools import cached_property
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit
from zoneinfo import ZoneInfo

import httpx
import pytest
from croniter import croniter
from sqlalchemy import Engine

from almanac.assets.tags import TAG_PLUGIN, TAG_SCHEDULED_FOR, TAG_TRIGGER
from almanac.node import node_binary
from tests.accounts.conftest import passwords  # noqa: F401  (fixture)
from tests.accounts.helpers import PASSWORD
from tests.api.conftest import Api, live_api, live_server  # noqa: F401  (fixture)
from tests.conftest import REPO
from tests.orchestration.conftest import fresh_postgres_engine
from tests.orchestration.harness import Orchestrator, SourceServer, hosts_of

EXAMPLES_DIR = REPO / "examples"
TOOL = REPO / "tool" / "almanac-plugin.mjs"
EXAMPLES = sorted(p.name for p in EXAMPLES_DIR.iterdir() if (p / "plugin.json").is_file())
LATER_CASES: dict[str, str | None] = {
    "bcrd-reference-dollar": "next-day",
    "bls-release-calendar": "release-moved",
    "ecb-reference-rates": "later-file",
    "fed-press-releases": None,
    "uk-bank-holidays": "later-file",
}
"""The later-run case of each example (a fixtures/runs/<case>/ with records.jsonl, not a failure
case with expect.json); None: the example has none."""
SHOWN_BY_CASE: dict[str, set[str]] = {
    "bcrd-reference-dollar": set(),  # the same file a day later: the window restated, unchanged
    "bls-release-calendar": {"new", "revised", "moved"},  # a release moved by the shutdown
    "ecb-reference-rates": {"new"},  # the 90-day file five weeks on
    "uk-bank-holidays": {"new", "revised"},  # new holidays (the coronation); past ones happened
}
"""The counts besides `unchanged` each later case makes non-zero (the exact numbers come from the
files); `missed` is none of them: no stored date in a window is missing from a later file. The
snapshot window's misses are shown by a stale copy of the first file served after the later case
(step 5 of the test)."""
STALE_COPY_SHOWS_MISSES = "ecb-reference-rates"
LANGUAGE = "en"
"""The reader's language; the days up to today are also compared in each other language the
example's names are given in."""
MOST_DAYS = 62
HOST_API = "/api/v1/host/plugins"
READER_API = "/api/v1/reader"

Key = tuple[str, str, str]


# -- the examples, read from their folders ------------------------------------------------------


def moment_of(context: dict[str, Any]) -> datetime:
    return datetime.fromisoformat(context["now"]).astimezone(UTC)


def moment(text: str | None) -> datetime | None:
    return None if text is None else datetime.fromisoformat(text).astimezone(UTC)


def read_jsonl(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


@dataclass(frozen=True)
class Example:
    id: str

    @property
    def folder(self) -> Path:
        return EXAMPLES_DIR / self.id

    @cached_property
    def manifest(self) -> dict[str, Any]:
        return json.loads((self.folder / "plugin.json").read_text())

    @cached_property
    def context(self) -> dict[str, Any]:
        return json.loads((self.folder / "fixtures" / "context.json").read_text())

    @property
    def now(self) -> datetime:
        return moment_of(self.context)

    @property
    def today(self) -> date:
        return date.fromisoformat(self.context["today"])

    @cached_property
    def records(self) -> list[dict[str, Any]]:
        return read_jsonl(self.folder / "fixtures" / "records.jsonl")

    def later_cases(self) -> list[str]:
        runs = self.folder / "fixtures" / "runs"
        return sorted(c.name for c in runs.iterdir() if (c / "records.jsonl").is_file())

    def case_dir(self, case: str) -> Path:
        return self.folder / "fixtures" / "runs" / case

    def case_context(self, case: str) -> dict[str, Any]:
        return json.loads((self.case_dir(case) / "context.json").read_text())

    def case_records(self, case: str) -> list[dict[str, Any]]:
        return read_jsonl(self.case_dir(case) / "records.jsonl")

    def source_files(self, case: str | None = None) -> dict[str, Path]:
        """Source name -> the file served for it: the case's own copy where it has one (the files
        that differ), else the fixture's."""
        files = {}
        for source in self.manifest["sources"]:
            name = source["name"]
            files[name] = self.folder / "fixtures" / "sources" / name
            if case is not None and (self.case_dir(case) / "sources" / name).is_file():
                files[name] = self.case_dir(case) / "sources" / name
        return files

    def source_urls(self) -> dict[str, tuple[str, str]]:
        """Source name -> (host, path) requested, in declared order. The examples' URLs hold no
        `{today}`, `{year}` or `{month}`; if one did, the run's today would fill it here."""
        urls = {}
        for source in self.manifest["sources"]:
            assert not re.search(r"\{(today|year|month)\}", source["url"]), source["url"]
            parts = urlsplit(source["url"])
            assert parts.hostname is not None
            urls[source["name"]] = (parts.hostname, parts.path)
        return urls

    def dates_of(self) -> dict[str, str]:
        return {s["key"]: s["dates"] for s in self.manifest["series"]}

    def languages(self) -> set[str]:
        """The languages of the plug-in's, series' and fields' names."""
        names = [self.manifest["name"]]
        for series in self.manifest["series"]:
            names += [series.get("name", {}), *series.get("fieldNames", {}).values()]
        return {language for name in names for language in name}

    def windows(self) -> dict[str, dict[str, str]]:
        return {s["key"]: s["snapshot"] for s in self.manifest["series"] if s.get("snapshot")}


# -- what the spec says the store makes of a run ------------------------------------------------


def record_key(record: dict[str, Any], dates: dict[str, str]) -> Key:
    """Record keys: value = series + date (+ period when dated by publication); event and item =
    series + date + id."""
    if record["kind"] == "value":
        period = record.get("period", "") if dates[record["series"]] == "publication" else ""
        return (record["series"], record["date"], period)
    return (record["series"], record["date"], record["id"])


def content_of(record: dict[str, Any]) -> tuple[Any, ...]:
    """Content: a value's fields and revises; an event's state, value and title; an item's title
    and link."""
    if record["kind"] == "value":
        return (record["fields"], record.get("revises"))
    if record["kind"] == "event":
        return (record["state"], record.get("value"), record.get("title"))
    return (record["title"], record["url"])


def shifted(day: date, window: str, sign: int) -> date:
    """A Window (`90d`, `2y`) counted from `day`; 29 February becomes 28 February."""
    count = int(window[:-1]) * sign
    if window.endswith("d"):
        return day + timedelta(days=count)
    try:
        return day.replace(year=day.year + count)
    except ValueError:
        return day.replace(year=day.year + count, day=28)


@dataclass
class Expected:
    """A later run over stored records, by the spec: its counts (one list of keys per count),
    and the records as they then stand (a moved event's old date carries `movedTo`)."""

    new: list[Key]
    revised: list[Key]
    unchanged: list[Key]
    moved: dict[Key, str]
    missed: list[Key]
    after: dict[Key, dict[str, Any]]

    def counts(self) -> dict[str, int]:
        return {
            "new": len(self.new),
            "revised": len(self.revised),
            "unchanged": len(self.unchanged),
            "moved": len(self.moved),
            "missed": len(self.missed),
            "withdrawn": 0,  # a record is withdrawn only at its third miss in a row
            "returned": 0,  # nothing was withdrawn before
        }


def expected_run(
    example: Example, stored: list[dict[str, Any]], printed: list[dict[str, Any]], today: date
) -> Expected:
    dates = example.dates_of()
    before = {record_key(r, dates): r for r in stored}
    now = {record_key(r, dates): r for r in printed}
    assert len(now) == len(printed), "two printed lines share a key"
    new = [k for k in now if k not in before]
    revised = [k for k in now if k in before and content_of(now[k]) != content_of(before[k])]
    unchanged = [k for k in now if k in before and content_of(now[k]) == content_of(before[k])]
    event_dates = {(r["series"], r["id"]): r["date"] for r in printed if r["kind"] == "event"}
    moved = {}
    for key, old in before.items():
        if key in now or old["kind"] != "event":
            continue
        new_date = event_dates.get((old["series"], old["id"]))
        if new_date is not None and new_date != old["date"]:
            moved[key] = new_date
    missed = []
    for key, old in before.items():
        window = example.windows().get(old["series"])
        if window is None or key in now or key in moved:
            continue
        first, last = shifted(today, window["back"], -1), shifted(today, window["ahead"], 1)
        if first <= date.fromisoformat(old["date"]) <= last:
            missed.append(key)
    after = {**before, **now}
    for key, new_date in moved.items():
        after[key] = {**before[key], "movedTo": new_date}
    return Expected(new, revised, unchanged, moved, missed, after)


# -- the tool -----------------------------------------------------------------------------------


def tool(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(node_binary()), str(TOOL), *args],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def pack(example: Example, out: Path) -> tuple[bytes, str]:
    """The archive `pack` writes and the digest it prints."""
    done = tool("pack", f"examples/{example.id}", "--out", str(out))
    assert done.returncode == 0, done.stderr
    found = re.search(r"^digest (sha256:[0-9a-f]{64})$", done.stdout, re.MULTILINE)
    assert found, done.stdout
    return out.read_bytes(), found.group(1)


def preview(
    example: Example, first: date, last: date, case: str | None, language: str
) -> dict[str, Any]:
    args = ["preview", f"examples/{example.id}", "--days", f"{first}..{last}", "--json"]
    args += ["--language", language]
    if case is not None:
        args += ["--run", case]
    done = tool(*args)
    assert done.returncode == 0, done.stderr + done.stdout
    return json.loads(done.stdout)


# -- the store, the API and the sources shared by the examples ----------------------------------


@pytest.fixture(scope="module")
def store() -> Iterator[Engine]:
    with fresh_postgres_engine("examples") as engine:
        yield engine


@pytest.fixture(scope="module")
def api(live_server, store: Engine, passwords) -> Iterator[Api]:  # noqa: F811
    with live_api(live_server, store, passwords) as api:
        yield api


@pytest.fixture(scope="module")
def sources() -> Iterator[SourceServer]:
    with SourceServer(hosts_of(*(EXAMPLES_DIR / e for e in EXAMPLES))) as server:
        yield server


def serve(server: SourceServer, example: Example, case: str | None = None) -> dict[str, str]:
    """Serve the example's files (the case's where it has its own); source name -> SHA-256."""
    urls = example.source_urls()
    digests = {}
    for name, path in example.source_files(case).items():
        body = path.read_bytes()
        server.serve(urls[name][1], body)
        digests[name] = hashlib.sha256(body).hexdigest()
    return digests


def requests_since(server: SourceServer, start: int) -> list[tuple[str, str]]:
    """(host, path) of each request the source server answered since the `start`th."""
    recorded = server._server.requests[start:]  # the harness's `requests` keeps paths only
    return [(r.headers["host"].partition(":")[0], r.path) for r in recorded]


# -- HTTP ---------------------------------------------------------------------------------------


def ok(response: httpx.Response, status: int = 200) -> Any:
    assert response.status_code == status, response.text
    return response.json()


def sign_in_again(client: httpx.Client, email: str) -> None:
    """A new session over HTTP at the API's moment (a session lasts 14 days; the later cases
    come up to years after the first run)."""
    client.cookies.clear()
    ok(client.post("/api/v1/auth/signin", json={"email": email, "password": PASSWORD}))


def host_runs(operator: httpx.Client, plugin_id: str) -> list[dict[str, Any]]:
    return ok(operator.get(f"{HOST_API}/{plugin_id}/runs"))


def counts_of(run: dict[str, Any]) -> dict[str, int]:
    names = ("new", "revised", "unchanged", "moved", "missed", "withdrawn", "returned")
    return {name: run[name] for name in names}


def reader_days(
    reader: httpx.Client, plugin_id: str, first: date, last: date, today: date, language: str
) -> dict[str, Any]:
    params = {"from": str(first), "to": str(last), "language": language, "today": str(today)}
    body = ok(reader.get(f"{READER_API}/days", params=params))
    [section] = [p for p in body["plugins"] if p["plugin"] == plugin_id]
    return section


def raw_records(
    reader: httpx.Client, plugin_id: str, first: date, last: date
) -> list[dict[str, Any]]:
    """The stored records dated `first`..`last`, any span, asked 62 days at a time."""
    found = []
    while first <= last:
        end = min(last, first + timedelta(days=MOST_DAYS - 1))
        params = {"from": str(first), "to": str(end)}
        found += ok(reader.get(f"{READER_API}/plugins/{plugin_id}/records", params=params))[
            "records"
        ]
        first = end + timedelta(days=1)
    return found


def span(records: list[dict[str, Any]]) -> tuple[date, date]:
    days = sorted(r["date"] for r in records)
    return date.fromisoformat(days[0]), date.fromisoformat(days[-1])


def assert_days_match(
    example: Example,
    reader: httpx.Client,
    first: date,
    last: date,
    today: date,
    case: str | None = None,
    language: str = LANGUAGE,
) -> list[dict[str, Any]]:
    """The reader API's days equal the tool's preview of the same days (same today, language
    and status); returns them."""
    drawn = preview(example, first, last, case, language)
    assert (drawn["today"], drawn["language"], drawn["status"]) == (str(today), language, "running")
    served = reader_days(reader, example.id, first, last, today, language)
    assert (served["status"], served["notice"]) == ("running", None)
    assert len(served["days"]) == (last - first).days + 1
    for ours, theirs in zip(served["days"], drawn["days"], strict=True):
        assert ours == theirs, f"{example.id} {ours['date']}: the reader API and preview differ"
    return served["days"]


def assert_stored(
    example: Example, reader: httpx.Client, expected: dict[Key, dict[str, Any]]
) -> dict[Key, dict[str, Any]]:
    """The reader's raw records (every date the expected records span) are exactly `expected`;
    returns them by key, as served (with their revisions)."""
    first, last = span(list(expected.values()))
    served = raw_records(reader, example.id, first, last)
    dates = example.dates_of()
    by_key = {record_key(r["record"], dates): r for r in served}
    assert len(by_key) == len(served)
    assert {k: r["record"] for k, r in by_key.items()} == expected
    return by_key


def next_scheduled(example: Example, after: datetime) -> datetime:
    """The first time the manifest's schedule allows after `after`, read in its zone."""
    zone = ZoneInfo(example.manifest["timezone"])
    following = croniter(example.manifest["schedule"], after.astimezone(zone)).get_next(datetime)
    return following.astimezone(UTC)


def fed_next_minute(example: Example) -> datetime:
    """The next time `15 8-18 * * 1-5` allows after the fixture's moment (18:00 in New York on
    Monday 8 August 2016): 18:15 the same day, with the same today."""
    assert example.manifest["schedule"] == "15 8-18 * * 1-5"
    assert example.now == datetime(2016, 8, 8, 22, 0, tzinfo=UTC)
    return example.now + timedelta(minutes=15)


# -- the tests ----------------------------------------------------------------------------------


def test_every_example_is_here_with_its_later_case() -> None:
    assert sorted(LATER_CASES) == EXAMPLES, "an example without an entry in LATER_CASES"
    for example_id, case in LATER_CASES.items():
        example = Example(example_id)
        assert example.later_cases() == ([] if case is None else [case])
        if case is not None:
            assert example.case_context(case)["backfill"] is False
            assert moment_of(example.case_context(case)) > example.now


@pytest.mark.parametrize("example_id", EXAMPLES)
def test_example_end_to_end(
    example_id: str, tmp_path: Path, store: Engine, api: Api, sources: SourceServer
) -> None:
    example = Example(example_id)
    case = LATER_CASES[example_id]
    plugin = example.id

    # 1. Packed by the tool, registered over HTTP by an operator, approved by the page's digest.
    api.clock.moment = example.now
    operator = api.signed_in(f"operator.{plugin}@example.org", operator=True)
    reader = api.signed_in(f"reader.{plugin}@example.org")
    archive, packed_digest = pack(example, tmp_path / f"{plugin}.zip")
    made = ok(
        operator.post(
            f"{HOST_API}/pack", content=archive, headers={"Content-Type": "application/zip"}
        ),
        201,
    )
    assert (made["plugin_id"], made["state"], made["digest"]) == (plugin, "pending", packed_digest)
    page = ok(operator.get(f"{HOST_API}/{plugin}"))
    assert (page["state"], page["current_digest"]) == ("pending", packed_digest)
    approved = ok(operator.post(f"{HOST_API}/{plugin}/approve", json={"digest": packed_digest}))
    assert (approved["state"], approved["approved_digest"]) == ("approved", packed_digest)

    try:
        with Orchestrator.open(
            tmp_path / "orchestrator", store, downloader=sources.downloader, start=example.now
        ) as orch:
            # 2. The minute sensor picks up the approval at the fixture's moment; the run
            # downloads the fixture files over TLS, runs the fetcher in the locked room, writes.
            served = serve(sources, example)
            start = len(sources.requests)
            done = orch.minute(example.now)
            assert [
                (r.tags[TAG_PLUGIN], r.tags[TAG_TRIGGER], r.status.value) for r in done.launched
            ] == [(plugin, "first", "SUCCESS")]
            # The run downloaded each source in declared order; the version's checks (queued
            # at registration, their own job) ran in the same minute and fetched besides.
            got = iter(requests_since(sources, start))
            assert all(url in got for url in example.source_urls().values())
            assert len(done.checks) == 1
            [first] = host_runs(operator, plugin)
            assert (first["outcome"], first["reason"], first["trigger"]) == (
                "success",
                None,
                "first",
            )
            assert (first["today"], first["backfill"]) == (str(example.today), True)
            assert first["digest"] == packed_digest
            assert counts_of(first) == {
                "new": len(example.records),
                "revised": 0,
                "unchanged": 0,
                "moved": 0,
                "missed": 0,
                "withdrawn": 0,
                "returned": 0,
            }
            assert {s["name"]: s["sha256"] for s in first["sources"]} == served

            # 3. A reader turns it on; the days up to the fixture's today (62 at most) and the
            # 62 after it equal the tool's preview; the raw records are the fixture's.
            shown = ok(
                reader.put(
                    f"{READER_API}/preferences",
                    json={"preferences": {f"plugins.{plugin}.shown": True}},
                )
            )
            assert plugin in shown["shown"]
            dates = example.dates_of()
            fixture = {record_key(r, dates): r for r in example.records}
            stored = assert_stored(example, reader, fixture)
            assert all(len(r["revisions"]) == 1 for r in stored.values())
            past = (example.today - timedelta(days=MOST_DAYS - 1), example.today)
            future = (example.today + timedelta(days=1), example.today + timedelta(days=MOST_DAYS))
            days_before = assert_days_match(example, reader, *past, example.today)
            assert any(d["sections"] for d in days_before), "nothing drawn up to today"
            assert_days_match(example, reader, *future, example.today)
            for language in example.languages() - {LANGUAGE}:
                assert_days_match(example, reader, *past, example.today, language=language)

            if case is None:
                # 4. No later case: the next scheduled minute on the same files changes nothing.
                at = fed_next_minute(example)
                assert orch.minute(at - timedelta(minutes=1)).launched == []
                start = len(sources.requests)
                done = orch.minute(at)
                [run] = done.launched
                assert (run.tags[TAG_TRIGGER], run.status.value) == ("schedule", "SUCCESS")
                assert datetime.fromisoformat(run.tags[TAG_SCHEDULED_FOR]) == at
                assert requests_since(sources, start) == list(example.source_urls().values())
                second, _ = host_runs(operator, plugin)
                assert (second["outcome"], second["trigger"], second["backfill"]) == (
                    "success",
                    "schedule",
                    False,
                )
                assert second["today"] == str(example.today)
                assert counts_of(second) == {
                    **counts_of(first),
                    "new": 0,
                    "unchanged": len(example.records),
                }
                again = assert_stored(example, reader, fixture)
                assert again == stored, "a record changed (or gained a revision)"
                api.clock.moment = at
                assert assert_days_match(example, reader, *past, example.today) == days_before
                return

            # 4. The later case: its files served, a scheduled run at its moment.
            later = example.case_context(case)
            at, today = moment_of(later), date.fromisoformat(later["today"])
            expected = expected_run(example, example.records, example.case_records(case), today)
            served = serve(sources, example, case)
            start = len(sources.requests)
            api.clock.moment = at
            sign_in_again(operator, f"operator.{plugin}@example.org")
            sign_in_again(reader, f"reader.{plugin}@example.org")
            done = orch.minute(at)
            [run] = done.launched
            assert (run.tags[TAG_PLUGIN], run.tags[TAG_TRIGGER], run.status.value) == (
                plugin,
                "schedule",
                "SUCCESS",
            )
            # Due by its schedule: the slot of the case's today that had passed by its moment
            # (missed slots since the first run run once, as this one).
            scheduled = datetime.fromisoformat(run.tags[TAG_SCHEDULED_FOR])
            assert scheduled <= at
            assert scheduled.astimezone(ZoneInfo(example.manifest["timezone"])).date() == today
            assert requests_since(sources, start) == list(example.source_urls().values())
            second, _ = host_runs(operator, plugin)
            assert (second["outcome"], second["reason"], second["trigger"]) == (
                "success",
                None,
                "schedule",
            )
            assert (second["today"], second["backfill"]) == (str(today), False)
            assert {s["name"]: s["sha256"] for s in second["sources"]} == served
            assert counts_of(second) == expected.counts()
            nonzero = {k for k, n in expected.counts().items() if n and k != "unchanged"}
            assert nonzero == SHOWN_BY_CASE[plugin]

            after = assert_stored(example, reader, expected.after)
            for key in expected.revised:
                history = after[key]["revisions"]
                assert [h["record"] for h in history] == [fixture[key], expected.after[key]]
                assert [h["withdrawn"] for h in history] == [False, False]
                assert [moment(h["valid_from"]) for h in history] == [example.now, at]
                assert [moment(h["valid_to"]) for h in history] == [at, None]
            for key, new_date in expected.moved.items():
                history = after[key]["revisions"]
                assert after[key]["record"]["movedTo"] == new_date
                assert [h["record"] for h in history] == [fixture[key], expected.after[key]]
                assert [moment(h["valid_to"]) for h in history] == [at, None]
            for key in expected.new + expected.unchanged:
                assert len(after[key]["revisions"]) == 1

            # The reader's days after the later run equal the tool's preview of that run.
            past = (today - timedelta(days=MOST_DAYS - 1), today)
            future = (today + timedelta(days=1), today + timedelta(days=MOST_DAYS))
            assert_days_match(example, reader, *past, today, case)
            assert_days_match(example, reader, *future, today, case)

            if plugin == STALE_COPY_SHOWS_MISSES:
                # 5. A snapshot window restated by a stale copy: at the next scheduled time the
                # source serves the first (older) file again. Every stored date inside the
                # window that it no longer holds gets its first miss; nothing is withdrawn.
                # (The ECB fetcher prints the same lines for a file whatever today is, so the
                # first file's records are what it prints again.)
                stale_at = next_scheduled(example, at)
                stale_today = stale_at.astimezone(ZoneInfo(example.manifest["timezone"])).date()
                stale = expected_run(
                    example, list(expected.after.values()), example.records, stale_today
                )
                assert stale.missed, "the window holds dates only the later file had"
                serve(sources, example)
                api.clock.moment = stale_at
                [run] = orch.minute(stale_at).launched
                assert (run.tags[TAG_TRIGGER], run.status.value) == ("schedule", "SUCCESS")
                third = host_runs(operator, plugin)[0]
                assert (third["outcome"], third["today"]) == ("success", str(stale_today))
                assert counts_of(third) == stale.counts()
                # A missed record is still shown: only the third miss in a row withdraws it.
                sign_in_again(reader, f"reader.{plugin}@example.org")
                kept = assert_stored(example, reader, stale.after)
                for key in stale.missed:
                    assert len(kept[key]["revisions"]) == 1
    finally:
        # Out of the way of the next example's moments (a paused plug-in never runs).
        operator.post(f"{HOST_API}/{plugin}/pause")
