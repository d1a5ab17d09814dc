"""Rollouts of a published update (README, Rollouts): the shadow runs that prove it on live
sources before readers see it, its promotion, its automatic hold, the publisher's moves
(promote early, stop, roll back) and what the portal, the host and the review desk show.

A run of the plug-in asks `shadow_code` for the version shadowing it, runs it on the same
downloads, and hands its outcome to `record_shadow_run` once the current version's batch is
written; nothing the shadow version prints is stored as a record."""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import date, datetime
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from almanac.platform.accounts.models import Account
from almanac.platform.contract.manifest import Manifest
from almanac.platform.contract.pack import check_code, read_pack
from almanac.platform.errors import Conflict, Invalid, NotFound, Refusal
from almanac.platform.lifecycle import RunTrigger
from almanac.platform.mail import MailMessage
from almanac.platform.publishing.identity.roles import require_manager, require_member, who
from almanac.platform.publishing.models import (
    PortalUpload,
    Rollout,
    RolloutState,
    ShadowRun,
    UploadState,
)
from almanac.platform.publishing.publication.notices import tell_managers
from almanac.platform.publishing.publication.publication import (
    publish_approved,
    show_in_listing,
)
from almanac.platform.publishing.publication.rollout_states import UNDER_WAY, end
from almanac.platform.publishing.uploads.diff import KINDS, record_diff
from almanac.platform.publishing.uploads.upload_states import move
from almanac.platform.store import moves
from almanac.platform.store.models import StoreListing
from almanac.platform.store.tables import plugins, versions
from almanac.platform.store.write import held_limit_exceeded

log = logging.getLogger(__name__)

REASON_MAX = 500
AUTOMATIC = "the shadow period"
"""Who `by` names when a rollout is promoted or held by its own shadow runs."""


@dataclass(frozen=True, slots=True)
class ShadowCode:
    """The version shadowing a plug-in: its rollout and its approved code, hashed again."""

    rollout_id: int
    version: str
    digest: str
    manifest: Manifest
    files: Mapping[str, bytes]


@dataclass(frozen=True, slots=True)
class ShadowRunView:
    """One shadow run: the current version's run it shadowed, whether it passed and why not,
    the time the shadow version took, and the diff's counts per series (`summary`)."""

    id: int
    run_id: int
    today: date
    passed: bool
    reason: str | None
    seconds: float
    at: datetime
    summary: dict[str, dict[str, int]]
    removed_series: dict[str, int]


@dataclass(frozen=True, slots=True)
class RolloutView:
    """A rollout as the portal, the tool, the host and the desk show it."""

    id: int
    organization_id: int
    plugin_id: str
    upload_id: int
    version: str
    from_version: str
    state: RolloutState
    shadow_runs: int
    runs_done: int
    started_by: str
    started_at: datetime
    ended_by: str | None
    ended_at: datetime | None
    reason: str | None
    shadows: tuple[ShadowRunView, ...]


@dataclass(frozen=True, slots=True)
class ShadowOutcome:
    """What one shadow run changed: its view, the rollout's state after it, and the mail to
    send once committed (a hold)."""

    shadow: ShadowRunView
    state: RolloutState
    version: str
    mails: tuple[MailMessage, ...]


# -- the run's side ----------------------------------------------------------------------------

SHADOWED_TRIGGERS = frozenset({RunTrigger.SCHEDULE, RunTrigger.RETRY})
"""The runs a shadow version runs beside: the plug-in's scheduled runs ("Running rules" 1),
and the retry of one ("Running rules" 4), which stands for the scheduled run that failed."""


def shadows_run(trigger: RunTrigger, *, backfill: bool) -> bool:
    """Whether a run of `trigger` is one of "the plug-in's next N scheduled runs" a rollout
    shadows (README, Rollouts). A retry counts as the scheduled run it retries: a run whose
    current version failed kept no shadow run, so the scheduled time is shadowed once. A
    resume, an approval or a first run ("Running rules" 3: they start at once) is not a
    scheduled run, and a partition backfill (DECISIONS 8) re-runs a past day; neither is
    shadowed, nor a run whose context is a backfill (nothing stored to compare with)."""
    return trigger in SHADOWED_TRIGGERS and not backfill


def shadow_code(db: Session, plugin_id: str) -> ShadowCode | None:
    """The version shadowing the plug-in now (a rollout shadowing, its upload still approved),
    its archive's code hashed again; None when none is. A rollout whose code no longer hashes
    to its digest is held at once ("What the service does" 4: only the approved digest runs)."""
    rollout = db.scalars(
        select(Rollout).where(
            Rollout.plugin_id == plugin_id, Rollout.state == RolloutState.SHADOWING
        )
    ).first()
    if rollout is None:
        return None
    upload = db.get(PortalUpload, rollout.upload_id)
    assert upload is not None
    if upload.state != UploadState.APPROVED:
        return None
    unpacked = read_pack(upload.archive)
    code = check_code(unpacked.folder, unpacked.files, unpacked.pack_info)
    if code.digest != rollout.digest:
        return None
    return ShadowCode(rollout.id, rollout.version, code.digest, code.manifest, code.files)


def record_shadow_run(
    db: Session,
    rollout_id: int,
    *,
    run_id: int,
    today: date,
    batch: Sequence[Mapping[str, Any]] | None,
    failure: str | None,
    seconds: float,
    now: datetime,
    base_url: str,
) -> ShadowOutcome:
    """Keep one shadow run of the rollout, after the current version's run `run_id` wrote
    its batch: `failure` when the shadow version failed (nothing compared), else its checked
    `batch`, compared with the stored records through the checks' record diff. A failure, or
    a series whose missing records exceed the Held limits, holds the rollout (one notice and
    mail to owners and admins); the last of its runs passing promotes it. The mail links the
    rollout on the plug-in's portal page under `base_url` (`ALMANAC_BASE_URL`)."""
    rollout = db.get(Rollout, rollout_id)
    assert rollout is not None
    diff: dict[str, Any] | None = None
    reason = failure
    if batch is not None:
        manifest = shadow_manifest(db, rollout)
        found = record_diff(db.connection(), manifest, batch, today)
        assert found is not None, "a rollout shadows a stored plug-in"
        diff = found.as_dict()
        reason = _beyond_held_limits(found.series, found.windows)
    row = ShadowRun(
        rollout_id=rollout.id,
        run_id=run_id,
        today=today,
        passed=reason is None,
        reason=reason,
        diff=diff,
        seconds=seconds,
        at=now,
    )
    db.add(row)
    db.flush()
    mails: list[MailMessage] = []
    if reason is not None:
        mails = _hold(db, rollout, run_id, reason, now, base_url)
    elif _passed_runs(db, rollout) >= rollout.shadow_runs:
        mails = _promote_or_hold(db, rollout, run_id, now, base_url)
    return ShadowOutcome(
        _shadow_view(row), RolloutState(rollout.state), rollout.version, tuple(mails)
    )


def shadow_manifest(db: Session, rollout: Rollout) -> Manifest:
    upload = db.get(PortalUpload, rollout.upload_id)
    assert upload is not None
    unpacked = read_pack(upload.archive)
    return check_code(unpacked.folder, unpacked.files, unpacked.pack_info).manifest


def _beyond_held_limits(series: Mapping[str, Any], windows: Mapping[str, int]) -> str | None:
    """Why the shadow's records would withdraw more than the Held limits allow, were it
    current: a series leaving out more than 10 stored records of its snapshot window, or more
    than 1% of a window of 100 or more ("States and transitions", Held); None when none does."""
    for key, counts in sorted(series.items()):
        if held_limit_exceeded(counts.missing, windows.get(key, 0)):
            return (
                f"series {key}: the new version leaves out {counts.missing} of the "
                f"{windows.get(key, 0)} records of its snapshot window, more than the Held "
                "limits allow (10, or 1% of a window of 100 or more)"
            )
    return None


def _passed_runs(db: Session, rollout: Rollout) -> int:
    return len(
        list(
            db.scalars(
                select(ShadowRun.id).where(
                    ShadowRun.rollout_id == rollout.id, ShadowRun.passed.is_(True)
                )
            )
        )
    )


def _promote_or_hold(
    db: Session, rollout: Rollout, run_id: int, now: datetime, base_url: str
) -> list[MailMessage]:
    """Promote after the last shadow run passed; a promotion refused now (the plug-in taken
    down meanwhile, its version no longer greater) holds the rollout with that reason."""
    try:
        with db.begin_nested():
            _promote(db, rollout, AUTOMATIC, f"{rollout.shadow_runs} shadow runs passed", now)
    except Refusal as refused:
        why = f"the promotion was refused: {refused}"
        return _hold(db, rollout, run_id, why, now, base_url)
    return []


def rollout_page(base_url: str, rollout: Rollout) -> str:
    """The rollout on its plug-in's portal page under the service's public address: a mail
    links the page a person opens, never an API path."""
    return (
        f"{base_url.rstrip('/')}/portal/{rollout.organization_id}/plugins/"
        f"{rollout.plugin_id}#rollout-{rollout.id}"
    )


def _hold(
    db: Session, rollout: Rollout, run_id: int, reason: str, now: datetime, base_url: str
) -> list[MailMessage]:
    end(db, rollout, RolloutState.HELD, reason=f"run {run_id}: {reason}", by=AUTOMATIC, now=now)
    log.warning("rollout %s of %s held: %s", rollout.id, rollout.plugin_id, reason)
    return tell_managers(
        db,
        rollout.organization_id,
        plugin_id=rollout.plugin_id,
        upload_id=rollout.upload_id,
        kind="rollout-held",
        subject=f"Rollout held: {rollout.plugin_id} {rollout.version}",
        body=(
            f"The shadow run of version {rollout.version} of {rollout.plugin_id} beside run "
            f"{run_id} stopped its rollout on {now:%Y-%m-%d %H:%M} UTC.\n\n"
            f"Reason: {reason}\n\n"
            "The current version keeps running untouched; nothing the new version printed "
            "was stored. Fix the update and publish it again, or stop the rollout:\n"
            f"{rollout_page(base_url, rollout)}\n"
        ),
        now=now,
    )


def _promote(db: Session, rollout: Rollout, by: str, reason: str, now: datetime) -> None:
    """The new version becomes current as publishing makes it (superseded, history, readers
    move at the next run); the upload it supersedes is kept for a roll back."""
    upload = db.get(PortalUpload, rollout.upload_id)
    assert upload is not None
    superseded = db.scalars(
        select(PortalUpload.id).where(
            PortalUpload.plugin_id == rollout.plugin_id,
            PortalUpload.state == UploadState.PUBLISHED,
        )
    ).first()
    publish_approved(db, upload, by, now, rollout_id=rollout.id)
    rollout.superseded_upload_id = superseded
    end(db, rollout, RolloutState.PROMOTED, reason=reason, by=by, now=now)


# -- the publisher's moves ---------------------------------------------------------------------


def _reason(reason: str) -> str:
    cleaned = reason.strip()
    if not cleaned or len(cleaned) > REASON_MAX:
        raise Invalid(f"reason: say why, in 1 to {REASON_MAX} characters")
    return cleaned


def _asked(
    db: Session, organization_id: int, actor: Account, plugin_id: str, reason: str, doing: str
) -> tuple[Rollout, str]:
    """A publisher's move on the plug-in's latest rollout: by owners and admins (or an agent
    allowed to publish), with a reason; the rollout and the reason as kept."""
    require_manager(db, organization_id, actor, doing)
    why = _reason(reason)
    return _latest(db, organization_id, plugin_id), why


def _latest(db: Session, organization_id: int, plugin_id: str) -> Rollout:
    rollout = db.scalars(
        select(Rollout)
        .where(Rollout.organization_id == organization_id, Rollout.plugin_id == plugin_id)
        .order_by(Rollout.id.desc())
        .limit(1)
    ).first()
    if rollout is None:
        raise NotFound(f"the organization has no rollout of a plug-in {plugin_id!r}")
    return rollout


def promote(
    db: Session,
    organization_id: int,
    actor: Account,
    plugin_id: str,
    reason: str,
    now: datetime,
    *,
    agent_name: str | None = None,
) -> RolloutView:
    """Promote the shadowing version before its shadow period ends (owners and admins, or an
    agent allowed to publish); STATE-CONFLICT unless a rollout is shadowing."""
    rollout, why = _asked(db, organization_id, actor, plugin_id, reason, "promote versions")
    if rollout.state != RolloutState.SHADOWING:
        raise Conflict(
            f"the rollout of {plugin_id} {rollout.version} is {rollout.state}; only a shadowing "
            "one is promoted"
        )
    _promote(db, rollout, who(actor, agent_name), why, now)
    return rollout_view(db, rollout)


def stop(
    db: Session,
    organization_id: int,
    actor: Account,
    plugin_id: str,
    reason: str,
    now: datetime,
    *,
    agent_name: str | None = None,
) -> RolloutView:
    """Stop a rollout under way (shadowing or held): the current version keeps running, the
    new one stays approved and unpublished. STATE-CONFLICT when none is under way."""
    rollout, why = _asked(db, organization_id, actor, plugin_id, reason, "stop rollouts")
    if RolloutState(rollout.state) not in UNDER_WAY:
        raise Conflict(
            f"the rollout of {plugin_id} {rollout.version} is {rollout.state}; only one "
            "shadowing or held is stopped"
        )
    end(db, rollout, RolloutState.STOPPED, reason=why, by=who(actor, agent_name), now=now)
    return rollout_view(db, rollout)


def roll_back(
    db: Session,
    organization_id: int,
    actor: Account,
    plugin_id: str,
    reason: str,
    now: datetime,
    *,
    agent_name: str | None = None,
) -> RolloutView:
    """After a promotion, go back to the version it superseded (owners and admins, or an agent
    allowed to publish), with a reason: its code approval stands (it was reviewed), it is
    current at once through the host's own roll back move (recorded, shown at the host), its
    upload published again. Records the rolled-back version wrote stay, as revisions once
    rewritten. STATE-CONFLICT unless the latest rollout is promoted and still current."""
    rollout, why = _asked(db, organization_id, actor, plugin_id, reason, "roll back versions")
    conn = db.connection()
    current = conn.execute(
        select(versions.c.digest)
        .join(plugins, plugins.c.approved_version_id == versions.c.id)
        .where(plugins.c.id == plugin_id)
    ).scalar()
    if rollout.state != RolloutState.PROMOTED or current != rollout.digest:
        raise Conflict(
            f"the latest rollout of {plugin_id} ({rollout.version}) is {rollout.state}"
            + ("" if current == rollout.digest else ", and its version is no longer current")
            + "; only a promoted version still current is rolled back"
        )
    earlier = conn.execute(
        select(versions.c.version).where(versions.c.id == rollout.from_version_id)
    ).scalar_one()
    by = who(actor, agent_name)
    moves.roll_back(conn, plugin_id, version=earlier, reason=why, by=by, now=now)
    upload = db.get(PortalUpload, rollout.upload_id)
    assert upload is not None
    move(upload, UploadState.SUPERSEDED)
    if rollout.superseded_upload_id is not None:
        back = db.get(PortalUpload, rollout.superseded_upload_id)
        assert back is not None
        move(back, UploadState.PUBLISHED)
        listing = db.get(StoreListing, plugin_id)
        if listing is not None:
            show_in_listing(listing, back, read_pack(back.archive).files)
    end(db, rollout, RolloutState.ROLLED_BACK, reason=why, by=by, now=now)
    return rollout_view(db, rollout)


# -- what people see ---------------------------------------------------------------------------


def _shadow_view(row: ShadowRun) -> ShadowRunView:
    diff = row.diff or {}
    return ShadowRunView(
        id=row.id,
        run_id=row.run_id,
        today=row.today,
        passed=row.passed,
        reason=row.reason,
        seconds=row.seconds,
        at=row.at,
        summary={
            key: {kind: int(counts[kind]) for kind in KINDS}
            for key, counts in diff.get("series", {}).items()
        },
        removed_series={r["series"]: int(r["records"]) for r in diff.get("removed_series", [])},
    )


def rollout_view(db: Session, rollout: Rollout) -> RolloutView:
    shadows = tuple(
        _shadow_view(r)
        for r in db.scalars(
            select(ShadowRun).where(ShadowRun.rollout_id == rollout.id).order_by(ShadowRun.id)
        )
    )
    from_version = (
        db.connection()
        .execute(select(versions.c.version).where(versions.c.id == rollout.from_version_id))
        .scalar_one()
    )
    return RolloutView(
        id=rollout.id,
        organization_id=rollout.organization_id,
        plugin_id=rollout.plugin_id,
        upload_id=rollout.upload_id,
        version=rollout.version,
        from_version=from_version,
        state=RolloutState(rollout.state),
        shadow_runs=rollout.shadow_runs,
        runs_done=len(shadows),
        started_by=rollout.started_by,
        started_at=rollout.started_at,
        ended_by=rollout.ended_by,
        ended_at=rollout.ended_at,
        reason=rollout.reason,
        shadows=shadows,
    )


def plugin_rollouts(
    db: Session, organization_id: int, viewer: Account, plugin_id: str
) -> list[RolloutView]:
    """The plug-in's rollouts, newest first (members)."""
    require_member(db, organization_id, viewer)
    rows = db.scalars(
        select(Rollout)
        .where(Rollout.organization_id == organization_id, Rollout.plugin_id == plugin_id)
        .order_by(Rollout.id.desc())
    )
    return [rollout_view(db, r) for r in rows]


def latest_rollouts(db: Session, organization_id: int) -> dict[str, RolloutView]:
    """Each plug-in's latest rollout in the organization, by plug-in id (for `status`)."""
    rows = db.scalars(
        select(Rollout).where(Rollout.organization_id == organization_id).order_by(Rollout.id)
    )
    return {r.plugin_id: rollout_view(db, r) for r in rows}


def rollouts_in_progress(db: Session) -> list[RolloutView]:
    """Every rollout under way (shadowing or held), for the host page, oldest first."""
    rows = db.scalars(
        select(Rollout)
        .where(Rollout.state.in_([str(s) for s in UNDER_WAY]))
        .order_by(Rollout.started_at)
    )
    return [rollout_view(db, r) for r in rows]


def upload_shadow_runs(db: Session, upload_id: int) -> list[ShadowRunView]:
    """The shadow runs of an upload's version (the review desk shows them when they exist)."""
    rows = db.scalars(
        select(ShadowRun)
        .join(Rollout, Rollout.id == ShadowRun.rollout_id)
        .where(Rollout.upload_id == upload_id)
        .order_by(ShadowRun.id)
    )
    return [_shadow_view(r) for r in rows]


@dataclass(frozen=True, slots=True)
class ShadowDiff:
    """One shadow run and its full record diff (None when the run failed: nothing compared)."""

    plugin_id: str
    version: str
    shadow: ShadowRunView
    diff: dict[str, Any] | None


def _shadow_diff(db: Session, shadow_id: int, belongs: Callable[[Rollout], bool]) -> ShadowDiff:
    row = db.get(ShadowRun, shadow_id)
    rollout = None if row is None else db.get(Rollout, row.rollout_id)
    if row is None or rollout is None or not belongs(rollout):
        raise NotFound(f"no shadow run {shadow_id} here")
    return ShadowDiff(rollout.plugin_id, rollout.version, _shadow_view(row), row.diff)


def shadow_diff(
    db: Session, organization_id: int, viewer: Account, plugin_id: str, shadow_id: int
) -> ShadowDiff:
    """One shadow run of the organization's plug-in with its full record diff (members)."""
    require_member(db, organization_id, viewer)
    return _shadow_diff(
        db,
        shadow_id,
        lambda r: r.organization_id == organization_id and r.plugin_id == plugin_id,
    )


def upload_shadow_diff(db: Session, upload_id: int, shadow_id: int) -> ShadowDiff:
    """One shadow run of the upload's version with its full record diff (the review desk's;
    the caller checks the reviewer)."""
    return _shadow_diff(db, shadow_id, lambda r: r.upload_id == upload_id)
