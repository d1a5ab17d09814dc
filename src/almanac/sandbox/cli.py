"""`almanac room run <plugin-folder> --sources <dir> --context <file>`: run one fetcher in the
locked room by hand, as the service would, and print what it produced.

The fetcher reads the full run context ("Run context" table) on stdin, built from the
manifest the way a scheduled run builds it and `check` builds it for the fixtures: from a
`fixtures/context.json`-shaped file (`now`, `today`, optionally `backfill`, `backfillFrom`,
`series`) and, for a later run, the records stored before it (`--records`). A file holding a
full run context (it has `sources`) is passed through only when it is valid for this plug-in.
Anything else is refused with the rule it breaks, and nothing runs.

Records (the fetcher's stdout) go to stdout unchanged; a JSON summary of the run (exit code,
reason, limit, Node version, digest, layers, durations, the context given) goes to stderr.
Exit status: 0 for a successful run, 1 for a failed run, 2 when the room refuses to run.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from datetime import UTC, date, datetime
from pathlib import Path
from typing import Any

from almanac.platform.contract.manifest import Manifest
from almanac.platform.contract.problems import Problem
from almanac.sandbox.limits import RoomLimits

RUN_HELP = """\
Run a plug-in's fetcher once in the locked room, as a scheduled run would.

The fetcher gets the full run context on stdin (contract, plugin, now, today, backfill,
backfillFrom, sources, series), built from the plug-in's manifest:

  --context FILE   a fixtures/context.json-shaped object: now (an ISO instant) and today (its
                   date in the manifest zone), optionally backfill, backfillFrom and series
                   (some series' {last, count}). Checked as check checks fixtures/context.json
                   (PLG-FIXTURE-CONTEXT-INVALID): a plugin other than this id is refused.
                   A file that holds sources is taken as a full run context instead: it is
                   used as it is only when valid for this plug-in (every key of the Run
                   context table, sources exactly /sources/<name> of each declared source,
                   every declared series; PLG-CONTEXT-INVALID, PLG-RECORD-TODAY).
                   Without --context the run is at the present moment.
  --records FILE   the records stored before this run, one JSON object a line (for a
                   fixtures/runs/<case>, the fixture's fixtures/records.jsonl): each series'
                   last (newest date on or before today) and count come from them, as check
                   does for a case. Series the context file names keep its state. Without
                   --records nothing is stored before the run: backfill is true unless the
                   context file sets backfill or names a series with records.
  --sources DIR    the downloads, one file per declared source named by it. Give it more than
                   once to lay a later folder over an earlier one (fixtures/sources, then a
                   case's sources). Every declared source needs a file; others are left out.

A context, records file or sources folder that breaks a rule is refused (exit 2) with the rule
and nothing runs. Records go to stdout; a JSON summary (exit code, reason, digest, Node version,
layers, limits, the context given) to stderr. Exit 0 for a successful run, 1 for a failed run.
"""


class Refused(Exception):
    """The room does not run: the message names the rule the input breaks."""


def add_room_commands(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Register `room` and its `run` subcommand on the `almanac` parser."""
    room = commands.add_parser("room", help="the locked room that runs fetchers")
    actions = room.add_subparsers(dest="room_command", required=True, metavar="<action>")
    run = actions.add_parser(
        "run",
        help="run a plug-in's fetcher once in the locked room",
        description=RUN_HELP,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    run.add_argument("plugin", type=Path, help="the plug-in folder (its digest-covered files)")
    run.add_argument(
        "--sources",
        type=Path,
        metavar="DIR",
        action="append",
        default=[],
        help="a folder whose files are the downloads, by source name (repeatable: later wins)",
    )
    run.add_argument(
        "--context",
        type=Path,
        metavar="FILE",
        help="fixtures/context.json-shaped file (now, today, ...), or a full valid run context",
    )
    run.add_argument(
        "--records",
        type=Path,
        metavar="FILE",
        help="records stored before this run (JSON lines): the series state of a later run",
    )
    run.add_argument("--seconds", type=int, help="lower the time limit for this run")
    run.add_argument("--megabytes", type=int, help="lower the memory limit for this run")
    run.set_defaults(handler=run_command)


def _rules(what: str, problems: Sequence[Problem]) -> Refused:
    lines = "\n".join(f"  {p.code} {p.message}" for p in problems)
    return Refused(f"{what} breaks the run context rules:\n{lines}")


def _read_json(path: Path, option: str) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise Refused(f"{option} {path}: {exc}") from None


def read_records(path: Path) -> list[dict[str, Any]]:
    """The records of a JSON-lines file (`fixtures/records.jsonl`): one object a line, blank
    lines skipped; Refused naming the first line that is not a JSON object."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, ValueError) as exc:
        raise Refused(f"--records {path}: {exc}") from None
    records = []
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except ValueError as exc:
            raise Refused(f"--records {path} line {number} is not JSON: {exc}") from None
        if not isinstance(record, dict):
            raise Refused(f"--records {path} line {number} is not a JSON object")
        records.append(record)
    return records


def build_context(
    manifest: Manifest,
    *,
    context_file: Path | None,
    records_file: Path | None,
    now: datetime,
) -> dict[str, Any]:
    """The full run context for this run ("Run context" table), or Refused with the rule.

    A file with `sources` is a full run context, taken only when `check_run_context` finds
    nothing; any other file follows the `fixtures/context.json` rules and is built on like
    `check` builds a fixture run, with the state of `records_file` as a case's earlier records.
    Without a file the run is at `now` (the caller's clock).
    """
    from almanac.platform.contract.context import (
        check_fixture_context,
        check_run_context,
        format_instant,
        run_context_from_fixture,
        series_state_of_records,
        today_in_zone,
    )

    given: Any = None
    if context_file is not None:
        given = _read_json(context_file, "--context")
        if isinstance(given, dict) and "sources" in given:
            problems = check_run_context(given, manifest)
            if problems:
                raise _rules(f"--context {context_file} (a full run context)", problems)
            if records_file is not None:
                raise Refused(
                    "--records: a full run context carries its own series state; give a "
                    "fixtures/context.json-shaped file (without sources) to build on records"
                )
            return dict(given)
        problems = check_fixture_context(given, manifest)
        if problems:
            raise _rules(f"--context {context_file}", problems)
    else:
        stamp = format_instant(now)
        given = {"now": stamp, "today": today_in_zone(now, manifest.timezone).isoformat()}
    state = None
    if records_file is not None:
        today = date.fromisoformat(given["today"])
        try:
            state = series_state_of_records(manifest, read_records(records_file), today)
        except ValueError as exc:
            raise Refused(f"--records {records_file}: {exc}") from None
    built = run_context_from_fixture(given, manifest, series_state=state)
    # The built context passes the check a scheduled run's context would, except for a
    # backfillFrom the fixture set by hand, which check passes through as well.
    problems = [
        p
        for p in check_run_context(built, manifest)
        if not (p.path == "backfillFrom" and "backfillFrom" in given)
    ]
    if problems:
        raise _rules("the run context built from --context", problems)
    return built


def gather_sources(manifest: Manifest, folders: Sequence[Path]) -> dict[str, Path]:
    """Each declared source's file, from the folders in order (a later folder's file wins), as
    a scheduled run hands the room exactly its declared downloads; Refused when one is
    missing."""
    found: dict[str, Path] = {}
    for folder in folders:
        if not folder.is_dir():
            raise Refused(f"--sources {folder} is not a folder")
        for source in manifest.sources:
            candidate = folder / source.name
            if candidate.is_symlink() or candidate.exists():
                found[source.name] = candidate
    missing = [s.name for s in manifest.sources if s.name not in found]
    if missing:
        where = ", ".join(str(f) for f in folders) or "no --sources folder"
        raise Refused(f"no file for declared source(s) {', '.join(missing)} in {where}")
    return found


def run_command(args: argparse.Namespace) -> int:
    """Run the fetcher once in the locked room with the full run context; see RUN_HELP."""
    from almanac.platform.contract.digest import folder_digest
    from almanac.platform.contract.manifest import parse_manifest
    from almanac.sandbox.room import LockedRoom, RoomRefused

    def refuse(message: str) -> int:
        print(f"almanac room run: {message}", file=sys.stderr)
        return 2

    folder: Path = args.plugin
    if not (folder / "fetch.mjs").is_file():
        return refuse(f"{folder} has no fetch.mjs")
    digest = folder_digest(folder)
    if digest.digest is None:
        return refuse("the plug-in folder holds a symbolic link; it has no digest")
    plugin_files = {path: (folder / path).read_bytes() for path in digest.files}
    if "plugin.json" not in plugin_files:
        return refuse(f"{folder} has no plugin.json; the run context is built from it")
    parsed = parse_manifest(plugin_files["plugin.json"])
    if parsed.manifest is None:
        return refuse(str(_rules("plugin.json", parsed.problems)))
    manifest = parsed.manifest
    try:
        limits = RoomLimits.for_manifest(manifest)
        if args.seconds is not None or args.megabytes is not None:
            limits = RoomLimits(
                seconds=min(limits.seconds, args.seconds or limits.seconds),
                megabytes=min(limits.megabytes, args.megabytes or limits.megabytes),
            )
    except ValueError as exc:
        return refuse(str(exc))

    try:
        sources = gather_sources(manifest, args.sources)
        # The one clock read of the command: the moment of a run given no context file.
        context = build_context(
            manifest,
            context_file=args.context,
            records_file=args.records,
            now=datetime.now(UTC),
        )
        result = LockedRoom().run(plugin_files, sources, context, limits)
    except (Refused, RoomRefused) as exc:
        return refuse(str(exc))
    sys.stdout.buffer.write(result.stdout)
    sys.stdout.flush()
    summary = {
        "ok": result.ok,
        "exit_code": result.exit_code,
        "reason": result.reason,
        "killed_by": result.killed_by,
        "records": len(result.lines()),
        "digest": digest.digest,
        "node_version": result.node_version,
        "limits": {"seconds": limits.seconds, "megabytes": limits.megabytes},
        "layers": dict(result.layers),
        "seconds": round(result.wall_seconds, 3),
        "setup_seconds": round(result.setup_seconds, 3),
        "context": context,
    }
    print(json.dumps(summary, indent=2), file=sys.stderr)
    return 0 if result.ok else 1
