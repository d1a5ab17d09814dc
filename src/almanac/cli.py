"""The `almanac` command: `up` starts the service; operators' commands hang off it."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Sequence

from almanac.platform.accounts.commands import add_staff_commands
from almanac.sandbox.cli import add_room_commands

Command = Callable[[argparse.Namespace], int]


def _up(args: argparse.Namespace) -> int:
    from almanac.service import run_service

    return run_service()


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="almanac", description=__doc__)
    commands = parser.add_subparsers(dest="command", required=True, metavar="<command>")
    up = commands.add_parser("up", help="start the service on its embedded default")
    up.set_defaults(handler=_up)
    add_room_commands(commands)
    add_staff_commands(commands)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    handler: Command = args.handler
    return handler(args)


if __name__ == "__main__":
    sys.exit(main())
