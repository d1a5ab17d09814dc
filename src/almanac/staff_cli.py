"""`almanac staff grant|revoke <email> <role>`: the command over the accounts' staff roles; the
first operator is granted from the machine itself."""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Mapping
from datetime import UTC, datetime
from pathlib import Path

from sqlalchemy import Engine, make_url
from sqlalchemy.exc import SQLAlchemyError
from sqlalchemy.orm import Session

from almanac.platform.accounts.identity import find_account
from almanac.platform.accounts.models import StaffRole
from almanac.platform.accounts.staff import grant_staff_role, revoke_staff_role
from almanac.platform.errors import Refusal
from almanac.platform.store.engine import writing


def add_staff_commands(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Register `staff grant` and `staff revoke` on the `almanac` command."""
    staff = commands.add_parser("staff", help="grant or revoke service staff roles")
    moves = staff.add_subparsers(dest="staff_command", required=True, metavar="<move>")
    for name, text in (("grant", "give an account a staff role"), ("revoke", "end a staff role")):
        move = moves.add_parser(name, help=text)
        move.add_argument("email", help="the e-mail address of a signed-up account")
        move.add_argument("role", choices=[r.value for r in StaffRole])
        move.set_defaults(handler=_staff)


START_FIRST = "run `almanac up` once (it creates and migrates the store), then try again"


def _origin(environ: Mapping[str, str]) -> str:
    if environ.get("ALMANAC_DATABASE_URL"):
        return "ALMANAC_DATABASE_URL"
    return "the embedded default; ALMANAC_DATABASE_URL names another store"


def store_name(url: str, environ: Mapping[str, str]) -> str:
    """The store as a message names it: its address without a password, and where that address
    came from (`ALMANAC_DATABASE_URL`, or the embedded default in the data folder)."""
    return f"{make_url(url).render_as_string(hide_password=True)} ({_origin(environ)})"


def missing_sqlite_file(url: str) -> Path | None:
    """The SQLite file `url` names when it does not exist (connecting would create it empty)."""
    parsed = make_url(url)
    if parsed.get_backend_name() != "sqlite" or parsed.database in (None, "", ":memory:"):
        return None
    path = Path(parsed.database)
    return None if path.exists() else path


def _staff(args: argparse.Namespace) -> int:
    from almanac.platform.store.engine import make_engine
    from almanac.settings import load_settings

    url = load_settings().database_url
    missing = missing_sqlite_file(url)
    if missing is not None:
        print(f"almanac: {no_store_yet(missing, os.environ)}", file=sys.stderr)
        return 1
    store = store_name(url, os.environ)
    engine = make_engine(url)
    try:
        return run_staff_command(
            engine, args.staff_command, args.email, args.role, now=datetime.now(UTC), store=store
        )
    finally:
        engine.dispose()


def no_store_yet(path: Path, environ: Mapping[str, str]) -> str:
    """The refusal of a command given an embedded default that was never made."""
    return f"there is no store yet at {path} ({_origin(environ)}): {START_FIRST}"


def database_cause(exc: SQLAlchemyError) -> str:
    """What the database said, on one line, with what to do when its tables are missing."""
    said = str(getattr(exc, "orig", None) or exc).strip().splitlines()
    text = said[0].strip() if said else type(exc).__name__
    original = type(getattr(exc, "orig", None)).__name__
    if text.startswith("no such table") or original == "UndefinedTable":
        return f"{text}; the store has no tables yet: {START_FIRST}"
    return text


def run_staff_command(
    engine: Engine, move: str, email: str, role: str, *, now: datetime, store: str | None = None
) -> int:
    """Grant or revoke a role; prints what was done, or the refusal on stderr (exit 1). A store
    that cannot be used is named (`store`, else the engine's address) with the database's
    own words."""
    try:
        with Session(writing(engine)) as db:
            if move == "grant":
                grant = grant_staff_role(db, email, role, now)
                db.commit()
                print(
                    f"{grant.account.email} is {role} (since {grant.granted_at:%Y-%m-%d %H:%M} UTC)"
                )
            else:
                account = find_account(db, email)
                if account is None:
                    print(f"almanac: no account has the address {email}", file=sys.stderr)
                    return 1
                revoke_staff_role(db, account.id, role, now)
                db.commit()
                print(f"{account.email} is no longer {role}")
    except Refusal as exc:
        print(f"almanac: {exc.detail}", file=sys.stderr)
        return 1
    except SQLAlchemyError as exc:
        where = store or engine.url.render_as_string(hide_password=True)
        print(
            f"almanac: could not use the store at {where}: {database_cause(exc)}", file=sys.stderr
        )
        return 1
    return 0
