"""Dependencies: the request's database session, its moment, and who is asking."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import datetime
from typing import Annotated, Literal

from fastapi import Depends, Request
from sqlalchemy.orm import Session

from almanac.api.context import ApiContext
from almanac.platform import accounts
from almanac.platform.accounts import Account, StaffRole

SESSION_COOKIE = "almanac_session"


def get_context(request: Request) -> ApiContext:
    context: ApiContext = request.app.state.almanac
    return context


Context = Annotated[ApiContext, Depends(get_context)]


READ_ONLY_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})


def may_write(request: Request) -> bool:
    """Whether the request's transaction may write: any method but GET, HEAD and OPTIONS."""
    return request.method not in READ_ONLY_METHODS


def get_db(request: Request, ctx: Context) -> Iterator[Session]:
    """One database session per request; routes commit what they change, the rest is rolled
    back when the request ends. A request that may write takes the store's write lock when its
    transaction begins (see `almanac.platform.store.engine`), so another process writing makes
    it wait, never fail; one that only reads never waits."""
    sessions = ctx.write_sessions if may_write(request) else ctx.sessions
    with sessions() as db:
        yield db


def get_read_db(ctx: Context) -> Iterator[Session]:
    """A read-only session beside the request's own, for slow work that must hold no write
    lock (the password check of a sign-in)."""
    with ctx.sessions() as db:
        yield db


def get_write_db(ctx: Context) -> Iterator[Session]:
    """The request's session for a GET that writes (the mailed verification link)."""
    with ctx.write_sessions() as db:
        yield db


Db = Annotated[Session, Depends(get_db)]
ReadDb = Annotated[Session, Depends(get_read_db)]
WriteDb = Annotated[Session, Depends(get_write_db)]


def get_now(ctx: Context) -> datetime:
    return ctx.now()


Now = Annotated[datetime, Depends(get_now)]


@dataclass(frozen=True, slots=True)
class Principal:
    """Who is asking, and with what: a web session cookie or a bearer token."""

    account: Account
    via: Literal["session", "token"]
    token_id: int | None = None


def current_principal(request: Request, ctx: Context, db: Db, now: Now) -> Principal:
    """The account of the `Authorization: Bearer` token, else of the session cookie, else
    AUTH-REQUIRED. A token's use is kept at once, even when the request is refused later."""
    header = request.headers.get("authorization")
    if header is not None:
        scheme, _, secret = header.partition(" ")
        if scheme.lower() != "bearer" or not secret.strip():
            raise accounts.NotAuthenticated("send the token as Authorization: Bearer <token>")
        account, token = accounts.token_account(db, secret.strip())
        if may_write(request):
            accounts.record_token_use(db, token.id, now)
            db.commit()
        else:
            # A reading request's session holds no write lock and must not take one for its
            # whole length: the use is kept in a short transaction of its own.
            with ctx.write_sessions() as use:
                accounts.record_token_use(use, token.id, now)
                use.commit()
        return Principal(account=account, via="token", token_id=token.id)
    cookie = request.cookies.get(SESSION_COOKIE)
    if cookie:
        return Principal(account=accounts.session_account(db, cookie, now), via="session")
    raise accounts.NotAuthenticated("sign in, or send a bearer token")


CurrentPrincipal = Annotated[Principal, Depends(current_principal)]


def current_account(principal: CurrentPrincipal) -> Account:
    return principal.account


CurrentAccount = Annotated[Account, Depends(current_account)]


def require_session(principal: CurrentPrincipal) -> Account:
    """The account when it signed in with its password (a web session), not a token: for
    moves a leaked token must not make, such as creating more tokens."""
    if principal.via != "session":
        raise accounts.Forbidden("sign in with your password for this; a token may not do it")
    return principal.account


def require_verified(account: CurrentAccount) -> Account:
    if not account.verified:
        raise accounts.EmailUnverified("verify your e-mail address first")
    return account


def _require_staff(role: StaffRole) -> Callable[[Account, Session], Account]:
    def dependency(account: CurrentAccount, db: Db) -> Account:
        if not accounts.has_staff_role(db, account, role):
            raise accounts.Forbidden(f"this needs the service {role.value} role")
        return account

    dependency.__name__ = f"require_{role.value}"
    return dependency


require_operator = _require_staff(StaffRole.OPERATOR)
require_reviewer = _require_staff(StaffRole.REVIEWER)

Operator = Annotated[Account, Depends(require_operator)]
Reviewer = Annotated[Account, Depends(require_reviewer)]
SessionAccount = Annotated[Account, Depends(require_session)]
VerifiedAccount = Annotated[Account, Depends(require_verified)]
