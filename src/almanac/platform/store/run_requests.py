"""Run requests ("Running rules" 3 and 4): left for the sensor by a move that starts a run at
once or by a failed run to be retried, and taken by the sensor once; a request's id is its run
key."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta

from sqlalchemy import Connection, insert, select, update

from almanac.platform.lifecycle import RunTrigger
from almanac.platform.store.tables import requests

RETRY_AFTER = timedelta(minutes=30)
"""Running rule 4: a failed run is retried this long after it failed."""


@dataclass(frozen=True, slots=True)
class OpenRunRequest:
    """A run request left for the sensor: the version to run, why, who asked and when, and the
    moment before which it does not start; `taken_at` None while not yet taken."""

    id: int
    plugin_id: str
    version_id: int
    trigger: str
    requested_by: str
    requested_at: datetime
    not_before: datetime
    taken_at: datetime | None


def request_run(
    conn: Connection,
    plugin_id: str,
    version_id: int,
    trigger: RunTrigger,
    by: str,
    now: datetime,
    not_before: datetime | None = None,
) -> int:
    """Leave a run request for the sensor (Running rules 3 and 4); its id is the run key."""
    request_id: int = conn.execute(
        insert(requests)
        .values(
            plugin_id=plugin_id,
            version_id=version_id,
            trigger=str(trigger),
            requested_by=by,
            requested_at=now,
            not_before=not_before or now,
        )
        .returning(requests.c.id)
    ).scalar_one()
    return request_id


def open_run_requests(conn: Connection, now: datetime) -> list[OpenRunRequest]:
    """Run requests due at `now` and not yet taken, oldest first (for the sensor)."""
    query = (
        select(requests)
        .where(requests.c.taken_at.is_(None), requests.c.not_before <= now)
        .order_by(requests.c.id)
    )
    return [
        OpenRunRequest(
            id=r.id,
            plugin_id=r.plugin_id,
            version_id=r.version_id,
            trigger=r.trigger,
            requested_by=r.requested_by,
            requested_at=r.requested_at,
            not_before=r.not_before,
            taken_at=r.taken_at,
        )
        for r in conn.execute(query)
    ]


def take_run_request(conn: Connection, request_id: int, now: datetime) -> bool:
    """Mark a request taken; False when it was already taken."""
    result = conn.execute(
        update(requests)
        .where(requests.c.id == request_id, requests.c.taken_at.is_(None))
        .values(taken_at=now)
    )
    return result.rowcount == 1
