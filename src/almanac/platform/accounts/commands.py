"""`almanac staff grant <email> <role>`: the first operator is granted from the machine itself."""

from __future__ import annotations

import argparse
import sys
from datetime import UTC, datetime

from sqlalchemy.exc import SQLAlchemyError
from sqlalchemy.orm import Session

from almanac.platform.accounts.errors import AccountError
from almanac.platform.accounts.identity import find_account
from almanac.platform.accounts.models import StaffRole
from almanac.platform.accounts.staff import grant_staff_role, revoke_staff_role


def add_staff_commands(commands: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    """Register `staff grant` and `staff revoke` on the `almanac` command."""
    staff = commands.add_parser("staff", help="grant or revoke service staff roles")
    moves = staff.add_subparsers(dest="staff_command", required=True, metavar="<move>")
    for name, text in (("grant", "give an account a staff role"), ("revoke", "end a staff role")):
        move = moves.add_parser(name, help=text)
        move.add_argument("email", help="the e-mail address of a signed-up account")
        move.add_argument("role", choices=[r.value for r in StaffRole])
        move.set_defaults(handler=_staff)


def _staff(args: argparse.Namespace) -> int:
    from almanac.platform.store.engine import make_engine
    from almanac.settings import load_settings

    engine = make_engine(load_settings().database_url)
    try:
        return run_staff_command(
            engine, args.staff_command, args.email, args.role, now=datetime.now(UTC)
        )
    finally:
        engine.dispose()


def run_staff_command(engine, move: str, email: str, role: str, *, now: datetime) -> int:  # type: ignore[no-untyped-def]
    """Grant or revoke a role; prints what was done, or the refusal on stderr (exit 1)."""
    try:
        with Session(engine) as db:
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
    except AccountError as exc:
        print(f"almanac: {exc.detail}", file=sys.stderr)
        return 1
    except SQLAlchemyError as exc:
        print(
            f"almanac: the database refused: {type(exc).__name__}",
            file=sys.stderr,
        )
        return 1
    return 0
