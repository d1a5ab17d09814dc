"""The `almanac` command: `up` starts the service; operators' commands hang off it."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Sequence
from datetime import date

from almanac.sandbox.cli import add_room_commands
from almanac.settings import SettingsError
from almanac.staff_cli import add_staff_commands

Command = Callable[[argparse.Namespace], int]


def _up(args: argparse.Namespace) -> int:
    from dataclasses import replace

    from almanac.service import run_service
    from almanac.settings import load_settings

    settings = load_settings()
    if args.api_workers is not None:
        settings = replace(settings, api_workers=args.api_workers)
    return run_service(settings)


def _deploy(args: argparse.Namespace) -> int:
    import dagster as dg

    from almanac.assets.control import deploy
    from almanac.settings import load_settings

    settings = load_settings()
    with dg.DagsterInstance.from_config(str(settings.dagster_home)) as instance:
        try:
            deploy(instance, settings, wait_seconds=args.wait)
        except TimeoutError as exc:
            print(f"almanac deploy: {exc}; try again later", file=sys.stderr)
            return 1
    return 0


def _backfill(args: argparse.Namespace) -> int:
    import dagster as dg

    from almanac.assets.control import launch_backfill
    from almanac.definitions import build_definitions
    from almanac.settings import load_settings

    settings = load_settings()
    with dg.DagsterInstance.from_config(str(settings.dagster_home)) as instance:
        try:
            backfill_id = launch_backfill(
                instance, build_definitions(settings=settings), args.plugin, args.first, args.last
            )
        except (LookupError, ValueError) as exc:
            print(f"almanac backfill: {exc}", file=sys.stderr)
            return 2
    print(f"backfill {backfill_id} launched: {args.plugin} {args.first} to {args.last}")
    return 0


def _day(text: str) -> date:
    try:
        return date.fromisoformat(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a date (YYYY-MM-DD)") from None


def _workers(text: str) -> int:
    from almanac.settings import parse_api_workers

    try:
        return parse_api_workers(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc).removeprefix("ALMANAC_API_WORKERS: ")) from None


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="almanac", description=__doc__)
    commands = parser.add_subparsers(dest="command", required=True, metavar="<command>")
    up = commands.add_parser(
        "up", help="start the service (its embedded default, or ALMANAC_DATABASE_URL)"
    )
    up.add_argument(
        "--api-workers",
        type=_workers,
        default=None,
        help="uvicorn worker processes for the API (default ALMANAC_API_WORKERS, else 1)",
    )
    up.set_defaults(handler=_up)
    deploy = commands.add_parser(
        "deploy", help="hold runs, wait for the running one, migrate the store, let runs go"
    )
    deploy.add_argument(
        "--wait", type=float, default=3600.0, help="seconds to wait for the running run"
    )
    deploy.set_defaults(handler=_deploy)
    backfill = commands.add_parser("backfill", help="re-run a plug-in for past days")
    backfill.add_argument("plugin", help="the plug-in id")
    backfill.add_argument("--from", dest="first", type=_day, required=True, help="first day")
    backfill.add_argument("--to", dest="last", type=_day, required=True, help="last day")
    backfill.set_defaults(handler=_backfill)
    add_room_commands(commands)
    add_staff_commands(commands)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    handler: Command = args.handler
    try:
        return handler(args)
    except SettingsError as error:
        # As argparse answers a bad argument: the setting named, usage status 2, no traceback.
        parser.error(str(error))


if __name__ == "__main__":
    sys.exit(main())
