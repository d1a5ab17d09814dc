"""A plug-in as the store keeps it: its row, locked for a move, the stamp of its records, and
its status as the host shows it.

`lock_plugin` and `mark_records_changed` take a connection inside a transaction
(`write_transaction`); the moves that change the row are in `store.moves`, its versions in
`store.versions`.
"""

from __future__ import annotations

import secrets
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import Connection, RowMapping, select, update

from almanac.platform.errors import NotFound
from almanac.platform.lifecycle import State
from almanac.platform.store.tables import plugins, versions


class UnknownPlugin(NotFound):
    """No plug-in has this id."""


@dataclass(frozen=True, slots=True)
class PluginStatus:
    """A plug-in as the host shows it."""

    id: str
    state: State
    current_version_id: int | None
    current_digest: str | None
    approved_version_id: int | None
    approved_digest: str | None
    retain: str
    retain_registered: str
    held: bool
    taken_down: bool
    shelved: bool
    ever_approved: bool = False
    current_version: str | None = None
    approved_version: str | None = None
    retain_recorded_by: str | None = None
    retain_recorded_at: datetime | None = None
    publisher_organization_id: int | None = None
    takedown_reason: str | None = None
    takedown_note: str | None = None
    takedown_message: str | None = None
    takedown_digest: str | None = None
    registered_at: datetime | None = None
    retired: bool = False


def lock_plugin(conn: Connection, plugin_id: str) -> Mapping[str, Any]:
    """The plug-in row by column name, locked until the transaction ends (FOR UPDATE on
    PostgreSQL; on SQLite the transaction already holds the write lock)."""
    query = select(plugins).where(plugins.c.id == plugin_id).with_for_update()
    row = conn.execute(query).first()
    if row is None:
        raise UnknownPlugin(f"no plug-in has the id {plugin_id!r}")
    return row._asdict()


def mark_records_changed(conn: Connection, plugin_id: str) -> None:
    """Give the plug-in a new `records_stamp` in the transaction that changes its records, so
    whatever was drawn from the records before (the readers' days) is known to be stale."""
    stamp = secrets.token_hex(16)
    conn.execute(update(plugins).where(plugins.c.id == plugin_id).values(records_stamp=stamp))


_current = versions.alias("current_version")


_approved = versions.alias("approved_version")


_STATUS_QUERY = (
    select(
        plugins,
        _current.c.version.label("current_version"),
        _current.c.digest.label("current_digest"),
        _approved.c.version.label("approved_version"),
        _approved.c.digest.label("approved_digest"),
    )
    .outerjoin(_current, _current.c.id == plugins.c.current_version_id)
    .outerjoin(_approved, _approved.c.id == plugins.c.approved_version_id)
)
"""A plug-in row with its current and approved versions' numbers and digests, in one read."""


def _status(row: RowMapping) -> PluginStatus:
    return PluginStatus(
        id=row["id"],
        state=State(row["state"]),
        current_version_id=row["current_version_id"],
        current_digest=row["current_digest"],
        approved_version_id=row["approved_version_id"],
        approved_digest=row["approved_digest"],
        retain=row["retain"],
        retain_registered=row["retain_registered"],
        held=bool(row["held"]),
        taken_down=bool(row["taken_down"]),
        shelved=bool(row["shelved"]),
        ever_approved=bool(row["ever_approved"]),
        current_version=row["current_version"],
        approved_version=row["approved_version"],
        retain_recorded_by=row["retain_recorded_by"],
        retain_recorded_at=row["retain_recorded_at"],
        publisher_organization_id=row["publisher_organization_id"],
        takedown_reason=row["takedown_reason"],
        takedown_note=row["takedown_note"],
        takedown_message=row["takedown_message"],
        takedown_digest=row["takedown_digest"],
        registered_at=row["registered_at"],
        retired=bool(row["retired"]),
    )


def plugin_status(conn: Connection, plugin_id: str) -> PluginStatus:
    """The plug-in's state, versions, retain answer and flags."""
    query = _STATUS_QUERY.where(plugins.c.id == plugin_id)
    row = conn.execute(query).mappings().first()
    if row is None:
        raise UnknownPlugin(f"no plug-in has the id {plugin_id!r}")
    return _status(row)


def all_plugins(conn: Connection) -> list[PluginStatus]:
    """Every plug-in ever registered (removed ones too: ids are never reused), by id."""
    rows = conn.execute(_STATUS_QUERY.order_by(plugins.c.id)).mappings().all()
    return [_status(row) for row in rows]
