"""A second process writing to an embedded SQLite store while the API serves requests from it
(issue 21): `tests/api/test_sqlite_writers.py` starts it with `python -m`.

    python -m tests.api.sqlite_writer ticks <db> <plugin-id> --seconds S --commits N
    python -m tests.api.sqlite_writer example <db> <example-folder> --seconds S --runs N
    python -m tests.api.sqlite_writer batch <db> <plugin-id> --records N --today D --variant V
        [--hold-at STEP --release-file F]

`ticks`: short write transactions in a loop, each a successful run of the (approved) plug-in
written by the store's own `write_run`: one event dated today whose title changes every time,
so every commit changes pages of the file (a run row, the record, its revision).

`example`: real runs of an example plug-in (approved in the store beforehand) through the
service's `RunPipeline`: its sources downloaded by the service's `SourceDownloader` from a TLS
server on loopback in this process (signed by a throwaway CA the downloader alone trusts), the
fetcher in the real locked room, the batch checked and written by `write_run`; at the moment
of the example's `fixtures/context.json`, so its fixture files are the sources of its today.

`batch` (issue 31, backups): one run of a big batch written by `write_run`, `--records` value
records over the plug-in's value series (`value_batch`; a plug-in registered with
`batch_manifest`). With `--hold-at`, the write stops at that step of its transaction (its
`fault` hook, as `tests/store/test_crash.py` uses it), says `{"event": "inside"}` and goes on
to commit once the `--release-file` exists: a test acts while the write is surely in progress.

`ticks` and `example` stop by themselves after `--seconds` or their count, whichever comes
first, or as soon as the `--stop-file` exists (checked between commits). Each mode prints JSON
lines on stdout: `{"event": "ready"}` once set up (before the first write), one line per
commit (`{"event": "commit", "at": <epoch seconds>}`, a run's with its counts), and a last
`{"event": "done", ...}` with the number of commits.
"""

from __future__ import annotations

import argparse
import json
import ssl
import sys
import time
from collections.abc import Callable
from dataclasses import asdict
from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import trustme
from sqlalchemy import Engine

from almanac.platform.contract.manifest import Manifest, parse_manifest
from almanac.platform.contract.records import check_batch
from almanac.platform.lifecycle import RunTrigger
from almanac.platform.store.engine import make_engine
from almanac.platform.store.versions import ApprovedCode, approved_code
from almanac.platform.store.write import RunFacts, WriteResult, write_run
from tests.sandbox.tls_server import Handler, LoopbackDialer, TableResolver, TLSServer

PUBLIC_STAND_IN = "93.184.216.34"
"""The public address the resolver answers for every source host (the downloader refuses
loopback); the dialer carries connections for it to the loopback TLS server."""


def say(event: str, **facts: Any) -> None:
    """One JSON line on stdout, flushed at once: the test reads them while this process runs."""
    print(json.dumps({"event": event, **facts}), flush=True)


def approved(engine: Engine, plugin_id: str) -> tuple[ApprovedCode, Manifest]:
    with engine.connect() as conn:
        code = approved_code(conn, plugin_id)
    parsed = parse_manifest(code.manifest)
    assert parsed.manifest is not None, [p.message for p in parsed.problems]
    return code, parsed.manifest


def batch_manifest(plugin_id: str, series: int = 10) -> dict[str, Any]:
    """A valid manifest for `value_batch`: `series` daily value series of two fields."""
    return {
        "contract": 1,
        "id": plugin_id,
        "name": {"en": "Batch rates"},
        "version": "1.0.0",
        "timezone": "UTC",
        "audience": "public",
        "schedule": "0 6 * * *",
        "backfill": "all",
        "sources": [{"name": "data", "url": "https://batch.example.org/data", "maxBytes": 1024}],
        "series": [
            {
                "key": f"s{n}",
                "kind": "value",
                "cadence": "daily",
                "dates": "observation",
                "name": {"en": f"Series {n}"},
                "fields": ["rate", "high"],
            }
            for n in range(series)
        ],
        "limits": {"seconds": 60, "megabytes": 256},
        "licence": {"holder": "Batch", "terms": "Public domain", "retain": "yes"},
    }


def value_batch(manifest: Manifest, count: int, today: date, variant: int) -> list[dict[str, Any]]:
    """`count` value records over the manifest's value series, a day apart going back from
    `today`; another `variant` gives every record of the same key another value."""
    series = [s for s in manifest.series if s.kind == "value"]
    out = []
    for n in range(count):
        one = series[n % len(series)]
        rate = round(1 + n / 1000 + variant, 4)
        day = today - timedelta(days=n // len(series))
        fields = {name: rate + i for i, name in enumerate(one.fields)}
        out.append({"kind": "value", "series": one.key, "date": day.isoformat(), "fields": fields})
    return out


def one_batch(
    engine: Engine,
    plugin_id: str,
    count: int,
    today: date,
    variant: int,
    hold_at: str | None,
    release_file: Path | None,
) -> int:
    """One run of `count` records; with `hold_at`, held at that step until `release_file`
    exists (at most 10 minutes). Returns 1, the commits made."""
    code, manifest = approved(engine, plugin_id)
    batch = value_batch(manifest, count, today, variant)
    say("ready")

    def hold(step: str) -> None:
        if step != hold_at or release_file is None:
            return
        say("inside", step=step)
        deadline = time.monotonic() + 600
        while not release_file.exists() and time.monotonic() < deadline:
            time.sleep(0.05)

    now = datetime.now(UTC)
    result = write_run(
        engine,
        plugin_id=plugin_id,
        version_id=code.version_id,
        digest=code.digest,
        manifest=manifest,
        run=RunFacts(today=today, trigger=RunTrigger.SCHEDULE, started_at=now, now=now),
        batch=batch,
        fault=hold,
    )
    say("commit", at=time.time(), run_id=result.run_id, counts=asdict(result.counts))
    return 1


def going(deadline: float, stop_file: Path | None) -> bool:
    """Whether to write again: before the deadline and while nobody asked to stop."""
    return time.monotonic() < deadline and not (stop_file and stop_file.exists())


def ticks(engine: Engine, plugin_id: str, seconds: float, most: int, stop_file: Path | None) -> int:
    """Commit up to `most` one-record runs within `seconds`; returns how many committed."""
    code, manifest = approved(engine, plugin_id)
    series = manifest.series[0].key
    say("ready")
    deadline = time.monotonic() + seconds
    commits = 0
    while commits < most and going(deadline, stop_file):
        now = datetime.now(UTC)
        today = now.date()
        line = {
            "kind": "event",
            "series": series,
            "date": today.isoformat(),
            "id": f"tick-{today.isoformat()}",
            "state": "happened",
            "title": f"Tick {commits}",
        }
        checked = check_batch([json.dumps(line)], manifest, today)
        assert checked.ok, checked.reason()
        write_run(
            engine,
            plugin_id=plugin_id,
            version_id=code.version_id,
            digest=code.digest,
            manifest=manifest,
            run=RunFacts(today=today, trigger=RunTrigger.SCHEDULE, started_at=now, now=now),
            batch=checked.records,
        )
        commits += 1
        say("commit", at=time.time())
        # A moment between runs, as a real run worker has: without it this loop would hold the
        # write lock nearly all the time and the test would measure starvation, not failures.
        time.sleep(0.002)
    return commits


def example_runs(
    engine: Engine, folder: Path, seconds: float, most: int, stop_file: Path | None
) -> int:
    """Up to `most` real runs of the example in `folder` within `seconds`; returns how many
    were written."""
    from almanac.orchestration.pipeline import RunPipeline, RunRequestFacts
    from almanac.sandbox.download import SourceDownloader
    from almanac.sandbox.room import LockedRoom

    manifest = json.loads((folder / "plugin.json").read_text())
    context = json.loads((folder / "fixtures" / "context.json").read_text())
    moment = datetime.fromisoformat(context["now"]).astimezone(UTC)
    today = date.fromisoformat(context["today"])
    hosts = sorted({urlsplit(s["url"]).hostname or "" for s in manifest["sources"]})
    ca = trustme.CA()
    with TLSServer(ca, tuple(hosts)) as server:
        for source in manifest["sources"]:
            body = (folder / "fixtures" / "sources" / source["name"]).read_bytes()
            server.routes[urlsplit(source["url"]).path] = _answer(body)
        client = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
        ca.configure_trust(client)
        # Each run a second later than the one before, all within the fixture's today.
        clock = _Ticking(moment)
        downloader = SourceDownloader(
            base_url="https://almanac.test",
            clock=clock,
            resolver=TableResolver({host: [PUBLIC_STAND_IN] for host in hosts}),
            dialer=LoopbackDialer({PUBLIC_STAND_IN: server.port}),
            ssl_context=client,
            deadline_seconds=20,
        )
        pipeline = RunPipeline(
            engine,
            downloader=downloader,
            room=LockedRoom(),
            clock=clock,
            base_url="https://almanac.test",
        )
        say("ready")
        deadline = time.monotonic() + seconds
        runs = 0
        while runs < most and going(deadline, stop_file):
            result: WriteResult = pipeline.run(
                RunRequestFacts(plugin_id=manifest["id"], today=today, trigger=RunTrigger.SCHEDULE)
            )
            runs += 1
            say("commit", at=time.time(), run_id=result.run_id, counts=asdict(result.counts))
    return runs


class _Ticking:
    """The runs' clock: the example's fixture moment, a second later at each reading."""

    def __init__(self, start: datetime) -> None:
        self.moment = start

    def __call__(self) -> datetime:
        self.moment += timedelta(seconds=1)
        return self.moment


def _answer(body: bytes) -> Callable[[Handler], None]:
    def route(handler: Handler) -> None:
        handler.reply(200, body, {"Content-Type": "application/octet-stream"})

    return route


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.api.sqlite_writer")
    modes = parser.add_subparsers(dest="mode", required=True)
    tick = modes.add_parser("ticks")
    tick.add_argument("db", type=Path)
    tick.add_argument("plugin_id")
    tick.add_argument("--seconds", type=float, default=30)
    tick.add_argument("--commits", type=int, default=10_000)
    example = modes.add_parser("example")
    example.add_argument("db", type=Path)
    example.add_argument("folder", type=Path)
    example.add_argument("--seconds", type=float, default=60)
    example.add_argument("--runs", type=int, default=10)
    for mode in (tick, example):
        mode.add_argument("--stop-file", type=Path, help="stop once this file exists")
    one = modes.add_parser("batch")
    one.add_argument("db", type=Path)
    one.add_argument("plugin_id")
    one.add_argument("--records", type=int, required=True)
    one.add_argument("--today", type=date.fromisoformat, required=True)
    one.add_argument("--variant", type=int, default=0)
    one.add_argument("--hold-at", help="a step of write_run's transaction to wait at")
    one.add_argument("--release-file", type=Path, help="go on past --hold-at once this exists")
    args = parser.parse_args(argv)
    engine = make_engine(f"sqlite:///{args.db}")
    try:
        if args.mode == "ticks":
            commits = ticks(engine, args.plugin_id, args.seconds, args.commits, args.stop_file)
        elif args.mode == "batch":
            commits = one_batch(
                engine,
                args.plugin_id,
                args.records,
                args.today,
                args.variant,
                args.hold_at,
                args.release_file,
            )
        else:
            commits = example_runs(engine, args.folder, args.seconds, args.runs, args.stop_file)
    finally:
        engine.dispose()
    say("done", commits=commits)
    return 0


if __name__ == "__main__":
    sys.exit(main())
