"""Dependencies: the request's database session, its moment, and who is asking."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass
from datetime import datetime
from typing import Annotated, Any, Literal

import anyio
from fastapi import Depends, Request
from sqlalchemy.orm import Session, sessionmaker

from almanac.api.context import ApiContext
from almanac.platform import accounts, agents
from almanac.platform.accounts import Account, StaffRole
from almanac.platform.agents import AgentAction, AgentGrant

SESSION_COOKIE = "almanac_session"


# Dependencies that neither read the database nor wait on anything are `async def`: FastAPI
# calls those on the event loop, where each plain `def` costs a hop to the thread pool and back
# (a read of the days made seven such hops; three remain: the principal, the route and the
# session's close).


async def get_context(request: Request) -> ApiContext:
    context: ApiContext = request.app.state.almanac
    return context


Context = Annotated[ApiContext, Depends(get_context)]


READ_ONLY_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})


def may_write(request: Request) -> bool:
    """Whether the request's transaction may write: any method but GET, HEAD and OPTIONS."""
    return request.method not in READ_ONLY_METHODS


@asynccontextmanager
async def _session_of(sessions: sessionmaker[Session]) -> AsyncIterator[Session]:
    """A session from `sessions`, opened on the event loop (a session touches the database only
    at its first statement) and closed in the thread pool (closing returns its connection,
    rolling back what was left uncommitted): one hop to the thread pool a request, not two."""
    db = sessions()
    try:
        yield db
    finally:
        # A limiter of its own, as FastAPI gives the exit of a plain generator dependency:
        # waiting for a thread of the shared pool, held by requests waiting for a connection,
        # while holding the connection they wait for, would stall every request.
        await anyio.to_thread.run_sync(db.close, limiter=anyio.CapacityLimiter(1))


async def get_db(request: Request, ctx: Context) -> AsyncIterator[Session]:
    """One database session per request; routes commit what they change, the rest is rolled
    back when the request ends. A request that may write takes the store's write lock when its
    transaction begins (see `almanac.platform.store.engine`), so another process writing makes
    it wait, never fail; one that only reads never waits."""
    async with _session_of(ctx.write_sessions if may_write(request) else ctx.sessions) as db:
        yield db


async def get_read_db(ctx: Context) -> AsyncIterator[Session]:
    """A read-only session beside the request's own, for slow work that must hold no write
    lock (the password check of a sign-in)."""
    async with _session_of(ctx.sessions) as db:
        yield db


async def get_write_db(ctx: Context) -> AsyncIterator[Session]:
    """The request's session for a GET that writes (the mailed verification link)."""
    async with _session_of(ctx.write_sessions) as db:
        yield db


Db = Annotated[Session, Depends(get_db)]
ReadDb = Annotated[Session, Depends(get_read_db)]
WriteDb = Annotated[Session, Depends(get_write_db)]


async def get_now(ctx: Context) -> datetime:
    return ctx.now()


Now = Annotated[datetime, Depends(get_now)]


async def get_client_address(request: Request) -> str | None:
    """The client's network address as uvicorn gives it: the connection's peer, or, when the
    peer is a proxy uvicorn trusts (`--forwarded-allow-ips`, by default 127.0.0.1 only), the
    address that proxy put in `X-Forwarded-For`. No header is read here: from any other peer
    an `X-Forwarded-For` changes nothing."""
    return request.client.host if request.client else None


ClientAddress = Annotated[str | None, Depends(get_client_address)]


@dataclass(frozen=True, slots=True)
class Principal:
    """Who is asking, and with what: a web session cookie, a bearer token, or an agent's token
    (`agent`: what it was approved for; `account` is then its approver's)."""

    account: Account
    via: Literal["session", "token", "agent"]
    token_id: int | None = None
    agent: AgentGrant | None = None


def _agent_principal(
    request: Request, ctx: ApiContext, db: Session, now: datetime, secret: str
) -> Principal:
    """An agent's token, checked at every use: unknown, revoked, or its approver no longer
    owner or admin of the organization is AUTH-REQUIRED (the last revokes it for good)."""

    def use(session: Session) -> AgentGrant:
        try:
            row = agents.use_agent_token(session, secret, now)
        except accounts.NotAuthenticated:
            session.commit()  # a revocation made on the way is kept
            raise
        grant = agents.grant_of(row)
        session.commit()
        return grant

    if may_write(request):
        grant = use(db)
    else:
        with ctx.write_sessions() as writer:
            grant = use(writer)
    approver = db.get(Account, grant.approved_by)
    assert approver is not None
    return Principal(account=approver, via="agent", agent=grant)


def current_principal(request: Request, ctx: Context, db: Db, now: Now) -> Principal:
    """The account of the `Authorization: Bearer` token, else of the session cookie, else
    AUTH-REQUIRED. A token's use is kept at once, even when the request is refused later."""
    header = request.headers.get("authorization")
    if header is not None:
        scheme, _, secret = header.partition(" ")
        if scheme.lower() != "bearer" or not secret.strip():
            raise accounts.NotAuthenticated("send the token as Authorization: Bearer <token>")
        if agents.is_agent_secret(secret.strip()):
            return _agent_principal(request, ctx, db, now, secret.strip())
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


async def current_account(principal: CurrentPrincipal) -> Account:
    """The account asking; an agent's token is refused (AGENT_FORBIDDEN): it reaches only the
    routes that name their agent action (`acting`)."""
    if principal.agent is not None:
        agents.agent_may(AgentAction.OTHER, principal.agent)
    return principal.account


CurrentAccount = Annotated[Account, Depends(current_account)]


async def require_session(principal: CurrentPrincipal) -> Account:
    """The account when it signed in with its password (a web session), not a token: for
    moves a leaked token must not make, such as creating more tokens. An agent's token is
    AGENT_FORBIDDEN."""
    if principal.agent is not None:
        agents.agent_may(AgentAction.OTHER, principal.agent)
    if principal.via != "session":
        raise accounts.Forbidden("sign in with your password for this; a token may not do it")
    return principal.account


async def require_verified(account: CurrentAccount) -> Account:
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


@dataclass(frozen=True, slots=True)
class Actor:
    """Who makes a portal move: the account (an agent's approver, for an agent) and the
    agent's name when an agent's token makes it (kept with uploads and attestations)."""

    account: Account
    agent_name: str | None = None


def _path_organization(request: Request) -> int | None:
    raw = request.path_params.get("organization_id")
    return int(raw) if isinstance(raw, str) and raw.isdigit() else None


def acting(action: AgentAction) -> Any:
    """The dependency of a route an agent's token may reach, naming its move: a person (session
    or token) passes as before; an agent passes only when `agents.agent_may` allows `action`
    in the route's organization, its path parameter `organization_id` (AGENT_FORBIDDEN,
    AGENT_MAY_NOT_PUBLISH otherwise). Use as `actor: Annotated[Actor, acting(AgentAction.X)]`."""

    async def dependency(request: Request, principal: CurrentPrincipal) -> Actor:
        if principal.agent is None:
            return Actor(principal.account)
        organization_id = _path_organization(request)
        if organization_id is None:
            # Only routes under /portal/organizations/{organization_id}/ are an agent's.
            raise agents.AgentForbidden(
                "an agent's token reaches only its organization's portal routes"
            )
        agents.agent_may(action, principal.agent, organization_id)
        return Actor(principal.account, principal.agent.agent_name)

    dependency.__name__ = f"acting_{action.name.lower()}"
    return Depends(dependency)


def person_only(action: AgentAction) -> Any:
    """The dependency of a person's move made with a password sign-in (a web session): an
    agent's token is refused by `agents.agent_may` for `action` (AGENT_FORBIDDEN), a person's
    token with FORBIDDEN. Use as `account: Annotated[Account, person_only(AgentAction.X)]`."""

    async def dependency(request: Request, principal: CurrentPrincipal) -> Account:
        if principal.agent is not None:
            agents.agent_may(action, principal.agent, _path_organization(request))
        if principal.via != "session":
            raise accounts.Forbidden("sign in with your password for this; a token may not do it")
        return principal.account

    dependency.__name__ = f"person_{action.name.lower()}"
    return Depends(dependency)


Reading = Annotated[Actor, acting(AgentAction.READ)]
"""A member reading an organization's portal, in person or by an agent allowed to read."""
