"""The person's choice on a Held run: Accept removals or Keep them (the count starts over)."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import Connection, delete, insert, select, update

from almanac.platform.errors import Conflict
from almanac.platform.store.history import log_move
from almanac.platform.store.plugins import lock_plugin, mark_records_changed
from almanac.platform.store.tables import held_series, plugins, records, revisions
from almanac.platform.store.write import MISSES_TO_WITHDRAW


class NothingHeld(Conflict):
    """The plug-in has no held series."""

    code = "NOTHING-HELD"


def decide_held(conn: Connection, plugin_id: str, *, accept: bool, by: str, now: datetime) -> int:
    """Accept removals (withdraw the held records that are still missing) or Keep them (their
    misses start over). Returns how many records were withdrawn ("States and transitions",
    Held paragraph)."""
    lock_plugin(conn, plugin_id)
    held = (
        conn.execute(select(held_series).where(held_series.c.plugin_id == plugin_id))
        .mappings()
        .all()
    )
    if not held:
        raise NothingHeld(f"plug-in {plugin_id} has nothing held")
    ids = [i for row in held for i in row["record_ids"]]
    withdrawn = 0
    if accept and ids:
        # Only records still missing (not printed again since) are withdrawn.
        gone = (
            conn.execute(
                select(records).where(
                    records.c.id.in_(ids),
                    records.c.withdrawn.is_(False),
                    records.c.misses >= MISSES_TO_WITHDRAW,
                )
            )
            .mappings()
            .all()
        )
        if gone:
            conn.execute(
                insert(revisions),
                [
                    {
                        "record_id": r["id"],
                        "content": r["content"],
                        "run_id": r["run_id"],
                        "version_id": r["version_id"],
                        "digest": r["digest"],
                        "withdrawn": False,
                        "moved_to": r["moved_to"],
                        "valid_from": r["since"],
                        "valid_to": now,
                    }
                    for r in gone
                ],
            )
            conn.execute(
                update(records)
                .where(records.c.id.in_([r["id"] for r in gone]))
                .values(withdrawn=True, misses=0, since=now)
            )
            mark_records_changed(conn, plugin_id)
        withdrawn = len(gone)
    elif ids:
        conn.execute(update(records).where(records.c.id.in_(ids)).values(misses=0))
    conn.execute(delete(held_series).where(held_series.c.plugin_id == plugin_id))
    conn.execute(update(plugins).where(plugins.c.id == plugin_id).values(held=False))
    log_move(
        conn,
        plugin_id,
        "accept-removals" if accept else "keep-them",
        by,
        now,
        detail={"series": [r["series"] for r in held], "withdrawn": withdrawn},
    )
    return withdrawn
