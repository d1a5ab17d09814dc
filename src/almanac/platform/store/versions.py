"""The versions kept for a plug-in: a version's manifest and code registered once by digest (a
new current version moves the plug-in to Pending), its covered files, and the approved code a
run hashes again."""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import Connection, func, insert, select, update

from almanac.platform.lifecycle import State
from almanac.platform.store.moves import code_changed
from almanac.platform.store.plugins import UnknownPlugin, lock_plugin
from almanac.platform.store.tables import blobs, plugins, version_files, versions

ORIGINS = ("upload", "folder", "portal")


@dataclass(frozen=True, slots=True)
class KeptVersion:
    """A version kept for a plug-in: its number, digest, and how and when it arrived."""

    id: int
    version: str
    digest: str
    origin: str
    origin_by: str
    arrived_at: datetime


@dataclass(frozen=True, slots=True)
class CoveredFile:
    """A file the version's digest covers: path, size in bytes and SHA-256 (hex)."""

    path: str
    size: int
    sha256: str


@dataclass(frozen=True, slots=True)
class VersionDetail(KeptVersion):
    """One kept version in full: the plug-in, the manifest and the covered files in path order."""

    plugin_id: str
    manifest: dict[str, Any]
    files: list[CoveredFile]


@dataclass(frozen=True, slots=True)
class ApprovedCode:
    """The approved version's code, to be hashed again before each run."""

    plugin_id: str
    version_id: int
    version: str
    digest: str
    manifest: dict[str, Any]
    files: dict[str, bytes]


def register_version(
    conn: Connection,
    *,
    manifest: Mapping[str, Any],
    digest: str,
    files: Mapping[str, bytes],
    origin: str,
    by: str,
    now: datetime,
) -> int:
    """Keep a version's code and manifest; a new digest moves the plug-in to Pending
    ("(none)/Approved/Failing/Paused -> Pending" rows). `retain` is recorded at the first
    registration only (Licence and retention). Returns the version id."""
    if origin not in ORIGINS:
        raise ValueError(f"origin must be one of {ORIGINS}, not {origin!r}")
    plugin_id = manifest["id"]
    exists = conn.execute(select(plugins.c.id).where(plugins.c.id == plugin_id)).first()
    if exists is None:
        retain = manifest["licence"]["retain"]
        conn.execute(
            insert(plugins).values(
                id=plugin_id,
                state=str(State.PENDING),
                retain_registered=retain,
                retain=retain,
                ever_approved=False,
                held=False,
                taken_down=False,
                shelved=False,
                registered_at=now,
            )
        )
    row = lock_plugin(conn, plugin_id)
    version_id: int | None = conn.execute(
        select(versions.c.id).where(versions.c.plugin_id == plugin_id, versions.c.digest == digest)
    ).scalar()
    if version_id is None:
        version_id = conn.execute(
            insert(versions)
            .values(
                plugin_id=plugin_id,
                version=manifest["version"],
                digest=digest,
                manifest=dict(manifest),
                audience=manifest.get("audience"),
                origin=origin,
                origin_by=by,
                arrived_at=now,
            )
            .returning(versions.c.id)
        ).scalar_one()
        _store_files(conn, version_id, files)
    if row["current_version_id"] == version_id:
        return version_id
    conn.execute(
        update(plugins).where(plugins.c.id == plugin_id).values(current_version_id=version_id)
    )
    before = row["state"] if exists is not None else None
    code_changed(conn, {**row, "current_version_id": version_id, "state": before}, by=by, now=now)
    return version_id


def _store_files(conn: Connection, version_id: int, files: Mapping[str, bytes]) -> None:
    rows = []
    for path, content in sorted(files.items()):
        sha = hashlib.sha256(content).hexdigest()
        known = conn.execute(select(blobs.c.sha256).where(blobs.c.sha256 == sha)).first()
        if known is None:
            conn.execute(insert(blobs).values(sha256=sha, content=content))
        rows.append({"version_id": version_id, "path": path, "sha256": sha})
    if rows:
        conn.execute(insert(version_files), rows)


def plugin_versions(conn: Connection, plugin_id: str) -> list[KeptVersion]:
    """Every version kept for the plug-in, newest first: id, version, digest, origin, arrival."""
    query = (
        select(
            versions.c.id,
            versions.c.version,
            versions.c.digest,
            versions.c.origin,
            versions.c.origin_by,
            versions.c.arrived_at,
        )
        .where(versions.c.plugin_id == plugin_id)
        .order_by(versions.c.id.desc())
    )
    return [
        KeptVersion(
            id=r.id,
            version=r.version,
            digest=r.digest,
            origin=r.origin,
            origin_by=r.origin_by,
            arrived_at=r.arrived_at,
        )
        for r in conn.execute(query)
    ]


def version_detail(conn: Connection, plugin_id: str, version_id: int) -> VersionDetail:
    """One kept version of the plug-in: its row (manifest included) and its covered files with
    size and SHA-256, in path order; UnknownPlugin when the plug-in has no such version."""
    row = conn.execute(
        select(versions).where(versions.c.id == version_id, versions.c.plugin_id == plugin_id)
    ).first()
    if row is None:
        raise UnknownPlugin(f"plug-in {plugin_id!r} has no version {version_id}")
    files = conn.execute(
        select(version_files.c.path, version_files.c.sha256, func.length(blobs.c.content))
        .join(blobs, blobs.c.sha256 == version_files.c.sha256)
        .where(version_files.c.version_id == version_id)
    ).all()
    listed = sorted(
        (CoveredFile(path=p, size=int(size), sha256=sha) for p, sha, size in files),
        key=lambda f: f.path.encode("utf-8"),
    )
    return VersionDetail(
        id=row.id,
        version=row.version,
        digest=row.digest,
        origin=row.origin,
        origin_by=row.origin_by,
        arrived_at=row.arrived_at,
        plugin_id=row.plugin_id,
        manifest=row.manifest,
        files=listed,
    )


def approved_code(conn: Connection, plugin_id: str) -> ApprovedCode:
    """The approved version's manifest and files, to hash again before a run."""
    row = conn.execute(select(plugins).where(plugins.c.id == plugin_id)).mappings().first()
    if row is None or row["approved_version_id"] is None:
        raise UnknownPlugin(f"plug-in {plugin_id!r} has no approved version")
    version = (
        conn.execute(select(versions).where(versions.c.id == row["approved_version_id"]))
        .mappings()
        .one()
    )
    files = conn.execute(
        select(version_files.c.path, blobs.c.content)
        .join(blobs, blobs.c.sha256 == version_files.c.sha256)
        .where(version_files.c.version_id == version["id"])
    ).all()
    return ApprovedCode(
        plugin_id=plugin_id,
        version_id=version["id"],
        version=version["version"],
        digest=version["digest"],
        manifest=version["manifest"],
        files={path: bytes(content) for path, content in files},
    )
