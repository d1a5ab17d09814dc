"""Limits on repeated attempts (issue 31; "Limits": invitation requests): failed sign-ins per
e-mail address and per client address, device login codes per client address, "Check now" per
organization, invitation requests per e-mail address.

Each limit counts attempts in a sliding window: an attempt is refused while `most` counted
attempts of its subject fall within the `window` before it, and allowed again the moment the
oldest of those is `window` old (`wait_before`, the one rule). A refused attempt is not counted,
so a refusal never makes itself longer, and an attempt allowed is counted before the work it
stands for is done, so attempts made at once cannot all slip under the limit.

The counted attempts are rows of the store (`limit_attempts`), so a limit holds across every
API worker process: the count of a subject and the new attempt are one step, under a lock of
that subject (on PostgreSQL a transaction-level advisory lock; on SQLite the store's one write
lock, which every writing transaction takes when it begins). The caller's transaction commits
them. Refusals are `TooManyAttempts` (429, the limit's catalog code, `retry_after` seconds);
their words say how long to wait and nothing else.
"""

from __future__ import annotations

import hashlib
import ipaddress
import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta

from sqlalchemy import delete, select, text
from sqlalchemy.orm import Session

from almanac.platform.errors import RateLimited
from almanac.platform.limits.models import CountedAttempt


@dataclass(frozen=True, slots=True)
class Limit:
    """At most `most` counted attempts of one subject within any `window`; a refusal carries
    `code` and says `refusal`, then how long to wait."""

    name: str
    most: int
    window: timedelta
    code: str
    refusal: str


SIGN_IN_FAILURES_PER_ACCOUNT = Limit(
    name="sign-in-account",
    most=10,
    window=timedelta(minutes=15),
    code="SIGN-IN-LOCKED",
    refusal="too many failed sign-ins for this e-mail address (at most 10 in 15 minutes)",
)
"""A person who mistypes a password tries a few times, not ten; someone guessing one account's
password is held to 40 guesses an hour. Counted per e-mail address whether or not an account
has it, so the lock tells nobody which addresses have accounts. While locked, the right
password is refused too: otherwise the answer would tell a guesser when a guess was right."""

SIGN_IN_FAILURES_PER_ADDRESS = Limit(
    name="sign-in-address",
    most=30,
    window=timedelta(minutes=15),
    code="SIGN-IN-ADDRESS-LIMITED",
    refusal="too many failed sign-ins from your network address (at most 30 in 15 minutes)",
)
"""One guess at each of many accounts (password spraying) stays under any per-account limit;
30 failures in 15 minutes from one address stops it, while an office or a school behind one
address, whose people mistype now and then, stays well under it. A success takes no failure
away, so signing in to one's own account between guesses gains nothing."""

DEVICE_CODES_PER_ADDRESS = Limit(
    name="device-code-address",
    most=10,
    window=timedelta(hours=1),
    code="DEVICE-CODE-LIMITED",
    refusal="too many login codes asked for from your network address (at most 10 an hour)",
)
"""A `login` asks for one code, valid 10 minutes, and `login` run again within them waits for
the same code: 10 an hour leaves room for several developers behind one address and for codes
that expired unapproved, and keeps one address from filling the store with codes and the space
of user codes an approver types from (RFC 8628 section 5.1 leaves the limit to the server)."""

DOMAIN_CHECKS_PER_ORGANIZATION = Limit(
    name="domain-check-organization",
    most=10,
    window=timedelta(hours=1),
    code="DOMAIN-CHECK-LIMITED",
    refusal="Check now was pressed too often for this organization (at most 10 times an hour)",
)
"""Each "Check now" asks DNS and fetches a web address of the organization's choosing, from
the service's own address: 10 an hour is plenty while a new TXT record spreads, and keeps the
service from being made to send requests at someone else's server. Counted for the
organization, so its owners and admins share it; the periodic re-checks do not count."""

INVITATION_REQUESTS_PER_EMAIL = Limit(
    name="invitation-email",
    most=5,
    window=timedelta(days=1),
    code="RATE-LIMITED",
    # Begins with the form field it refuses, so that the request page marks that field.
    refusal="email: at most 5 invitation requests a day per address",
)
"""The specification's "Limits": 5 invitation requests a day per address; the address is the
e-mail address the request gives (as since the endpoint was built)."""

LIMITS: tuple[Limit, ...] = (
    SIGN_IN_FAILURES_PER_ACCOUNT,
    SIGN_IN_FAILURES_PER_ADDRESS,
    DEVICE_CODES_PER_ADDRESS,
    DOMAIN_CHECKS_PER_ORGANIZATION,
    INVITATION_REQUESTS_PER_EMAIL,
)

PURGE_BATCH = 500
"""Expired attempts deleted at most per counted attempt: enough to keep up with any rate the
limits allow, small enough to keep each request's statement short."""

_LOCK_SPACE = 0x616C6D31
"""The first key of the PostgreSQL advisory locks of subjects ("alm1"), apart from any other."""


class TooManyAttempts(RateLimited):
    """An attempt over its limit: 429 with the limit's code, `Retry-After: retry_after`."""

    def __init__(self, limit: Limit, wait: timedelta) -> None:
        self.limit = limit
        self.retry_after = retry_after_seconds(wait)
        super().__init__(
            f"{limit.refusal}; try again in {wait_words(self.retry_after)}", code=limit.code
        )


def wait_before(limit: Limit, counted: Iterable[datetime], now: datetime) -> timedelta | None:
    """The rule of every limit on repeated attempts: None when an attempt at `now` is allowed
    after the `counted` attempts of its subject, else how long until it is: while `limit.most`
    of them fall within `limit.window` before `now`, until the one of those that keeps the
    count at `most` is `window` old (an attempt made exactly `window` ago no longer counts)."""
    recent = sorted(at for at in counted if at > now - limit.window)
    if len(recent) < limit.most:
        return None
    return recent[len(recent) - limit.most] + limit.window - now


def retry_after_seconds(wait: timedelta) -> int:
    """`Retry-After` in whole seconds, rounded up (never sooner than allowed), at least 1."""
    return max(1, math.ceil(wait.total_seconds()))


def wait_words(seconds: int) -> str:
    """A wait as a person reads it, rounded up: `45 seconds`, `15 minutes`, `1 hour 30
    minutes`, `23 hours`."""
    if seconds < 60:
        return f"{seconds} second{'s' if seconds != 1 else ''}"
    minutes = math.ceil(seconds / 60)
    hours, minutes = divmod(minutes, 60)
    parts = []
    if hours:
        parts.append(f"{hours} hour{'s' if hours != 1 else ''}")
    if minutes:
        parts.append(f"{minutes} minute{'s' if minutes != 1 else ''}")
    return " ".join(parts)


def address_subject(address: str | None) -> str:
    """The subject of a client address: an IPv4 address as it is (an IPv4-mapped IPv6 address
    as its IPv4 address), an IPv6 address by its /64 network, which one host usually holds
    whole; anything else (no address known) as its text."""
    if not address:
        return "unknown"
    try:
        parsed = ipaddress.ip_address(address)
    except ValueError:
        return address
    if isinstance(parsed, ipaddress.IPv6Address):
        if parsed.ipv4_mapped is not None:
            return str(parsed.ipv4_mapped)
        return str(ipaddress.IPv6Network((parsed, 64), strict=False))
    return str(parsed)


def _subject_hash(limit: Limit, subject: str) -> str:
    return hashlib.sha256(f"{limit.name}\n{subject}".encode()).hexdigest()


def _lock(db: Session, hashes: Sequence[str]) -> None:
    """Hold each subject's lock until the transaction ends, taken in one order so two
    transactions counting the same subjects never wait for each other in a circle."""
    if db.get_bind().dialect.name != "postgresql":
        return  # SQLite: the transaction began with the store's one write lock
    for hashed in sorted(set(hashes)):
        key = int.from_bytes(bytes.fromhex(hashed)[:4], "big", signed=True)
        db.execute(
            text("SELECT pg_advisory_xact_lock(:space, :key)"), {"space": _LOCK_SPACE, "key": key}
        )


def count_attempt(
    db: Session, subjects: Sequence[tuple[Limit, str]], now: datetime
) -> tuple[int, ...]:
    """Count one attempt at `now` against each (limit, subject), or count none and refuse it
    with `TooManyAttempts` when any limit is reached (the one with the longest wait; its
    wait is the attempt's). Returns the ids of the attempts counted, for `take_back`; the
    caller's transaction keeps them when it commits."""
    hashed = [(limit, _subject_hash(limit, subject)) for limit, subject in subjects]
    _lock(db, [h for _, h in hashed])
    longest: tuple[timedelta, Limit] | None = None
    for limit, subject in hashed:
        counted = db.scalars(
            select(CountedAttempt.at).where(
                CountedAttempt.limit_name == limit.name,
                CountedAttempt.subject == subject,
                CountedAttempt.at > now - limit.window,
            )
        )
        wait = wait_before(limit, counted, now)
        if wait is not None and (longest is None or wait > longest[0]):
            longest = (wait, limit)
    if longest is not None:
        raise TooManyAttempts(longest[1], longest[0])
    rows = [CountedAttempt(limit_name=limit.name, subject=h, at=now) for limit, h in hashed]
    db.add_all(rows)
    for limit in {limit for limit, _ in subjects}:
        _purge(db, limit, now)
    db.flush()
    return tuple(row.id for row in rows)


def _purge(db: Session, limit: Limit, now: datetime) -> None:
    """Delete attempts of `limit` past its window, any subject's. Rows another transaction is
    deleting are skipped (PostgreSQL), so no request waits for another here."""
    expired = (
        select(CountedAttempt.id)
        .where(CountedAttempt.limit_name == limit.name, CountedAttempt.at <= now - limit.window)
        .limit(PURGE_BATCH)
        .with_for_update(skip_locked=True)
    )
    db.execute(delete(CountedAttempt).where(CountedAttempt.id.in_(expired.scalar_subquery())))


def take_back(db: Session, attempt_ids: Iterable[int]) -> None:
    """Uncount attempts `count_attempt` counted (a sign-in that succeeded was no failure)."""
    ids = list(attempt_ids)
    if ids:
        db.execute(delete(CountedAttempt).where(CountedAttempt.id.in_(ids)))


__all__ = [
    "DEVICE_CODES_PER_ADDRESS",
    "DOMAIN_CHECKS_PER_ORGANIZATION",
    "INVITATION_REQUESTS_PER_EMAIL",
    "LIMITS",
    "SIGN_IN_FAILURES_PER_ACCOUNT",
    "SIGN_IN_FAILURES_PER_ADDRESS",
    "Limit",
    "TooManyAttempts",
    "address_subject",
    "count_attempt",
    "take_back",
    "wait_before",
    "wait_words",
]
