"""The plug-ins the orchestrator knows: every plug-in ever approved, read in one query, and the
snapshot file that lets a run worker load exactly the set its code location loaded."""

from __future__ import annotations

import hashlib
import json
import os
import re
from collections.abc import Collection
from dataclasses import asdict, dataclass
from datetime import date, datetime, timedelta
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

from sqlalchemy import Connection, func, select

from almanac.platform.contract.names import pick_name
from almanac.platform.store.tables import plugins, records, runs, versions

SNAPSHOT_ENV = "ALMANAC_DEFINITIONS_SNAPSHOT"
"""Set by the process that built the definitions; its run workers inherit it and load the same
catalog from the file it names instead of asking the store again."""
HISTORY_DAYS = 366
"""How far before its registration a plug-in's daily partitions start (backfills reach this)."""
SERVICE_PUBLISHER = "almanac"


@dataclass(frozen=True, slots=True)
class CatalogEntry:
    """One plug-in ever approved, as its asset shows it: the approved manifest, the state, the
    publisher, the first partition, the last run and the stored record count."""

    id: str
    state: str
    taken_down: bool
    approved_version_id: int
    version: str
    digest: str
    manifest: dict[str, Any]
    publisher: str
    first_day: str
    last_run_outcome: str | None
    last_run_reason: str | None
    last_run_ended: str | None
    records: int

    @property
    def name(self) -> str:
        """The English name, as rule 2 picks it for a reader of English; the id when none."""
        return pick_name(self.manifest.get("name"), "en") or self.id

    @property
    def timezone(self) -> str:
        return str(self.manifest["timezone"])

    @property
    def schedule(self) -> str:
        return str(self.manifest["schedule"])

    @property
    def audience(self) -> str:
        return str(self.manifest.get("audience", "public"))

    @property
    def series_kinds(self) -> frozenset[str]:
        return frozenset(str(series["kind"]) for series in self.manifest.get("series", []))


def publisher_of(origin: str, origin_by: str) -> str:
    """The publisher shown on the asset: the service itself for plug-ins registered from its own
    folder, else the uploader's mail domain (or name when it is not an address)."""
    if origin == "folder":
        return SERVICE_PUBLISHER
    return origin_by.rsplit("@", 1)[-1] if "@" in origin_by else origin_by


def group_name(publisher: str) -> str:
    """A Dagster group name (letters, digits, underscores) for a publisher."""
    cleaned = re.sub(r"[^A-Za-z0-9_]", "_", publisher).strip("_")
    return cleaned or "unknown_publisher"


def load_catalog(conn: Connection, only: Collection[str] | None = None) -> list[CatalogEntry]:
    """Every plug-in ever approved with its approved version, in one statement (no round trip
    per plug-in), sorted by id; with `only`, those of these ids alone (their runs and records
    alone are read)."""
    last_run = select(runs.c.plugin_id, func.max(runs.c.id).label("run_id"))
    counts = select(records.c.plugin_id, func.count().label("n")).where(
        records.c.withdrawn.is_(False)
    )
    ids = None if only is None else sorted(only)
    if ids is not None:
        last_run = last_run.where(runs.c.plugin_id.in_(ids))
        counts = counts.where(records.c.plugin_id.in_(ids))
    last_run_rows = last_run.group_by(runs.c.plugin_id).subquery("last_run")
    count_rows = counts.group_by(records.c.plugin_id).subquery("counts")
    query = (
        select(
            plugins.c.id,
            plugins.c.state,
            plugins.c.taken_down,
            plugins.c.registered_at,
            versions.c.id.label("version_id"),
            versions.c.version,
            versions.c.digest,
            versions.c.manifest,
            versions.c.origin,
            versions.c.origin_by,
            runs.c.outcome,
            runs.c.reason,
            runs.c.ended_at,
            count_rows.c.n,
        )
        .join(versions, versions.c.id == plugins.c.approved_version_id)
        .outerjoin(last_run_rows, last_run_rows.c.plugin_id == plugins.c.id)
        .outerjoin(runs, runs.c.id == last_run_rows.c.run_id)
        .outerjoin(count_rows, count_rows.c.plugin_id == plugins.c.id)
        .where(plugins.c.ever_approved.is_(True))
        .order_by(plugins.c.id)
    )
    if ids is not None:
        query = query.where(plugins.c.id.in_(ids))
    entries = []
    for row in conn.execute(query).mappings():
        manifest = row["manifest"]
        if isinstance(manifest, str):
            manifest = json.loads(manifest)
        registered: datetime = row["registered_at"]
        first = registered.astimezone(ZoneInfo(manifest["timezone"])).date()
        entries.append(
            CatalogEntry(
                id=row["id"],
                state=row["state"],
                taken_down=bool(row["taken_down"]),
                approved_version_id=row["version_id"],
                version=row["version"],
                digest=row["digest"],
                manifest=manifest,
                publisher=publisher_of(row["origin"], row["origin_by"]),
                first_day=(first - timedelta(days=HISTORY_DAYS)).isoformat(),
                last_run_outcome=row["outcome"],
                last_run_reason=row["reason"],
                last_run_ended=row["ended_at"].isoformat() if row["ended_at"] else None,
                records=int(row["n"] or 0),
            )
        )
    return entries


def first_partition_day(entry: CatalogEntry) -> date:
    return date.fromisoformat(entry.first_day)


def write_snapshot(entries: list[CatalogEntry], folder: Path) -> Path:
    """Keep the catalog as a file named by its content; returns its path."""
    text = json.dumps([asdict(e) for e in entries], sort_keys=True, separators=(",", ":"))
    name = hashlib.sha256(text.encode()).hexdigest()[:16]
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"catalog-{name}.json"
    if not path.exists():
        partial = path.with_suffix(f".{os.getpid()}.tmp")
        partial.write_text(text)
        partial.replace(path)
    return path


def read_snapshot(path: Path) -> list[CatalogEntry]:
    return [CatalogEntry(**item) for item in json.loads(path.read_text())]


RUN_OUTCOME_STATES = frozenset({"approved", "failing"})
"""States a run's outcome moves a plug-in between: the definitions do not depend on them, so a
change between them is no change of the catalog (a reload a failing run would be too many)."""


def catalog_fingerprint(conn: Connection) -> str:
    """What the code location's definitions are built from, as one short text that changes
    when a plug-in is approved (first or again), published, rolled back, removed, restored,
    paused, resumed, taken down or retired: the watch of `almanac up` reloads the code server
    when it changes (`almanac.code_server`)."""
    query = (
        select(
            plugins.c.id,
            plugins.c.approved_version_id,
            plugins.c.state,
            plugins.c.taken_down,
            plugins.c.retired,
        )
        .where(plugins.c.ever_approved.is_(True))
        .order_by(plugins.c.id)
    )
    digest = hashlib.sha256()
    for plugin_id, version_id, state, taken_down, retired in conn.execute(query):
        lifecycle = "running" if state in RUN_OUTCOME_STATES else state
        digest.update(f"{plugin_id}\0{version_id}\0{lifecycle}\0{taken_down}\0{retired}\n".encode())
    return digest.hexdigest()
