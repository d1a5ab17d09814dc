"""The moves of a plug-in ("States and transitions": Approved plug-in; Listing of a published
plug-in; "Licence and retention"): approve, pause, resume, remove, roll back, a run's outcome,
retire, take down and restore, shelve, the publisher and the retain answer.

Each move locks the plug-in's row, asks the pure rule of `lifecycle` where its trigger leads,
writes the row, keeps the move in the plug-in's history with who and when, and leaves a run
request when the move starts a run. Every function takes a connection inside a transaction
(`write_transaction`) and the moment `now`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from datetime import datetime
from typing import Any

from sqlalchemy import Connection, func, select, update

from almanac.platform.errors import Conflict, Invalid
from almanac.platform.lifecycle import Facts, Move, State, TransitionRefused, Trigger, next_state
from almanac.platform.store.history import approved_before, log_move
from almanac.platform.store.plugins import UnknownPlugin, lock_plugin
from almanac.platform.store.run_requests import request_run
from almanac.platform.store.tables import plugins, runs, versions

RETAIN_ANSWERS = ("yes", "no", "unknown")
TAKEDOWN_MESSAGE_MAX = 280
ROLLBACK_REASON_MAX = 500


class UnknownVersion(UnknownPlugin):
    """The plug-in keeps no version with this number."""


class LocalNotApprovable(Invalid, TransitionRefused):
    """The server refuses to approve a `local` plug-in ("What the service does" 8): the
    manifest, not the state, is what refuses it."""

    code = "PLG-LOCAL-NOT-APPROVED"


class PluginRetired(TransitionRefused):
    """The plug-in was retired by its publisher: nothing makes it run again."""


_RETIRED_MAY = frozenset({Trigger.RUN_FAILED, Trigger.RUN_SUCCEEDED, Trigger.PAUSE, Trigger.REMOVE})


class TakedownRefused(Conflict):
    """Take down or restore refused: already in that state, or (restore) the code is not the
    code that was taken down ("Listing of a published plug-in", Take down)."""

    code = "STATE-CONFLICT"


class TakedownDigest(TakedownRefused):
    """Restore refused: the plug-in is restorable only for the digest taken down."""

    code = "TAKEDOWN-DIGEST"


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


def code_changed(conn: Connection, row: Mapping[str, Any], *, by: str, now: datetime) -> None:
    """A version became the plug-in's current one ("(none)/Approved/Failing/Paused -> Pending"
    rows): `row` is the locked row naming the new current version, with the state before it
    (None for the plug-in's first version)."""
    _apply(conn, row, Trigger.CODE_CHANGED, by, now)


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
