"""The record diff of an update: what its batch on today's real downloads would change in the
stored records, by the store write's own classification, without writing anything."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, date, datetime
from typing import Any

from sqlalchemy import Connection, select

from almanac.platform.contract.manifest import Manifest
from almanac.platform.store import write as store_write
from almanac.platform.store.tables import plugins

SHOWN = 50
"""Records shown per series and kind of change; the counts are always exact."""
_NO_RUN = store_write.WrittenBy(
    run_id=0, version_id=0, digest="", since=datetime(1970, 1, 1, tzinfo=UTC)
)


@dataclass
class SeriesDiff:
    """One series: counts of new, revised, moved and missing records, and the first of each."""

    new: int = 0
    revised: int = 0
    moved: int = 0
    missing: int = 0
    shown: dict[str, list[dict[str, Any]]] = field(
        default_factory=lambda: {"new": [], "revised": [], "moved": [], "missing": []}
    )

    def show(self, kind: str, entry: dict[str, Any]) -> None:
        if len(self.shown[kind]) < SHOWN:
            self.shown[kind].append(entry)


@dataclass(frozen=True, slots=True)
class RecordDiff:
    """The diff of one batch against the stored records of its plug-in on `today`."""

    today: date
    series: Mapping[str, SeriesDiff]

    def as_dict(self) -> dict[str, Any]:
        return {
            "today": self.today.isoformat(),
            "series": {
                key: {
                    "new": s.new,
                    "revised": s.revised,
                    "moved": s.moved,
                    "missing": s.missing,
                    **{f"{kind}_records": shown for kind, shown in s.shown.items()},
                }
                for key, s in sorted(self.series.items())
            },
        }


def record_diff(
    conn: Connection, manifest: Manifest, batch: Sequence[Mapping[str, Any]], today: date
) -> RecordDiff | None:
    """Per series: records the batch adds, revises (old and new content), moves, and stored
    records of a snapshot window it leaves out (each would count a miss). None when the
    plug-in has no stored version (not an update). Reads only; the store write's classify,
    move and miss stages decide, as a scheduled run's write would."""
    known = conn.execute(select(plugins.c.id).where(plugins.c.id == manifest.id)).first()
    if known is None:
        return None
    stored = store_write._stored_records(conn, manifest.id)
    changes = store_write.RunChanges(manifest.id, _NO_RUN)
    printed = store_write._printed(batch, manifest)
    store_write._classify(changes, printed, stored, manifest, past_day=False)
    store_write._mark_moves(changes, stored)
    store_write._count_misses(changes, stored, manifest, today)
    by_id = {old[store_write._ID]: old for old in stored}
    out: dict[str, SeriesDiff] = {s.key: SeriesDiff() for s in manifest.series}

    def of(key: str) -> SeriesDiff:
        return out.setdefault(key, SeriesDiff())

    for new in changes.new_records:
        series = of(new[1])
        series.new += 1
        series.show("new", {"date": new[2].isoformat(), "key": new[3], "content": new[5]})
    for record_id, update in changes.updates.items():
        old = by_id[record_id]
        series = of(old[store_write._SERIES])
        entry = {"date": old[store_write._DATE].isoformat(), "key": old[store_write._DISC]}
        if record_id in changes.moved:
            series.moved += 1
            moved_to = update["moved_to"]
            series.show("moved", {**entry, "to": moved_to.isoformat() if moved_to else None})
        else:
            series.revised += 1
            series.show(
                "revised", {**entry, "old": old[store_write._CONTENT], "new": update["content"]}
            )
    for record_id, misses in changes.misses.items():
        old = by_id[record_id]
        if misses <= old[store_write._MISSES]:
            continue  # a reset to 0 for a record printed again
        series = of(old[store_write._SERIES])
        series.missing += 1
        series.show(
            "missing",
            {
                "date": old[store_write._DATE].isoformat(),
                "key": old[store_write._DISC],
                "misses": misses,
            },
        )
    return RecordDiff(today, out)
