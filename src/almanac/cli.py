"""The `almanac` command: `up` starts the service; operators' commands hang off it."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Sequence
from datetime import date
from pathlib import Path

from almanac.sandbox.cli import add_room_commands
from almanac.service import ROLES
from almanac.settings import SettingsError
from almanac.staff_cli import add_staff_commands

Command = Callable[[argparse.Namespace], int]
OUTBOX_MOST = 1000
"""The most messages `almanac mail outbox` lists at once (the outbox's own bound)."""


def _up(args: argparse.Namespace) -> int:
    from dataclasses import replace

    from almanac.service import role_refusal, run_service
    from almanac.settings import load_settings

    settings = load_settings()
    if args.api_workers is not None:
        settings = replace(settings, api_workers=args.api_workers)
    refused = role_refusal(settings, args.only)
    if refused is not None:
        # A usage error, answered as argparse answers one (status 2).
        raise SettingsError(refused)
    if args.migrate and args.only is None:
        raise SettingsError("--migrate goes with --only: `almanac up` always migrates")
    return run_service(settings, args.only, migrate_first=args.migrate)


def _migrate(args: argparse.Namespace) -> int:
    import os

    from sqlalchemy.exc import SQLAlchemyError

    from almanac.service import migrate, say_examples
    from almanac.settings import load_settings
    from almanac.staff_cli import database_cause, store_name

    settings = load_settings()
    where = store_name(settings.database_url, os.environ)
    try:
        registered, approved = migrate(settings)
    except SQLAlchemyError as exc:
        print(
            f"almanac migrate: could not use the store at {where}: {database_cause(exc)}",
            file=sys.stderr,
        )
        return 1
    print(f"the store and Dagster's storage are migrated: {where}")
    say_examples(registered, approved)
    return 0


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


def _mail_outbox(args: argparse.Namespace) -> int:
    """`almanac mail outbox`: the newest messages of the store's outbox (mail kept while no
    SMTP server is set), whatever the store: time, recipient, subject and links."""
    import os

    from sqlalchemy.exc import SQLAlchemyError
    from sqlalchemy.orm import Session

    from almanac.platform.mail import outbox, outbox_entry
    from almanac.platform.store.engine import make_engine
    from almanac.settings import load_settings
    from almanac.staff_cli import (
        database_cause,
        missing_sqlite_file,
        no_store_yet,
        store_name,
    )

    url = load_settings().database_url
    missing = missing_sqlite_file(url)
    if missing is not None:
        print(f"almanac: {no_store_yet(missing, os.environ)}", file=sys.stderr)
        return 1
    engine = make_engine(url)
    try:
        with Session(engine) as db:
            entries = [outbox_entry(message) for message in outbox(db, args.limit)]
    except SQLAlchemyError as exc:
        where = store_name(url, os.environ)
        print(
            f"almanac: could not use the store at {where}: {database_cause(exc)}", file=sys.stderr
        )
        return 1
    finally:
        engine.dispose()
    if not entries:
        print(f"The outbox of {store_name(url, os.environ)} is empty.")
    for entry in entries:
        print(entry)
    return 0


def _limit(text: str) -> int:
    if not text.strip().isdigit() or not 1 <= int(text) <= OUTBOX_MOST:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number from 1 to {OUTBOX_MOST}")
    return int(text)


def _backup(args: argparse.Namespace) -> int:
    import sqlite3
    from datetime import UTC, datetime

    from almanac.backup import BackupError, describe, take_backup
    from almanac.settings import load_settings

    try:
        made = take_backup(load_settings(), args.file, now=datetime.now(UTC), force=args.force)
    except BackupError as exc:
        print(f"almanac backup: {exc}", file=sys.stderr)
        return 2
    except (OSError, sqlite3.Error) as exc:
        print(f"almanac backup: could not write {args.file}: {exc}", file=sys.stderr)
        return 1
    print(f"backup written to {args.file}: {describe(made)}")
    return 0


def _restore(args: argparse.Namespace) -> int:
    import sqlite3

    from almanac.backup import BackupError, describe, restore_backup
    from almanac.settings import load_settings

    settings = load_settings()
    try:
        restored = restore_backup(settings, args.file, force=args.force)
    except BackupError as exc:
        print(f"almanac restore: {exc}", file=sys.stderr)
        return 2
    except (OSError, sqlite3.Error) as exc:
        print(f"almanac restore: could not restore into {settings.home}: {exc}", file=sys.stderr)
        return 1
    print(f"restored into {settings.home}: {describe(restored.manifest)}")
    if restored.store_migrated:
        print("  the store was migrated to this almanac's newest revision")
    if restored.dagster_migrated:
        print("  Dagster's storage was migrated to this almanac's Dagster")
    print("Start the service with `almanac up`.")
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
    up.add_argument(
        "--only",
        choices=ROLES,
        default=None,
        help="start one role on this machine: the API workers, or Dagster (code server, "
        "webserver, daemon and run launcher); needs ALMANAC_DATABASE_URL (PostgreSQL)",
    )
    up.add_argument(
        "--migrate",
        action="store_true",
        help="with --only: run `almanac migrate` before the role starts",
    )
    up.set_defaults(handler=_up)
    migrate = commands.add_parser(
        "migrate",
        help="the store's and Dagster's migrations (and the examples on a fresh store), once, "
        "before the roles start",
    )
    migrate.set_defaults(handler=_migrate)
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
    backup = commands.add_parser(
        "backup",
        help="copy the embedded store and Dagster's storage into one file (the service may run)",
    )
    backup.add_argument("file", type=Path, help="the backup file to write")
    backup.add_argument("--force", action="store_true", help="replace the file if it exists")
    backup.set_defaults(handler=_backup)
    restore = commands.add_parser(
        "restore", help="put a backup into a fresh data folder (ALMANAC_HOME), then migrate"
    )
    restore.add_argument("file", type=Path, help="a file `almanac backup` wrote")
    restore.add_argument(
        "--force",
        action="store_true",
        help="replace the store already in the data folder (stop the service on it first)",
    )
    restore.set_defaults(handler=_restore)
    add_room_commands(commands)
    add_staff_commands(commands)
    mail = commands.add_parser("mail", help="the mail kept while no SMTP server is set")
    mail_moves = mail.add_subparsers(dest="mail_command", required=True, metavar="<move>")
    listing = mail_moves.add_parser(
        "outbox",
        help="the newest messages of the store's outbox (ALMANAC_DATABASE_URL, else the "
        "embedded default), with recipient, subject, time and links",
    )
    listing.add_argument(
        "--limit",
        type=_limit,
        default=20,
        help=f"how many, newest first (20; at most {OUTBOX_MOST})",
    )
    listing.set_defaults(handler=_mail_outbox)
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
