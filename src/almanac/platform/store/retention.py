"""Purge ("Licence and retention"): offered only while the held answer is `no`; a dry run
counts; the person types the plug-in id; one transaction removes records and revisions; run
history stays."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import Connection, delete, func, select, update

from almanac.platform.errors import Conflict, Invalid
from almanac.platform.store.history import log_move
from almanac.platform.store.plugins import lock_plugin, mark_records_changed
from almanac.platform.store.tables import held_series, plugins, records, revisions


class PurgeNotOffered(Conflict):
    """The recorded retain answer is not `no`, so no purge is offered."""

    code = "PURGE-NOT-OFFERED"


class PurgeNotConfirmed(Invalid):
    """The person did not type the plug-in id."""

    code = "PLG-PURGE-CONFIRM"


@dataclass(frozen=True, slots=True)
class PurgeCount:
    records: int
    revisions: int
    removed: bool


def purge(
    conn: Connection,
    plugin_id: str,
    *,
    typed_id: str | None,
    dry_run: bool,
    by: str,
    now: datetime,
) -> PurgeCount:
    """Count (dry run) or remove every record and revision of the plug-in, irreversibly;
    refused unless the held retain answer is `no` and, to remove, `typed_id` is the plug-in id."""
    plugin = lock_plugin(conn, plugin_id)
    if plugin["retain"] != "no":
        raise PurgeNotOffered(
            f"purge is offered only while the recorded retain answer is 'no'; "
            f"plug-in {plugin_id} has {plugin['retain']!r}"
        )
    ids = select(records.c.id).where(records.c.plugin_id == plugin_id)
    # Both counts in one statement, so one snapshot: a dry run reads outside a transaction on
    # PostgreSQL (`engine.reading`), where a run could write between two statements.
    record_count, revision_count = conn.execute(
        select(
            select(func.count())
            .select_from(records)
            .where(records.c.plugin_id == plugin_id)
            .scalar_subquery(),
            select(func.count())
            .select_from(revisions)
            .where(revisions.c.record_id.in_(ids))
            .scalar_subquery(),
        )
    ).one()
    if dry_run:
        return PurgeCount(record_count, revision_count, removed=False)
    if typed_id != plugin_id:
        raise PurgeNotConfirmed(f"type the plug-in id {plugin_id!r} exactly to purge its records")
    conn.execute(delete(revisions).where(revisions.c.record_id.in_(ids)))
    conn.execute(delete(records).where(records.c.plugin_id == plugin_id))
    mark_records_changed(conn, plugin_id)
    conn.execute(delete(held_series).where(held_series.c.plugin_id == plugin_id))
    conn.execute(update(plugins).where(plugins.c.id == plugin_id).values(held=False))
    log_move(
        conn,
        plugin_id,
        "purge",
        by,
        now,
        detail={"records": record_count, "revisions": revision_count},
    )
    return PurgeCount(record_count, revision_count, removed=True)
