"""The host (operators only): register plug-in code, read plug-ins, versions and runs, and make
the moves of the approved-plug-in table, Held decisions, the retain answer, purge, takedown and
the shelf ("States and transitions"; "Licence and retention"; DECISIONS 6). Each move is
recorded in the plug-in's history with the operator's e-mail and the request's moment.

A pack is uploaded as the raw archive bytes (`Content-Type: application/zip`) in the body of
`POST /host/plugins/pack`, not as a multipart form: a client sends the file as it is
(`curl --data-binary @pack.zip`), and the archive read is exactly the bytes that were packed.
A body of any other media type is refused (415 REQUEST-MEDIA-TYPE).

Registering never brings back a kept version or stops the running one by surprise: the code
of a kept version other than the current one is refused (PLG-VERSION-KEPT), and so is a
version with audience `local` (PLG-LOCAL-NOT-APPROVED). Going back to an earlier approved
version is the explicit `POST /host/plugins/{id}/rollback` (version and reason).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Annotated

from fastapi import APIRouter, Depends, Request, status
from sqlalchemy import Connection
from sqlalchemy.orm import Session

from almanac.api.deps import Context, Db, Now, Operator
from almanac.api.problems import ProblemError
from almanac.api.schemas import RowIdQuery, VersionIdPath
from almanac.api.schemas.figures import OperatorFiguresOut
from almanac.api.schemas.host import (
    DigestIn,
    FolderIn,
    HeldDecisionIn,
    HeldDecisionOut,
    HostPluginOut,
    PluginSummaryOut,
    PurgeIn,
    PurgeOut,
    RegisteredOut,
    RetentionIn,
    RollbackIn,
    RunOut,
    TakedownIn,
    VersionOut,
)
from almanac.platform import figures, hosting
from almanac.platform.contract.pack import MAX_ARCHIVE_BYTES, check_folder, check_pack
from almanac.platform.publishing.publication.rollout_states import host_stops
from almanac.platform.publishing.uploads.check_queue import archive_of_folder, queue_version_checks
from almanac.platform.store import moves
from almanac.platform.store.held import decide_held
from almanac.platform.store.plugins import all_plugins, plugin_status
from almanac.platform.store.reading import last_runs
from almanac.platform.store.retention import purge

router = APIRouter(prefix="/host", tags=["host"])

PACK_BODY_LIMIT = 2 * MAX_ARCHIVE_BYTES
"""The body limit of the pack route: above the archive limit, so that an archive just over it
is answered PLG-ZIP-TOO-LARGE rather than by the generic body limit."""


@contextmanager
def _write(db: Session) -> Iterator[Connection]:
    """The request's own transaction, committed when the block ends. It began with the store's
    write lock (see `deps.get_db`): a second transaction here would wait for this one."""
    yield db.connection()
    db.commit()


def _page_after(db: Session, plugin_id: str) -> HostPluginOut:
    return HostPluginOut.read(db.connection(), plugin_id)


PACK_MEDIA_TYPE = "application/zip"


async def _archive(request: Request) -> bytes:
    """The raw body, only when sent as `Content-Type: application/zip` (else 415): a form or
    JSON body is not an archive, and refusing it says so rather than a ZIP problem."""
    media_type = request.headers.get("content-type", "").split(";", 1)[0].strip().lower()
    if media_type != PACK_MEDIA_TYPE:
        sent = f"Content-Type {media_type}" if media_type else "no Content-Type"
        raise ProblemError(
            415,
            "REQUEST-MEDIA-TYPE",
            f"the pack is sent as the raw archive with Content-Type {PACK_MEDIA_TYPE}, "
            f"not with {sent}",
        )
    return await request.body()


@router.post(
    "/plugins/pack",
    status_code=status.HTTP_201_CREATED,
    response_model=RegisteredOut,
    openapi_extra={
        "requestBody": {
            "required": True,
            "content": {"application/zip": {"schema": {"type": "string", "format": "binary"}}},
        }
    },
)
def register_pack(
    archive: Annotated[bytes, Depends(_archive)],
    operator: Operator,
    ctx: Context,
    db: Db,
    now: Now,
    publisher_organization_id: RowIdQuery = None,
) -> RegisteredOut:
    """Register a plug-in version from a pack archive (DECISIONS 5) sent as the raw body. The
    archive and the code are checked (Upload limits, Archive entries, Code file types, the
    manifest, the folder rules that need no Node, Versioning 4); a refusal stores nothing.
    The plug-in moves to Pending; the same files again change nothing. The locked-room checks
    of the version (as an upload's) are queued for the checks job and shown on its version
    page."""
    # The body is read before the role check (the parameter order), and the role check's
    # transaction ends here: on the embedded default it holds the one write lock, which the
    # slow archive checks must not.
    db.commit()
    code = check_pack(archive)
    with _write(db) as conn:
        done = hosting.register_code(
            conn,
            code,
            origin="upload",
            by=operator.email,
            now=now,
            publisher_organization_id=publisher_organization_id,
        )
        queue_version_checks(db, done.version_id, archive, now)
    return RegisteredOut.of(done, ctx.settings.base_url)


@router.post("/plugins/folder", status_code=status.HTTP_201_CREATED, response_model=RegisteredOut)
def register_folder(
    body: FolderIn, operator: Operator, ctx: Context, db: Db, now: Now
) -> RegisteredOut:
    """Register a plug-in version from a folder on the server (the service's own plug-ins),
    checked as a pack of it would be."""
    folder = Path(body.path)
    if not folder.is_absolute() or not folder.is_dir():
        raise ProblemError(
            422, "REQUEST-INVALID", "path: give the absolute path of a folder on the server"
        )
    db.commit()  # as register_pack: the slow checks hold no write lock
    code = check_folder(folder)
    with _write(db) as conn:
        done = hosting.register_code(
            conn,
            code,
            origin="folder",
            by=operator.email,
            now=now,
            publisher_organization_id=body.publisher_organization_id,
        )
        queue_version_checks(db, done.version_id, archive_of_folder(folder), now)
    return RegisteredOut.of(done, ctx.settings.base_url)


@router.get("/figures", response_model=OperatorFiguresOut)
def host_figures(operator: Operator, db: Db, now: Now, days: int = 1) -> OperatorFiguresOut:
    """Runs per hour by outcome, the longest wait from due to start, the queue now and run
    duration percentiles, over the last day (1) or week (7)."""
    return OperatorFiguresOut.model_validate(figures.operator_figures(db.connection(), days, now))


@router.get("/plugins", response_model=list[PluginSummaryOut])
def list_plugins(operator: Operator, db: Db) -> list[PluginSummaryOut]:
    """Every plug-in ever registered, removed ones too, by id."""
    return [PluginSummaryOut.of(s) for s in all_plugins(db.connection())]


@router.get("/plugins/{plugin_id}", response_model=HostPluginOut)
def show_plugin(plugin_id: str, operator: Operator, db: Db) -> HostPluginOut:
    """The plug-in page: state, flags, retain answer with the licence terms, versions, the last
    five runs with their reasons, held details and every move with who and when."""
    return HostPluginOut.read(db.connection(), plugin_id)


@router.get("/plugins/{plugin_id}/versions/{version_id}", response_model=VersionOut)
def show_version(
    plugin_id: str, version_id: VersionIdPath, operator: Operator, ctx: Context, db: Db
) -> VersionOut:
    """One version: digest, manifest, covered files (path, size, SHA-256) and its checks (the
    manifest, and Versioning rule 4 against the approved version)."""
    return VersionOut.read(db.connection(), plugin_id, version_id, ctx.settings.base_url)


@router.get("/plugins/{plugin_id}/runs", response_model=list[RunOut])
def runs(plugin_id: str, operator: Operator, db: Db) -> list[RunOut]:
    """The last five runs, newest first, with their sources and, for a failed run, its reason
    ("The write" 2 and 4)."""
    conn = db.connection()
    plugin_status(conn, plugin_id)
    return [RunOut.model_validate(run) for run in last_runs(conn, plugin_id)]


@router.post("/plugins/{plugin_id}/approve", response_model=HostPluginOut)
def approve(plugin_id: str, body: DigestIn, operator: Operator, db: Db, now: Now) -> HostPluginOut:
    """Pending -> Approved for exactly the digest the page showed (else 409 DIGEST-CHANGED, or
    DIGEST-NOT-CURRENT for a digest never this plug-in's); the run starts at once. A Removed
    plug-in is brought back by `restore`; an earlier approved version by `rollback`."""
    with _write(db) as conn:
        moves.approve(
            conn, plugin_id, digest_shown=body.digest, by=operator.email, now=now, removed=False
        )
    return _page_after(db, plugin_id)


@router.post("/plugins/{plugin_id}/restore", response_model=HostPluginOut)
def restore(plugin_id: str, body: DigestIn, operator: Operator, db: Db, now: Now) -> HostPluginOut:
    """Removed -> Approved (a person approves it again; its kept records are used again), for
    exactly the digest the page showed."""
    with _write(db) as conn:
        moves.approve(
            conn, plugin_id, digest_shown=body.digest, by=operator.email, now=now, removed=True
        )
    return _page_after(db, plugin_id)


@router.post("/plugins/{plugin_id}/rollback", response_model=HostPluginOut)
def roll_back(
    plugin_id: str, body: RollbackIn, operator: Operator, db: Db, now: Now
) -> HostPluginOut:
    """Roll back to a kept version a person approved before: it becomes the current and
    approved version again without a new review and runs at once (a Paused plug-in stays
    Paused); the move is kept with who, when and the reason. 404 for a version not kept,
    409 ROLLBACK-NOT-APPROVED for one never approved, 409 STATE-CONFLICT for the current
    version, a Removed or a taken-down plug-in."""
    try:
        with _write(db) as conn:
            moves.roll_back(
                conn,
                plugin_id,
                version=body.version,
                reason=body.reason,
                by=operator.email,
                now=now,
            )
    except ValueError as error:  # a reason of nothing but what Python strips as white space
        raise ProblemError(422, "REQUEST-INVALID", f"reason: {error}") from None
    return _page_after(db, plugin_id)


@router.post("/plugins/{plugin_id}/pause", response_model=HostPluginOut)
def pause(plugin_id: str, operator: Operator, db: Db, now: Now) -> HostPluginOut:
    """Approved or Failing -> Paused (from Pending only when an earlier version was approved)."""
    with _write(db) as conn:
        moves.pause(conn, plugin_id, by=operator.email, now=now)
    return _page_after(db, plugin_id)


@router.post("/plugins/{plugin_id}/resume", response_model=HostPluginOut)
def resume(plugin_id: str, operator: Operator, db: Db, now: Now) -> HostPluginOut:
    """Paused -> Approved when the files are unchanged (a run starts at once), else Pending."""
    with _write(db) as conn:
        moves.resume(conn, plugin_id, by=operator.email, now=now)
    return _page_after(db, plugin_id)


@router.post("/plugins/{plugin_id}/remove", response_model=HostPluginOut)
def remove(plugin_id: str, operator: Operator, db: Db, now: Now) -> HostPluginOut:
    """Any state but Removed -> Removed: the plug-in leaves the app; its records are kept."""
    with _write(db) as conn:
        moves.remove(conn, plugin_id, by=operator.email, now=now)
    return _page_after(db, plugin_id)


@router.post("/plugins/{plugin_id}/held", response_model=HeldDecisionOut)
def decide(
    plugin_id: str, body: HeldDecisionIn, operator: Operator, db: Db, now: Now
) -> HeldDecisionOut:
    """Held: Accept removals (the held records still missing are withdrawn) or Keep them (their
    misses start over); 409 NOTHING-HELD when nothing waits."""
    with _write(db) as conn:
        withdrawn = decide_held(
            conn,
            plugin_id,
            accept=body.decision == "accept-removals",
            by=operator.email,
            now=now,
        )
    return HeldDecisionOut.read(db.connection(), plugin_id, withdrawn)


@router.post("/plugins/{plugin_id}/retention", response_model=HostPluginOut)
def record_retention(
    plugin_id: str, body: RetentionIn, operator: Operator, db: Db, now: Now
) -> HostPluginOut:
    """Record the retain answer after reading the terms shown on the plug-in page
    (`terms_read` must be true); from now on it is the answer the service acts on."""
    with _write(db) as conn:
        moves.record_retain_answer(conn, plugin_id, body.answer, by=operator.email, now=now)
    return _page_after(db, plugin_id)


@router.get("/plugins/{plugin_id}/purge", response_model=PurgeOut)
def purge_dry_run(plugin_id: str, operator: Operator, db: Db, now: Now) -> PurgeOut:
    """The purge's dry run: how many records and revisions it would remove; removes nothing.
    Offered only while the retain answer is `no` (else 409 PURGE-NOT-OFFERED)."""
    count = purge(
        db.connection(), plugin_id, typed_id=None, dry_run=True, by=operator.email, now=now
    )
    return PurgeOut.model_validate(count)


@router.post("/plugins/{plugin_id}/purge", response_model=PurgeOut)
def purge_records(plugin_id: str, body: PurgeIn, operator: Operator, db: Db, now: Now) -> PurgeOut:
    """Remove every record and revision of the plug-in in one transaction, irreversibly; run
    history stays. `typed_id` must be the plug-in id (else 422 PLG-PURGE-CONFIRM)."""
    with _write(db) as conn:
        count = purge(
            conn, plugin_id, typed_id=body.typed_id, dry_run=False, by=operator.email, now=now
        )
    return PurgeOut.model_validate(count)


@router.post("/plugins/{plugin_id}/takedown", response_model=HostPluginOut)
def take_down(
    plugin_id: str, body: TakedownIn, operator: Operator, db: Db, now: Now
) -> HostPluginOut:
    """Take down with a reason, a private note and a public message of at most 280 characters:
    runs stop, a write in progress is refused, records are hidden, not deleted."""
    with _write(db) as conn:
        moves.set_taken_down(
            conn,
            plugin_id,
            True,
            reason=body.reason,
            note=body.note,
            message=body.message,
            by=operator.email,
            now=now,
        )
        host_stops(db, plugin_id, "takedown", by=operator.email, now=now)
    return _page_after(db, plugin_id)


@router.post("/plugins/{plugin_id}/takedown/restore", response_model=HostPluginOut)
def restore_taken_down(
    plugin_id: str, body: DigestIn, operator: Operator, db: Db, now: Now
) -> HostPluginOut:
    """Lift a takedown, only for the digest taken down (else 409 TAKEDOWN-DIGEST)."""
    with _write(db) as conn:
        moves.set_taken_down(conn, plugin_id, False, digest=body.digest, by=operator.email, now=now)
    return _page_after(db, plugin_id)


@router.post("/plugins/{plugin_id}/take-off-shelf", response_model=HostPluginOut)
def take_off_shelf(plugin_id: str, operator: Operator, db: Db, now: Now) -> HostPluginOut:
    """Take off the shelf: like Unpublish, but only the service lists it again; repeated, it
    does nothing the second time."""
    with _write(db) as conn:
        moves.set_shelved(conn, plugin_id, True, by=operator.email, now=now)
        host_stops(db, plugin_id, "shelf", by=operator.email, now=now)
    return _page_after(db, plugin_id)


@router.post("/plugins/{plugin_id}/put-on-shelf", response_model=HostPluginOut)
def put_on_shelf(plugin_id: str, operator: Operator, db: Db, now: Now) -> HostPluginOut:
    """Put a plug-in the service took off the shelf back in the store."""
    with _write(db) as conn:
        moves.set_shelved(conn, plugin_id, False, by=operator.email, now=now)
    return _page_after(db, plugin_id)
