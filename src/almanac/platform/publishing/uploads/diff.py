"""The record diff of an update: what its batch on today's real downloads would change in the
stored records, by the store write's own classification, without writing anything; and the
same diff as the rows a reviewer reads (series, date, before, after)."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, date, datetime
from typing import Any

from sqlalchemy import Connection, select

from almanac.platform.contract.manifest import Manifest
from almanac.platform.store import write as store_write
from almanac.platform.store.tables import plugins, versions

SHOWN = 50
"""Records shown per series and kind of change; the counts are always exact."""
KINDS = ("new", "revised", "moved", "missing")
_NO_RUN = store_write.WrittenBy(
    run_id=0, version_id=0, digest="", since=datetime(1970, 1, 1, tzinfo=UTC)
)
_CONTENTS = ("content", "old", "new")
"""The keys of a shown record that hold a record's content (an object)."""


@dataclass
class SeriesDiff:
    """One series: counts of new, revised, moved and missing records, and the first of each."""

    new: int = 0
    revised: int = 0
    moved: int = 0
    missing: int = 0
    shown: dict[str, list[dict[str, Any]]] = field(
        default_factory=lambda: {kind: [] for kind in KINDS}
    )

    def show(self, kind: str, entry: dict[str, Any]) -> None:
        if len(self.shown[kind]) < SHOWN:
            self.shown[kind].append(entry)


@dataclass(frozen=True, slots=True)
class RecordDiff:
    """The diff of one batch against the stored records of its plug-in on `today`; `removed`
    counts the records kept of each stored series the version no longer declares."""

    today: date
    series: Mapping[str, SeriesDiff]
    removed: Mapping[str, int] = field(default_factory=dict)
    windows: Mapping[str, int] = field(default_factory=dict)
    """The records each series' snapshot window would hold (what the Held limits weigh)."""

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
            "removed_series": [
                {"series": key, "records": count} for key, count in sorted(self.removed.items())
            ],
        }


def _content(text: str) -> Any:
    """A stored record's content text as the object it encodes."""
    return json.loads(text)


def record_diff(
    conn: Connection, manifest: Manifest, batch: Sequence[Mapping[str, Any]], today: date
) -> RecordDiff | None:
    """Per series: records the batch adds, revises (old and new content), moves, and stored
    records of a snapshot window it leaves out (each would count a miss); and each series of
    the approved version the manifest no longer declares ("Versioning" 4: removed, its
    records kept), with the count of its records readers keep. None when the plug-in has no
    stored version (not an update). Reads only; the store write's classify, move and miss
    stages decide, as a scheduled run's write would."""
    known = conn.execute(select(plugins.c.id).where(plugins.c.id == manifest.id)).first()
    if known is None:
        return None
    compared = store_write.compare_batch(conn, manifest.id, batch, manifest, today)
    stored = compared.stored
    changes = store_write.RunChanges(manifest.id, _NO_RUN)
    store_write._classify(changes, compared, manifest, past_day=False)
    store_write._mark_moves(changes, stored)
    store_write._count_misses(changes, stored, manifest, today)
    by_id = {old[store_write._ID]: old for old in stored}
    out: dict[str, SeriesDiff] = {s.key: SeriesDiff() for s in manifest.series}

    def of(key: str) -> SeriesDiff:
        return out.setdefault(key, SeriesDiff())

    def shown(old: store_write.StoredRecord) -> dict[str, Any]:
        return {
            "date": old[store_write._DATE].isoformat(),
            "key": old[store_write._DISC],
            "kind": old[store_write._KIND],
        }

    for new in changes.new_records:
        series = of(new[1])
        series.new += 1
        entry = {"date": new[2].isoformat(), "key": new[3], "kind": new[4]}
        series.show("new", {**entry, "content": _content(new[5])})
    for record_id, update in changes.updates.items():
        old = by_id[record_id]
        series = of(old[store_write._SERIES])
        if record_id in changes.moved:
            series.moved += 1
            moved_to = update["moved_to"]
            series.show(
                "moved",
                {
                    **shown(old),
                    "content": _content(old[store_write._CONTENT]),
                    "to": moved_to.isoformat() if moved_to else None,
                },
            )
        else:
            series.revised += 1
            series.show(
                "revised",
                {
                    **shown(old),
                    "old": _content(old[store_write._CONTENT]),
                    "new": _content(update["content"]),
                },
            )
    for record_id, misses in changes.misses.items():
        old = by_id[record_id]
        if misses <= old[store_write._MISSES]:
            continue  # a reset to 0 for a record printed again
        series = of(old[store_write._SERIES])
        series.missing += 1
        series.show(
            "missing",
            {**shown(old), "content": _content(old[store_write._CONTENT]), "misses": misses},
        )
    declared = {s.key for s in manifest.series}
    approved = conn.execute(
        select(versions.c.manifest)
        .join(plugins, plugins.c.approved_version_id == versions.c.id)
        .where(plugins.c.id == manifest.id)
    ).scalar()
    removed = {
        str(s["key"]): 0 for s in (approved or {}).get("series", []) if s.get("key") not in declared
    }
    for old in stored:
        key = old[store_write._SERIES]
        if key in removed and not old[store_write._WITHDRAWN]:
            removed[key] += 1
    return RecordDiff(today, out, removed, dict(changes.window_counts))


def structured(diff: Mapping[str, Any] | None) -> dict[str, Any] | None:
    """A kept record diff with every record content an object: diffs kept before contents
    were objects hold them as JSON text, which the API and the desk never show as such."""
    if diff is None:
        return None
    series = {}
    for key, found in (diff.get("series") or {}).items():
        series[key] = dict(found)
        for kind in KINDS:
            series[key][f"{kind}_records"] = [
                {
                    name: _content(value) if name in _CONTENTS and isinstance(value, str) else value
                    for name, value in entry.items()
                }
                for entry in found.get(f"{kind}_records", [])
            ]
    return {**diff, "series": series, "removed_series": list(diff.get("removed_series", []))}


@dataclass(frozen=True, slots=True)
class DiffRow:
    """One record of the diff as a reviewer reads it: `change` is new, revised, moved or
    missing; `before` and `after` say the record's content in words ("" for none)."""

    series: str
    date: str
    change: str
    before: str
    after: str


@dataclass(frozen=True, slots=True)
class SeriesCounts:
    series: str
    new: int
    revised: int
    moved: int
    missing: int

    @property
    def unchanged(self) -> bool:
        return not (self.new or self.revised or self.moved or self.missing)


@dataclass(frozen=True, slots=True)
class DiffTable:
    """The record diff as tables: counts per series, the records shown (each series' kinds in
    KINDS order), how many more each series and kind has than shown, and the series removed
    with the records kept of each."""

    today: str
    counts: tuple[SeriesCounts, ...]
    rows: tuple[DiffRow, ...]
    left_out: tuple[tuple[str, str, int], ...]
    removed: tuple[tuple[str, int], ...]


def _figure(value: Any) -> str:
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def content_words(content: Any) -> str:
    """A record's content (record_content's object) in words: a value's fields and what it
    revises, an event's state, title and value, an item's title and link."""
    if not isinstance(content, Mapping):
        return "" if content is None else str(content)
    if "fields" in content:
        fields = content.get("fields") or {}
        words = ", ".join(f"{key} {_figure(value)}" for key, value in fields.items())
        if content.get("revises"):
            words += f" (revises {content['revises']})"
        return words
    if "state" in content:
        words = str(content["state"])
        if content.get("title"):
            words += f": {content['title']}"
        if content.get("value") is not None:
            words += f", value {_figure(content['value'])}"
        return words
    if "url" in content:
        return f"{content.get('title', '')} <{content['url']}>"
    return ", ".join(f"{key} {_figure(value)}" for key, value in content.items())


def _row(series: str, change: str, entry: Mapping[str, Any]) -> DiffRow:
    when = str(entry.get("date", ""))
    if change == "new":
        return DiffRow(series, when, change, "", content_words(entry.get("content")))
    if change == "revised":
        before, after = content_words(entry.get("old")), content_words(entry.get("new"))
        return DiffRow(series, when, change, before, after)
    if change == "moved":
        return DiffRow(
            series, when, change, content_words(entry.get("content")), f"moved to {entry['to']}"
        )
    misses = entry.get("misses")
    return DiffRow(
        series,
        when,
        change,
        content_words(entry.get("content")),
        "left out of this run"
        + (f": miss {misses} of {store_write.MISSES_TO_WITHDRAW}" if misses else ""),
    )


def diff_table(diff: Mapping[str, Any]) -> DiffTable:
    """A kept record diff (`structured` or as kept) as the tables the review desk shows."""
    found = structured(diff) or {}
    counts: list[SeriesCounts] = []
    rows: list[DiffRow] = []
    left_out: list[tuple[str, str, int]] = []
    for key, series in sorted((found.get("series") or {}).items()):
        counts.append(SeriesCounts(key, *(int(series.get(kind, 0)) for kind in KINDS)))
        for kind in KINDS:
            entries = series.get(f"{kind}_records", [])
            rows.extend(_row(key, kind, entry) for entry in entries)
            more = int(series.get(kind, 0)) - len(entries)
            if more > 0:
                left_out.append((key, kind, more))
    removed = tuple(
        (str(entry["series"]), int(entry["records"])) for entry in found.get("removed_series", [])
    )
    return DiffTable(
        today=str(found.get("today", "")),
        counts=tuple(counts),
        rows=tuple(rows),
        left_out=tuple(left_out),
        removed=removed,
    )
