"""Agent login: the OAuth 2.0 device authorization grant (RFC 8628) and its approval by an
owner or admin ("Agent login" states; DECISIONS 6 and 10).

Written here rather than with Authlib: Authlib's `DeviceCodeGrant` runs inside its own
`AuthorizationServer` with a framework integration (Flask or Django, none for FastAPI) and
client, token and credential models of its own, while what the grant needs is small (two
endpoints, four errors, one table) and the approval, bound to an organization, a person and a
publishing choice, is this service's own. The error names and shapes are RFC 8628's, section
3.5: `authorization_pending`, `slow_down`, `access_denied`, `expired_token`; a code unknown or
used up is RFC 6749's `invalid_grant`.

States: pending (10 minutes) -> approved -> issued (the token handed to the polling tool once),
or pending -> denied; a pending or approved code whose time is up is ended (`expired_token`)."""

from __future__ import annotations

import logging
import re
import secrets
from dataclasses import dataclass
from datetime import datetime, timedelta

from sqlalchemy import delete, select
from sqlalchemy.orm import Session

from almanac.platform.accounts.models import Account, Membership
from almanac.platform.accounts.organizations import MANAGERS
from almanac.platform.accounts.secret import new_secret, secret_hash
from almanac.platform.agents.models import DeviceCode, DeviceCodeState
from almanac.platform.agents.tokens import NewAgentToken, issue_token
from almanac.platform.errors import Conflict, Forbidden, NotFound
from almanac.platform.publishing.identity.roles import require_manager

log = logging.getLogger(__name__)

CLIENT_ID = "almanac-plugin"
"""The one client of the grant: the tool (a public client, RFC 8628 section 3.1)."""
GRANT_TYPE = "urn:ietf:params:oauth:grant-type:device_code"
CODE_LIFETIME = timedelta(minutes=10)
"""'Limits': an agent login code is valid 10 minutes."""
INTERVAL = 5
"""Seconds the tool waits between polls (RFC 8628 section 3.2 `interval`)."""
SLOW_DOWN_STEP = 5
"""Seconds a poll too early adds to the interval (RFC 8628 section 3.5 `slow_down`)."""
USER_CODE_ALPHABET = "BCDFGHJKLMNPQRSTVWXZ"
"""RFC 8628 section 6.1: consonants only, none that look alike (no vowels, so no words; no
O/0, I/1); case-insensitive. 8 of them: 20^8, about 2.6e10 codes."""
USER_CODE_LENGTH = 8
MAX_AGENT_NAME = 80
MACHINE_ID = re.compile(r"[A-Za-z0-9_-]{8,64}")
KEEP_ENDED = timedelta(days=1)
"""Ended codes are kept this long after their end, then deleted when a new login starts."""


class DeviceGrantError(Exception):
    """A device authorization or token request refused with an RFC 6749/8628 error name."""

    def __init__(self, error: str, description: str, *, interval: int | None = None) -> None:
        super().__init__(description)
        self.error = error
        self.description = description
        self.interval = interval  # with slow_down: the interval now


@dataclass(frozen=True, slots=True)
class DeviceAuthorization:
    """The answer to `login` (RFC 8628 section 3.2), the device code shown once."""

    device_code: str
    user_code: str
    expires_in: int
    interval: int

    def __repr__(self) -> str:
        return f"DeviceAuthorization(user_code={self.user_code!r})"


@dataclass(frozen=True, slots=True)
class LoginView:
    """A login code as the approving person sees it."""

    user_code: str
    agent_name: str
    state: str  # pending, approved, denied, issued or expired
    created_at: datetime
    expires_at: datetime
    organization_id: int | None
    may_publish: bool
    decided_at: datetime | None


def format_user_code(code: str) -> str:
    """XXXX-XXXX, as shown and typed."""
    return f"{code[:4]}-{code[4:]}"


def normalize_user_code(text: str) -> str | None:
    """The stored form of a typed code (any case, with or without the hyphen or spaces), or
    None when it cannot be one."""
    letters = re.sub(r"[\s-]", "", text).upper()
    if len(letters) != USER_CODE_LENGTH or any(c not in USER_CODE_ALPHABET for c in letters):
        return None
    return letters


def _new_user_code() -> str:
    return "".join(secrets.choice(USER_CODE_ALPHABET) for _ in range(USER_CODE_LENGTH))


def _state(row: DeviceCode, now: datetime) -> str:
    if row.state in (DeviceCodeState.PENDING, DeviceCodeState.APPROVED) and now >= row.expires_at:
        return "expired"
    return row.state


def _view(row: DeviceCode, now: datetime) -> LoginView:
    return LoginView(
        user_code=format_user_code(row.user_code),
        agent_name=row.agent_name,
        state=_state(row, now),
        created_at=row.created_at,
        expires_at=row.expires_at,
        organization_id=row.organization_id,
        may_publish=row.may_publish,
        decided_at=row.decided_at,
    )


def login_request(agent_name: str, machine_id: str) -> str:
    """The agent's name of a device authorization request, trimmed; `invalid_request` for a
    name of 1 to 80 printable characters or a machine id of 8 to 64 letters, digits, `-` or `_`
    missing."""
    name = agent_name.strip()
    if not 1 <= len(name) <= MAX_AGENT_NAME or not name.isprintable():
        raise DeviceGrantError(
            "invalid_request", f"agent_name: give 1 to {MAX_AGENT_NAME} printable characters"
        )
    if not MACHINE_ID.fullmatch(machine_id):
        raise DeviceGrantError(
            "invalid_request", "machine_id: give 8 to 64 letters, digits, '-' or '_'"
        )
    return name


def start_login(
    db: Session, agent_name: str, machine_id: str, now: datetime, *, interval: int = INTERVAL
) -> DeviceAuthorization:
    """A new login code for the agent `agent_name` on the machine `machine_id` (the device
    authorization request), refused as `login_request` says."""
    name = login_request(agent_name, machine_id)
    db.execute(delete(DeviceCode).where(DeviceCode.expires_at < now - KEEP_ENDED))
    user_code = _new_user_code()
    while db.scalar(select(DeviceCode.id).where(DeviceCode.user_code == user_code)) is not None:
        user_code = _new_user_code()
    device_code = new_secret()
    row = DeviceCode(
        device_code_hash=secret_hash(device_code),
        user_code=user_code,
        agent_name=name,
        machine_id=machine_id,
        state=DeviceCodeState.PENDING,
        created_at=now,
        expires_at=now + CODE_LIFETIME,
        interval=interval,
        may_publish=False,
    )
    db.add(row)
    db.flush()
    log.info("agent login %s started for %r", row.id, name)
    return DeviceAuthorization(
        device_code=device_code,
        user_code=format_user_code(user_code),
        expires_in=int(CODE_LIFETIME.total_seconds()),
        interval=interval,
    )


def poll(db: Session, device_code: str, now: datetime) -> NewAgentToken:
    """The device access token request (RFC 8628 section 3.4): the token when the code was
    approved (once), else a DeviceGrantError: `invalid_grant` (unknown or used up),
    `expired_token`, `slow_down` (sooner than the interval after the last poll; the interval
    grows by 5 seconds), `access_denied` or `authorization_pending`. Every poll is kept."""
    hashed = secret_hash(device_code)
    row = db.scalar(select(DeviceCode).where(DeviceCode.device_code_hash == hashed))
    if row is None or row.state == DeviceCodeState.ISSUED:
        raise DeviceGrantError("invalid_grant", "the device code is unknown or was used already")
    if now >= row.expires_at:
        raise DeviceGrantError(
            "expired_token", "the code expired (10 minutes) before it was approved; log in again"
        )
    too_soon = row.last_polled_at is not None and now < row.last_polled_at + timedelta(
        seconds=row.interval
    )
    row.last_polled_at = now
    if too_soon:
        row.interval += SLOW_DOWN_STEP
        db.flush()
        raise DeviceGrantError(
            "slow_down",
            f"polled sooner than the interval; wait {row.interval} seconds",
            interval=row.interval,
        )
    if row.state == DeviceCodeState.DENIED:
        raise DeviceGrantError("access_denied", "an owner or admin denied this login")
    if row.state == DeviceCodeState.PENDING:
        db.flush()
        raise DeviceGrantError(
            "authorization_pending", "waiting for an owner or admin to approve the code"
        )
    row.state = DeviceCodeState.ISSUED
    issued = issue_token(db, row, now)
    log.info("agent login %s issued token %s", row.id, issued.token.id)
    return issued


def _require_approver(db: Session, viewer: Account) -> None:
    """An owner or admin of some organization, with a verified e-mail, sees and decides codes."""
    manages = db.scalar(
        select(Membership.id).where(
            Membership.account_id == viewer.id,
            Membership.left_at.is_(None),
            Membership.role.in_([r.value for r in MANAGERS]),
        )
    )
    if manages is None or not viewer.verified:
        raise Forbidden("only owners and admins of an organization approve or deny agents")


def _code_row(db: Session, user_code: str) -> DeviceCode:
    code = normalize_user_code(user_code)
    row = None
    if code is not None:
        row = db.scalar(select(DeviceCode).where(DeviceCode.user_code == code))
    if row is None:
        raise NotFound(f"no login code {user_code!r}; check the code the tool printed")
    return row


def _pending(row: DeviceCode, now: datetime) -> None:
    state = _state(row, now)
    if state != DeviceCodeState.PENDING:
        raise Conflict(
            f"login code {format_user_code(row.user_code)} is {state}, no longer pending; the "
            "agent runs login again for a new code",
            code="STATE-CONFLICT",
        )


def login_code(db: Session, user_code: str, viewer: Account, now: datetime) -> LoginView:
    """The login code a person typed, with the agent's name, for an owner or admin to decide."""
    _require_approver(db, viewer)
    return _view(_code_row(db, user_code), now)


def approve(
    db: Session,
    user_code: str,
    approver: Account,
    organization_id: int,
    may_publish: bool,
    now: datetime,
) -> LoginView:
    """An owner or admin of `organization_id` approves a pending code for that organization,
    with publishing allowed or not; the token is issued to the next poll. A code no longer
    pending is STATE-CONFLICT."""
    require_manager(db, organization_id, approver, "approve agents")
    row = _code_row(db, user_code)
    _pending(row, now)
    row.state = DeviceCodeState.APPROVED
    row.organization_id = organization_id
    row.decided_by = approver.id
    row.decided_at = now
    row.may_publish = bool(may_publish)
    db.flush()
    log.info(
        "agent login %s approved by %s for organization %s (publish: %s)",
        row.id,
        approver.id,
        organization_id,
        may_publish,
    )
    return _view(row, now)


def deny(db: Session, user_code: str, approver: Account, now: datetime) -> LoginView:
    """An owner or admin denies a pending code: its next poll is `access_denied`."""
    _require_approver(db, approver)
    row = _code_row(db, user_code)
    _pending(row, now)
    row.state = DeviceCodeState.DENIED
    row.decided_by = approver.id
    row.decided_at = now
    db.flush()
    log.info("agent login %s denied by %s", row.id, approver.id)
    return _view(row, now)


def require_client(client_id: str | None) -> None:
    """The tool's client id (RFC 8628 section 3.1 requires one), else `invalid_client`."""
    if client_id != CLIENT_ID:
        raise DeviceGrantError(
            "invalid_client", f"client_id: this service knows {CLIENT_ID!r} only"
        )
