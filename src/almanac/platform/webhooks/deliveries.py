"""Deliveries of the outbox's events (issue 38, Delivery): which are due, what an attempt's
answer does (delivered, or the next try by the back-off schedule within 24 hours), the
endpoint disabled and its owner mailed after 5 days of failures, private plug-ins sent only
while the subscriber may still read them, the log and the replay. The sending itself is the
adapter's (`almanac.sandbox.webhooks`); everything here is the store's."""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import Connection, insert, select, update
from sqlalchemy.orm import Session

from almanac.platform.accounts.models import Account
from almanac.platform.errors import NotFound
from almanac.platform.mail import MailMessage
from almanac.platform.webhooks.endpoints import endpoint, may_see, signing_secrets
from almanac.platform.webhooks.outbox import PENDING
from almanac.platform.webhooks.tables import attempts, deliveries, endpoints, events

DELIVERED = "delivered"
FAILED = "failed"
SKIPPED = "skipped"
RETRY_DELAYS = (
    timedelta(seconds=5),
    timedelta(minutes=5),
    timedelta(minutes=30),
    timedelta(hours=2),
    timedelta(hours=5),
    timedelta(hours=10),
)
"""The wait after the 1st, 2nd, ... failed attempt (the last repeats), as Standard Webhooks'
reference service spaces them; no attempt is made later than `RETRY_WINDOW` after the
event."""
RETRY_WINDOW = timedelta(hours=24)
DISABLE_AFTER = timedelta(days=5)
ERROR_LENGTH = 300


@dataclass(frozen=True, slots=True)
class Due:
    """A delivery to attempt now: the message (its stable id, body and secrets) and where."""

    delivery_id: int
    endpoint_id: int
    account_id: int
    organization_id: int | None
    plugin_id: str
    url: str
    secrets: tuple[str, ...]
    body: str
    attempts: int
    created_at: datetime

    @property
    def message_id(self) -> str:
        """The `webhook-id`: one per event and endpoint, the same on every attempt."""
        return f"msg_{self.delivery_id}"


@dataclass(frozen=True, slots=True)
class Answer:
    """What an attempt got: the HTTP status (None when nothing answered) and what went
    wrong, if anything."""

    status: int | None
    error: str | None = None

    @property
    def ok(self) -> bool:
        return self.status is not None and 200 <= self.status < 300 and self.error is None


def message_body(payload: dict[str, Any]) -> str:
    """The JSON text of an event's payload, the bytes that are signed and sent."""
    return json.dumps(payload, separators=(",", ":"), ensure_ascii=False, sort_keys=True)


def due_deliveries(conn: Connection, now: datetime, limit: int) -> list[Due]:
    """The pending deliveries whose time has come, oldest first, of endpoints neither paused
    nor disabled."""
    query = (
        select(
            deliveries.c.id,
            deliveries.c.endpoint_id,
            deliveries.c.attempts,
            deliveries.c.created_at,
            endpoints.c.account_id,
            endpoints.c.organization_id,
            endpoints.c.url,
            endpoints.c.secret,
            endpoints.c.previous_secret,
            endpoints.c.previous_until,
            events.c.plugin_id,
            events.c.payload,
        )
        .join(endpoints, endpoints.c.id == deliveries.c.endpoint_id)
        .join(events, events.c.id == deliveries.c.event_id)
        .where(
            deliveries.c.state == PENDING,
            deliveries.c.next_at <= now,
            endpoints.c.paused.is_(False),
            endpoints.c.disabled_at.is_(None),
        )
        .order_by(deliveries.c.next_at, deliveries.c.id)
        .limit(limit)
    )
    return [
        Due(
            delivery_id=row.id,
            endpoint_id=row.endpoint_id,
            account_id=row.account_id,
            organization_id=row.organization_id,
            plugin_id=row.plugin_id,
            url=row.url,
            secrets=signing_secrets(row.secret, row.previous_secret, row.previous_until, now),
            body=message_body(row.payload),
            attempts=row.attempts,
            created_at=row.created_at,
        )
        for row in conn.execute(query)
    ]


def may_receive(db: Session, due: Due) -> bool:
    """Issue 38: a plug-in's events go only to an endpoint whose reader (or organization) may
    read it now (a private plug-in's reader list is read at delivery, not only at
    subscription)."""
    return bool(may_see(db, due.account_id, due.organization_id, [due.plugin_id]))


def next_attempt_at(created_at: datetime, failed_attempts: int, now: datetime) -> datetime | None:
    """When to try again after the `failed_attempts`-th failure: the back-off schedule, the
    last try at the end of the 24 hours; None when they have passed."""
    end = created_at + RETRY_WINDOW
    if now >= end:
        return None
    delay = RETRY_DELAYS[min(failed_attempts, len(RETRY_DELAYS)) - 1]
    return min(now + delay, end)


def skip(conn: Connection, due: Due, now: datetime) -> None:
    """The owner may no longer read the plug-in: the event is not sent, and the log says so."""
    _log(conn, due, Answer(None, "not sent: you may no longer read this plug-in"), now)
    conn.execute(
        update(deliveries)
        .where(deliveries.c.id == due.delivery_id)
        .values(state=SKIPPED, next_at=None)
    )


def _log(conn: Connection, due: Due, answer: Answer, now: datetime) -> None:
    error = None if answer.error is None else answer.error[:ERROR_LENGTH]
    conn.execute(
        insert(attempts).values(
            delivery_id=due.delivery_id, at=now, status=answer.status, error=error
        )
    )


def record_answer(
    conn: Connection, due: Due, answer: Answer, now: datetime, base_url: str
) -> MailMessage | None:
    """Keep the attempt and move the delivery on (delivered; or its next try, or failed after
    24 hours); an endpoint failing for 5 days is disabled, and the mail to its owner that
    says so is returned for sending after the commit."""
    _log(conn, due, answer, now)
    made = due.attempts + 1
    if answer.ok:
        conn.execute(
            update(deliveries)
            .where(deliveries.c.id == due.delivery_id)
            .values(state=DELIVERED, attempts=made, next_at=None)
        )
        conn.execute(
            update(endpoints).where(endpoints.c.id == due.endpoint_id).values(failing_since=None)
        )
        return None
    later = next_attempt_at(due.created_at, made, now)
    conn.execute(
        update(deliveries)
        .where(deliveries.c.id == due.delivery_id)
        .values(state=PENDING if later else FAILED, attempts=made, next_at=later)
    )
    return _failing(conn, due, now, base_url)


def _failing(conn: Connection, due: Due, now: datetime, base_url: str) -> MailMessage | None:
    row = conn.execute(
        select(endpoints.c.failing_since, endpoints.c.disabled_at, endpoints.c.url)
        .where(endpoints.c.id == due.endpoint_id)
        .with_for_update()
    ).one()
    since = row.failing_since or now
    if row.failing_since is None:
        conn.execute(
            update(endpoints).where(endpoints.c.id == due.endpoint_id).values(failing_since=now)
        )
    if row.disabled_at is not None or now - since < DISABLE_AFTER:
        return None
    conn.execute(update(endpoints).where(endpoints.c.id == due.endpoint_id).values(disabled_at=now))
    owner = conn.execute(select(Account.email).where(Account.id == due.account_id)).scalar_one()
    page = f"{base_url.rstrip('/')}/account/webhooks"
    return MailMessage(
        to=owner,
        subject="Almanac: your webhook endpoint was disabled",
        body=(
            f"Every delivery to your webhook endpoint {row.url} has failed since "
            f"{since.isoformat()}, so after {DISABLE_AFTER.days} days it is disabled and "
            f"receives no events.\n\nFix the endpoint, then resume it here:\n{page}\n"
        ),
    )


@dataclass(frozen=True, slots=True)
class AttemptView:
    at: datetime
    status: int | None
    error: str | None


@dataclass(frozen=True, slots=True)
class DeliveryView:
    """One event for one endpoint, as its delivery log shows it."""

    id: int
    message_id: str
    event_type: str
    plugin_id: str
    state: str
    attempts: tuple[AttemptView, ...]
    next_at: datetime | None
    created_at: datetime


LOG_LENGTH = 100


def delivery_log(
    db: Session, account: Account, endpoint_id: int, limit: int = LOG_LENGTH
) -> list[DeliveryView]:
    """Issue 38: the endpoint's newest deliveries, each with its attempts (status, time)."""
    endpoint(db, account, endpoint_id)
    rows = db.execute(
        select(deliveries, events.c.type, events.c.plugin_id)
        .join(events, events.c.id == deliveries.c.event_id)
        .where(deliveries.c.endpoint_id == endpoint_id)
        .order_by(deliveries.c.id.desc())
        .limit(limit)
    ).all()
    tries: dict[int, list[AttemptView]] = {row.id: [] for row in rows}
    if tries:
        for a in db.execute(
            select(attempts).where(attempts.c.delivery_id.in_(tries)).order_by(attempts.c.id)
        ):
            tries[a.delivery_id].append(AttemptView(a.at, a.status, a.error))
    return [
        DeliveryView(
            id=row.id,
            message_id=f"msg_{row.id}",
            event_type=row.type,
            plugin_id=row.plugin_id,
            state=row.state,
            attempts=tuple(tries[row.id]),
            next_at=row.next_at,
            created_at=row.created_at,
        )
        for row in rows
    ]


def replay(
    db: Session, account: Account, endpoint_id: int, delivery_id: int, now: datetime
) -> None:
    """Send the delivery again now, with its own `webhook-id` (receivers that already have it
    know it), retried as a new one for 24 hours."""
    endpoint(db, account, endpoint_id)
    done = db.execute(
        update(deliveries)
        .where(deliveries.c.id == delivery_id, deliveries.c.endpoint_id == endpoint_id)
        .values(state=PENDING, attempts=0, next_at=now, created_at=now)
    )
    if not done.rowcount:  # type: ignore[attr-defined]
        raise NotFound(f"no delivery {delivery_id} of endpoint {endpoint_id}")
