"""`almanac room run <plugin-folder> --sources <dir> --context <file>`: run one fetcher in the
locked room by hand, as the service would, and print what it produced.

Records (the fetcher's stdout) go to stdout unchanged; a JSON summary of the run (exit code,
reason, limit, Node version, digest, layers, durations) goes to stderr. Exit status: 0 for a
successful run, 1 for a failed run, 2 when the room refuses to run.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from almanac.sandbox.limits import RoomLimits


def add_room_commands(commands: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    """Register `room` and its `run` subcommand on the `almanac` parser."""
    room = commands.add_parser("room", help="the locked room that runs fetchers")
    actions = room.add_subparsers(dest="room_command", required=True, metavar="<action>")
    run = actions.add_parser("run", help="run a plug-in's fetcher once in the locked room")
    run.add_argument("plugin", type=Path, help="the plug-in folder (its digest-covered files)")
    run.add_argument(
        "--sources", type=Path, help="a folder whose files are the downloads, by source name"
    )
    run.add_argument("--context", type=Path, help="a run-context JSON file for stdin")
    run.add_argument("--seconds", type=int, help="lower the time limit for this run")
    run.add_argument("--megabytes", type=int, help="lower the memory limit for this run")
    run.set_defaults(handler=run_command)


def run_command(args: argparse.Namespace) -> int:
    from almanac.platform.contract.digest import folder_digest
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

    manifest: dict = {}
    if "plugin.json" in plugin_files:
        try:
            manifest = json.loads(plugin_files["plugin.json"])
        except ValueError as exc:
            return refuse(f"plugin.json is not JSON: {exc}")
    try:
        limits = RoomLimits.for_manifest(manifest if isinstance(manifest, dict) else {})
        if args.seconds is not None or args.megabytes is not None:
            limits = RoomLimits(
                seconds=min(limits.seconds, args.seconds or limits.seconds),
                megabytes=min(limits.megabytes, args.megabytes or limits.megabytes),
            )
    except ValueError as exc:
        return refuse(str(exc))

    sources: dict[str, Path] = {}
    if args.sources is not None:
        if not args.sources.is_dir():
            return refuse(f"--sources {args.sources} is not a folder")
        sources = {entry.name: entry for entry in sorted(args.sources.iterdir())}
    context: dict = {"contract": 1, "plugin": manifest.get("id", folder.name)}
    if args.context is not None:
        try:
            context = json.loads(args.context.read_text())
        except (OSError, ValueError) as exc:
            return refuse(f"--context {args.context}: {exc}")
        if not isinstance(context, dict):
            return refuse("--context must hold one JSON object")

    try:
        result = LockedRoom().run(plugin_files, sources, context, limits)
    except RoomRefused as exc:
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
    }
    print(json.dumps(summary, indent=2), file=sys.stderr)
    return 0 if result.ok else 1
