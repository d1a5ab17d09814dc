"""The events outbox (issue 38, Events): written inside the transaction that makes the event,
the run's write or the state move, so an event exists exactly when what it tells was
committed, and once. The write keeps only the event (a few rows, however many subscribe): the
delivery sensor fans it out later to one delivery per endpoint active and subscribed then
(`fan_out`), so subscribers never lengthen a run. A plug-in nobody subscribes to costs the
write one indexed read. A run's changes go in parts of at most `MAX_CHANGES` each."""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import Connection, and_, insert, literal, select, update

from almanac.platform.lifecycle import State
from almanac.platform.reader.records import from_stored
from almanac.platform.store.tables import records, revisions, versions
from almanac.platform.store.types import UTCDateTime
from almanac.platform.webhooks.tables import deliveries, endpoints, events, subscriptions

RECORDS_CHANGED = "records.changed"
PLUGIN_STATUS = "plugin.status"
PENDING = "pending"
CHANGE_KINDS = ("new", "revised", "moved", "withdrawn", "returned")
MAX_CHANGES = 100
"""The most changes one `records.changed` event carries; a run that changed more sends them in
further events of the same run, numbered by `part` of `parts` (issue 38: a message stays
small enough for any receiver; a revised record, old and new, is about 1 KiB)."""
FAN_OUT_BATCH = 200


def _active_subscribers(plugin_id: str) -> Any:
    return (
        select(endpoints.c.id)
        .join(subscriptions, subscriptions.c.endpoint_id == endpoints.c.id)
        .where(
            subscriptions.c.plugin_id == plugin_id,
            endpoints.c.disabled_at.is_(None),
            endpoints.c.paused.is_(False),
        )
    )


def has_subscribers(conn: Connection, plugin_id: str) -> bool:
    """Whether any active endpoint receives the plug-in's events."""
    return conn.execute(_active_subscribers(plugin_id).limit(1)).first() is not None


def _enqueue(
    conn: Connection, plugin_id: str, kind: str, data: Mapping[str, Any], now: datetime
) -> int:
    """Keep the event in the outbox, to be fanned out by the delivery sensor."""
    payload = {"type": kind, "timestamp": now.isoformat(), "data": dict(data)}
    event_id: int = conn.execute(
        insert(events)
        .values(plugin_id=plugin_id, type=kind, payload=payload, created_at=now)
        .returning(events.c.id)
    ).scalar_one()
    return event_id


def fan_out(conn: Connection, now: datetime, limit: int = FAN_OUT_BATCH) -> int:
    """The delivery sensor's first step: each event not yet fanned out gets one pending
    delivery per endpoint active and subscribed now, and is marked, in the caller's one
    transaction (so each event is fanned out once, and its deliveries' ids, the messages'
    `webhook-id`, never change). Returns how many events were fanned out; whether the owner
    may still read the plug-in is asked again at each send."""
    waiting = conn.execute(
        select(events.c.id, events.c.plugin_id)
        .where(events.c.fanned_out_at.is_(None))
        .order_by(events.c.id)
        .limit(limit)
        .with_for_update(skip_locked=True)
    ).all()
    columns = ["event_id", "endpoint_id", "state", "attempts", "next_at", "created_at"]
    for event in waiting:
        subscribed = _active_subscribers(event.plugin_id).with_only_columns(
            literal(event.id).label("event_id"),
            endpoints.c.id.label("endpoint_id"),
            literal(PENDING).label("state"),
            literal(0).label("attempts"),
            literal(now, UTCDateTime()).label("next_at"),
            literal(now, UTCDateTime()).label("created_at"),
        )
        conn.execute(insert(deliveries).from_select(columns, subscribed))
    if waiting:
        conn.execute(
            update(events).where(events.c.id.in_([e.id for e in waiting])).values(fanned_out_at=now)
        )
    return len(waiting)


@dataclass(frozen=True, slots=True)
class _Row:
    """A record's stored row or an earlier one, in the shape `from_stored` reads."""

    kind: str
    series: str
    # `dt.date`: in the class body the field `date` hides the type of the same name.
    date: dt.date
    discriminator: str
    content: Mapping[str, Any]
    moved_to: dt.date | None


def _current(row: Any) -> dict[str, Any]:
    """A record as it now stands, in the record API's shape (`/reader/plugins/{id}/records`)."""
    shaped = _Row(
        row.kind, row.series, row.date, row.discriminator, json.loads(row.content), row.moved_to
    )
    return {"record": from_stored(shaped), "digest": row.digest, "since": row.since.isoformat()}


def _earlier(row: Any, old: Any) -> dict[str, Any]:
    """The row a run replaced, in the shape of the record API's revisions."""
    shaped = _Row(
        row.kind, row.series, row.date, row.discriminator, json.loads(old.content), old.moved_to
    )
    return {
        "record": from_stored(shaped),
        "withdrawn": bool(old.withdrawn),
        "digest": old.digest,
        "valid_from": old.valid_from.isoformat(),
        "valid_to": old.valid_to.isoformat(),
    }


def _change_kind(row: Any, old: Any | None) -> str:
    """How the run changed a record, told from what its write stored: no earlier row is new;
    else by the state and content the write replaced ("Stored-record behaviour")."""
    if old is None:
        return "new"
    if row.withdrawn and not old.withdrawn:
        return "withdrawn"
    if old.withdrawn and not row.withdrawn:
        return "returned"
    if row.moved_to is not None and row.moved_to != old.moved_to and row.content == old.content:
        return "moved"
    return "revised"


def run_changes(
    conn: Connection, plugin_id: str, run_id: int, now: datetime
) -> dict[str, list[dict[str, Any]]]:
    """What the run's write stored, read back inside its transaction: every record whose row
    the run wrote, classified by the row it replaced (kept as a revision ending at `now`)."""
    current = conn.execute(
        select(records)
        .where(records.c.plugin_id == plugin_id, records.c.run_id == run_id)
        .order_by(records.c.date, records.c.series, records.c.discriminator)
    ).all()
    replaced = {
        r.record_id: r
        for r in conn.execute(
            select(revisions)
            .join(records, records.c.id == revisions.c.record_id)
            .where(
                and_(
                    records.c.plugin_id == plugin_id,
                    records.c.run_id == run_id,
                    revisions.c.valid_to == now,
                    revisions.c.run_id != run_id,
                )
            )
        )
    }
    changes: dict[str, list[dict[str, Any]]] = {kind: [] for kind in CHANGE_KINDS}
    for row in current:
        old = replaced.get(row.id)
        kind = _change_kind(row, old)
        if kind == "revised":
            changes[kind].append({"old": _earlier(row, old), "new": _current(row)})
        else:
            changes[kind].append(_current(row))
    return changes


def _parts(changes: Mapping[str, list[dict[str, Any]]]) -> list[dict[str, list[Any]]]:
    """The run's changes cut into parts of at most `MAX_CHANGES`, kinds in their order."""
    flat = [(kind, change) for kind in CHANGE_KINDS for change in changes[kind]]
    parts = []
    for start in range(0, max(len(flat), 1), MAX_CHANGES):
        part: dict[str, list[Any]] = {kind: [] for kind in CHANGE_KINDS}
        for kind, change in flat[start : start + MAX_CHANGES]:
            part[kind].append(change)
        parts.append(part)
    return parts


def record_run_changes(
    conn: Connection,
    *,
    plugin_id: str,
    run_id: int,
    version_id: int,
    counts: Mapping[str, int],
    now: datetime,
) -> list[int]:
    """Issue 38, Events: `records.changed` events for a run that changed anything, carrying
    exactly what its write stored, at most `MAX_CHANGES` an event (`part` of `parts`, each
    with the run's whole counts); called by the write in its transaction. No event when
    nothing changed or no endpoint receives the plug-in's events."""
    if not any(counts[kind] for kind in CHANGE_KINDS) or not has_subscribers(conn, plugin_id):
        return []
    version = conn.execute(
        select(versions.c.version, versions.c.digest).where(versions.c.id == version_id)
    ).one()
    parts = _parts(run_changes(conn, plugin_id, run_id, now))
    return [
        _enqueue(
            conn,
            plugin_id,
            RECORDS_CHANGED,
            {
                "plugin": plugin_id,
                "run": run_id,
                "version": version.version,
                "digest": version.digest,
                "counts": {kind: counts[kind] for kind in CHANGE_KINDS},
                "part": number,
                "parts": len(parts),
                "changes": part,
            },
            now,
        )
        for number, part in enumerate(parts, start=1)
    ]


_BACK_FROM = frozenset({State.FAILING, State.PAUSED})


def status_of_move(action: str, from_state: str | None, to_state: str | None) -> str | None:
    """Issue 38, Events: the status a plug-in's move tells subscribers of (failing, paused,
    taken-down, retired, held, back), or None for a move they are not told of."""
    if action == "takedown":
        return "taken-down"
    if action == "retire":
        return "retired"
    if action in ("restore", "held-cleared", "accept-removals", "keep-them"):
        return "back"
    if action == "held":
        return "held"
    if from_state == to_state:
        return None
    if to_state == State.FAILING:
        return "failing"
    if to_state == State.PAUSED:
        return "paused"
    if to_state == State.APPROVED and from_state in _BACK_FROM:
        return "back"
    return None


def record_status(
    conn: Connection,
    plugin_id: str,
    action: str,
    now: datetime,
    *,
    from_state: str | None = None,
    to_state: str | None = None,
) -> int | None:
    """A `plugin.status` event when the move is one subscribers are told of and someone
    subscribes; called where every move is kept (`store.history.log_move`)."""
    status = status_of_move(action, from_state, to_state)
    if status is None or not has_subscribers(conn, plugin_id):
        return None
    data = {"plugin": plugin_id, "status": status, "action": action, "state": to_state}
    return _enqueue(conn, plugin_id, PLUGIN_STATUS, data, now)
