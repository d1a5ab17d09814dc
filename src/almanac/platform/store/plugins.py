"""Plug-ins, their versions and code, and the moves of the approved-plug-in state machine.

Every function takes a connection inside a transaction (`write_transaction`) and the moment
`now`; every move is recorded in `plugin_moves` with who and when.
"""

from __future__ import annotations

import hashlib
import secrets
from collections.abc import Mapping
from dataclasses import dataclass, replace
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import Connection, RowMapping, func, insert, select, update

from almanac.platform.lifecycle import (
    Facts,
    Move,
    RunTrigger,
    State,
    TransitionRefused,
    Trigger,
    next_state,
)
from almanac.platform.store.tables import (
    blobs,
    moves,
    plugins,
    requests,
    runs,
    version_files,
    versions,
)

RETAIN_ANSWERS = ("yes", "no", "unknown")
ORIGINS = ("upload", "folder", "portal")
RETRY_AFTER = timedelta(minutes=30)
TAKEDOWN_MESSAGE_MAX = 280
ROLLBACK_REASON_MAX = 500


class UnknownPlugin(LookupError):
    """No plug-in has this id."""


class UnknownVersion(UnknownPlugin):
    """The plug-in keeps no version with this number."""


class LocalNotApprovable(TransitionRefused):
    """The server refuses to approve a `local` plug-in ("What the service does" 8)."""


class PluginRetired(TransitionRefused):
    """The plug-in was retired by its publisher: nothing makes it run again."""


_RETIRED_MAY = frozenset({Trigger.RUN_FAILED, Trigger.RUN_SUCCEEDED, Trigger.PAUSE, Trigger.REMOVE})


class TakedownRefused(Exception):
    """Take down or restore refused: already in that state, or (restore) the code is not the
    code that was taken down ("Listing of a published plug-in", Take down)."""


class TakedownDigest(TakedownRefused):
    """Restore refused: the plug-in is restorable only for the digest taken down."""


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


@dataclass(frozen=True, slots=True)
class ApprovedCode:
    """The approved version's code, to be hashed again before each run."""

    version_id: int
    version: str
    digest: str
    manifest: dict[str, Any]
    files: dict[str, bytes]


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


def _digest_of(conn: Connection, version_id: int | None) -> str | None:
    if version_id is None:
        return None
    digest: str = conn.execute(
        select(versions.c.digest).where(versions.c.id == version_id)
    ).scalar_one()
    return digest


def _facts(conn: Connection, row: Mapping[str, Any], digest_shown: str | None = None) -> Facts:
    ever_ran = conn.execute(
        select(func.count()).select_from(runs).where(runs.c.plugin_id == row["id"])
    ).scalar_one()
    kept: frozenset[str] = frozenset()
    if digest_shown is not None:
        # Only an approval reads them: to tell a stale page from a digest never this plug-in's.
        kept = frozenset(
            conn.execute(select(versions.c.digest).where(versions.c.plugin_id == row["id"]))
            .scalars()
            .all()
        )
    return Facts(
        current_digest=_digest_of(conn, row["current_version_id"]),
        digest_shown=digest_shown,
        approved_digest=_digest_of(conn, row["approved_version_id"]),
        ever_approved=bool(row["ever_approved"]),
        ever_ran=ever_ran > 0,
        kept_digests=kept,
    )


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
    """Keep one move of the plug-in in its history, with who made it and when."""
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


def _apply(
    conn: Connection,
    row: Mapping[str, Any],
    trigger: Trigger,
    by: str,
    now: datetime,
    digest_shown: str | None = None,
) -> tuple[Move, int | None]:
    """Apply the pure rule to the locked row and persist the move; returns the run request id.
    A retired plug-in takes no move but the outcome of a run already under way, a pause and a
    removal: its runs stopped for good."""
    if row.get("retired") and trigger not in _RETIRED_MAY:
        raise PluginRetired(f"plug-in {row['id']} is retired: its runs stopped for good")
    before = State(row["state"]) if row["state"] else None
    move = next_state(before, trigger, _facts(conn, row, digest_shown))
    changes: dict[str, Any] = {"state": str(move.state)}
    version_id = row["current_version_id"]
    if trigger is Trigger.APPROVE:
        changes.update(approved_version_id=version_id, ever_approved=True)
    if trigger is Trigger.RESUME:
        version_id = row["approved_version_id"]
    conn.execute(update(plugins).where(plugins.c.id == row["id"]).values(**changes))
    if move.state != before or trigger not in (Trigger.RUN_FAILED, Trigger.RUN_SUCCEEDED):
        log_move(
            conn,
            row["id"],
            str(trigger),
            by,
            now,
            from_state=str(before) if before else None,
            to_state=str(move.state),
            version_id=version_id,
        )
    request_id = None
    if move.starts is not None:
        request_id = request_run(conn, row["id"], version_id, move.starts, by, now)
    return move, request_id


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
    _apply(
        conn,
        {**row, "current_version_id": version_id, "state": before},
        Trigger.CODE_CHANGED,
        by,
        now,
    )
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


def approve(
    conn: Connection,
    plugin_id: str,
    *,
    digest_shown: str,
    by: str,
    now: datetime,
    removed: bool | None = None,
) -> int:
    """A person approves the current version; refused when `digest_shown` is not the current
    digest (DigestChanged) or the manifest's audience is `local` (LocalNotApprovable). With
    `removed` True only a Removed plug-in is approved (the host's restore), with False only one
    that is not (TransitionRefused). Returns the run request id (the run starts at once)."""
    row = lock_plugin(conn, plugin_id)
    is_removed = row["state"] == State.REMOVED
    if removed is False and is_removed:
        raise TransitionRefused("the plug-in is removed: restore it to approve it again")
    if removed is True and not is_removed:
        raise TransitionRefused(f"only a removed plug-in can be restored, not one {row['state']}")
    if row["current_version_id"] is not None:
        manifest = conn.execute(
            select(versions.c.manifest).where(versions.c.id == row["current_version_id"])
        ).scalar_one()
        if manifest.get("audience") == "local":
            raise LocalNotApprovable(
                "the audience of this version is 'local': it runs on its developer's machine "
                "only, and the server never approves it"
            )
    _, request_id = _apply(conn, row, Trigger.APPROVE, by, now, digest_shown)
    assert request_id is not None
    return request_id


def approved_before(conn: Connection, plugin_id: str, version_id: int) -> bool:
    """Whether a person approved this version of the plug-in at some time (an `approve` move
    names it in the plug-in's history)."""
    query = select(moves.c.id).where(
        moves.c.plugin_id == plugin_id,
        moves.c.action == str(Trigger.APPROVE),
        moves.c.version_id == version_id,
    )
    return conn.execute(query.limit(1)).first() is not None


def roll_back(
    conn: Connection, plugin_id: str, *, version: str, reason: str, by: str, now: datetime
) -> int | None:
    """The host's roll back to version `version` (lifecycle: Trigger.ROLL_BACK): a kept version
    a person approved before becomes the current and approved version again, without a new
    review; the move is recorded with who, when, the reason and both versions. Refused with
    UnknownVersion, NeverApproved, TransitionRefused (Removed, taken down, the current version)
    or ValueError (no reason). Returns the id of the run that starts at once (None when
    Paused)."""
    reason = reason.strip()
    if not reason or len(reason) > ROLLBACK_REASON_MAX:
        raise ValueError(f"a roll back needs a reason of 1 to {ROLLBACK_REASON_MAX} characters")
    row = lock_plugin(conn, plugin_id)
    target = (
        conn.execute(
            select(versions.c.id, versions.c.digest).where(
                versions.c.plugin_id == plugin_id, versions.c.version == version
            )
        )
        .mappings()
        .first()
    )
    if target is None:
        raise UnknownVersion(f"plug-in {plugin_id!r} keeps no version {version}")
    if row["taken_down"]:
        # A takedown is lifted only for the digest taken down; changing it here would strand it.
        raise TransitionRefused(f"plug-in {plugin_id} is taken down; lift the takedown first")
    before = State(row["state"])
    facts = replace(
        _facts(conn, row),
        target_version=version,
        target_digest=target["digest"],
        target_approved_before=approved_before(conn, plugin_id, target["id"]),
    )
    move = next_state(before, Trigger.ROLL_BACK, facts)
    conn.execute(
        update(plugins)
        .where(plugins.c.id == plugin_id)
        .values(
            state=str(move.state),
            current_version_id=target["id"],
            approved_version_id=target["id"],
            ever_approved=True,
        )
    )
    current = conn.execute(
        select(versions.c.version).where(versions.c.id == row["current_version_id"])
    ).scalar()
    log_move(
        conn,
        plugin_id,
        str(Trigger.ROLL_BACK),
        by,
        now,
        from_state=str(before),
        to_state=str(move.state),
        version_id=target["id"],
        detail={
            "reason": reason,
            "from_version": current,
            "from_digest": facts.current_digest,
            "to_version": version,
            "digest": target["digest"],
        },
    )
    if move.starts is None:
        return None
    return request_run(conn, plugin_id, target["id"], move.starts, by, now)


def pause(conn: Connection, plugin_id: str, *, by: str, now: datetime) -> None:
    """A person pauses the plug-in (from Pending only when an earlier version was approved)."""
    _apply(conn, lock_plugin(conn, plugin_id), Trigger.PAUSE, by, now)


def resume(conn: Connection, plugin_id: str, *, by: str, now: datetime) -> int | None:
    """A person resumes: unchanged files -> Approved with a run request (its id returned);
    changed files -> Pending (None)."""
    _, request_id = _apply(conn, lock_plugin(conn, plugin_id), Trigger.RESUME, by, now)
    return request_id


def remove(conn: Connection, plugin_id: str, *, by: str, now: datetime) -> None:
    """A person removes the plug-in; its records are kept."""
    _apply(conn, lock_plugin(conn, plugin_id), Trigger.REMOVE, by, now)


def retire(conn: Connection, plugin_id: str, *, by: str, now: datetime) -> None:
    """ "Listing of a published plug-in", Retire: runs stop for good (an Approved, Failing or
    Pending plug-in becomes Paused, readers keep its records and see it is not updating, and
    no approval, resume or new code moves it again). Retiring again does nothing."""
    row = lock_plugin(conn, plugin_id)
    if row["retired"]:
        return
    if row["state"] in (State.APPROVED, State.FAILING, State.PENDING) and row["ever_approved"]:
        _apply(conn, row, Trigger.PAUSE, by, now)
    conn.execute(update(plugins).where(plugins.c.id == plugin_id).values(retired=True))
    log_move(conn, plugin_id, "retire", by, now)


def record_run_outcome(
    conn: Connection, row: Mapping[str, Any], succeeded: bool, now: datetime
) -> State:
    """Approved -> Failing on a failed run, Failing -> Approved on a success (caller holds the
    plug-in lock)."""
    trigger = Trigger.RUN_SUCCEEDED if succeeded else Trigger.RUN_FAILED
    move, _ = _apply(conn, row, trigger, "run", now)
    return move.state


def record_retain_answer(
    conn: Connection, plugin_id: str, answer: str, *, by: str, now: datetime
) -> None:
    """The answer a person records at the host after reading the terms; from now on it rules
    (Licence and retention)."""
    if answer not in RETAIN_ANSWERS:
        raise ValueError(f"retain must be one of {RETAIN_ANSWERS}, not {answer!r}")
    row = lock_plugin(conn, plugin_id)
    conn.execute(
        update(plugins)
        .where(plugins.c.id == plugin_id)
        .values(retain=answer, retain_recorded_by=by, retain_recorded_at=now)
    )
    log_move(conn, plugin_id, "retain", by, now, detail={"from": row["retain"], "to": answer})


def set_taken_down(
    conn: Connection,
    plugin_id: str,
    taken_down: bool,
    *,
    reason: str | None = None,
    note: str | None = None,
    message: str | None = None,
    digest: str | None = None,
    by: str,
    now: datetime,
) -> None:
    """Take down ("Listing of a published plug-in", Take down): runs stop, a write in progress is
    refused, records are hidden, not deleted; the reason, private note, public message (at most
    280 characters) and the current digest are kept. Restore only while the current digest is
    the digest taken down, and `digest`, when given, names it (else TakedownDigest)."""
    row = lock_plugin(conn, plugin_id)
    current = _digest_of(conn, row["current_version_id"])
    if taken_down:
        if row["taken_down"]:
            raise TakedownRefused(f"plug-in {plugin_id} is already taken down")
        if message is not None and len(message) > TAKEDOWN_MESSAGE_MAX:
            raise ValueError(f"the public message is over {TAKEDOWN_MESSAGE_MAX} characters")
        values: dict[str, Any] = {
            "taken_down": True,
            "takedown_reason": reason,
            "takedown_note": note,
            "takedown_message": message,
            "takedown_digest": current,
        }
        detail: dict[str, Any] = {"reason": reason, "digest": current}
    else:
        if not row["taken_down"]:
            raise TakedownRefused(f"plug-in {plugin_id} is not taken down")
        kept = row["takedown_digest"]
        if current != kept or (digest is not None and digest != kept):
            raise TakedownDigest(
                f"plug-in {plugin_id} was taken down at digest {kept}; it is restorable only "
                f"for that digest, not {digest or current}"
            )
        values = {
            "taken_down": False,
            "takedown_reason": None,
            "takedown_note": None,
            "takedown_message": None,
            "takedown_digest": None,
        }
        detail = {"digest": kept}
    conn.execute(update(plugins).where(plugins.c.id == plugin_id).values(**values))
    log_move(conn, plugin_id, "takedown" if taken_down else "restore", by, now, detail=detail)


def set_shelved(conn: Connection, plugin_id: str, shelved: bool, *, by: str, now: datetime) -> None:
    """Take the plug-in off the shelf (like Unpublish, but only the service lists it again) or
    put it back ("Listing of a published plug-in"); repeated, it does nothing the second time."""
    row = lock_plugin(conn, plugin_id)
    if bool(row["shelved"]) == shelved:
        return
    conn.execute(update(plugins).where(plugins.c.id == plugin_id).values(shelved=shelved))
    log_move(conn, plugin_id, "shelve" if shelved else "unshelve", by, now)


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


def set_publisher(
    conn: Connection, plugin_id: str, organization_id: int | None, *, by: str, now: datetime
) -> None:
    """Name the organization that publishes the plug-in (recorded as a move)."""
    row = lock_plugin(conn, plugin_id)
    if row["publisher_organization_id"] == organization_id:
        return
    conn.execute(
        update(plugins)
        .where(plugins.c.id == plugin_id)
        .values(publisher_organization_id=organization_id)
    )
    log_move(
        conn,
        plugin_id,
        "publisher",
        by,
        now,
        detail={"from": row["publisher_organization_id"], "to": organization_id},
    )


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
        version_id=version["id"],
        version=version["version"],
        digest=version["digest"],
        manifest=version["manifest"],
        files={path: bytes(content) for path, content in files},
    )


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
