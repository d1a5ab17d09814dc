"""The plug-in's history ("Listing of a published plug-in": every move is recorded in history
with who made it): each move kept with who made it and when, and read back oldest first."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import Connection, insert, select

from almanac.platform.lifecycle import Trigger
from almanac.platform.store.tables import moves
from almanac.platform.webhooks.outbox import record_status


@dataclass(frozen=True, slots=True)
class RecordedMove:
    """A move recorded in the plug-in's history: what, from and to which state, the version,
    who and when, and the move's own details (a roll back's reason, a retain answer...)."""

    id: int
    plugin_id: str
    action: str
    from_state: str | None
    to_state: str | None
    version_id: int | None
    by: str
    at: datetime
    detail: dict[str, Any] | None


def log_move(
    conn: Connection,
    plugin_id: str,
    action: str,
    by: str,
    now: datetime,
    *,
    from_state: str | None = None,
    to_state: str | None = None,
    version_id: int | None = None,
    detail: dict[str, Any] | None = None,
) -> None:
    """Keep one move of the plug-in in its history, with who made it and when; a move its
    webhook subscribers are told of leaves its event in the outbox."""
    conn.execute(
        insert(moves).values(
            plugin_id=plugin_id,
            action=action,
            from_state=from_state,
            to_state=to_state,
            version_id=version_id,
            by=by,
            at=now,
            detail=detail,
        )
    )
    record_status(conn, plugin_id, action, now, from_state=from_state, to_state=to_state)


def plugin_moves(conn: Connection, plugin_id: str) -> list[RecordedMove]:
    """Every recorded move of the plug-in, oldest first."""
    query = select(moves).where(moves.c.plugin_id == plugin_id).order_by(moves.c.id)
    return [
        RecordedMove(
            id=r.id,
            plugin_id=r.plugin_id,
            action=r.action,
            from_state=r.from_state,
            to_state=r.to_state,
            version_id=r.version_id,
            by=r.by,
            at=r.at,
            detail=r.detail,
        )
        for r in conn.execute(query)
    ]


def approved_before(conn: Connection, plugin_id: str, version_id: int) -> bool:
    """Whether a person approved this version of the plug-in at some time (an `approve` move
    names it in the plug-in's history)."""
    query = select(moves.c.id).where(
        moves.c.plugin_id == plugin_id,
        moves.c.action == str(Trigger.APPROVE),
        moves.c.version_id == version_id,
    )
    return conn.execute(query.limit(1)).first() is not None
