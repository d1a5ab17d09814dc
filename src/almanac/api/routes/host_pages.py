"""The host's answers built from the store's reads: each store dataclass is mapped to its API
model here, field by field, so that mypy checks both sides of every mapping."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, TypedDict

from sqlalchemy import Connection

from almanac.api.schemas.host import (
    FileOut,
    FindingOut,
    HeldSeriesOut,
    HostPluginOut,
    LicenceOut,
    MoveOut,
    PluginSummaryOut,
    RetentionOut,
    RoomCheckOut,
    RunOut,
    RunSourceOut,
    TakedownOut,
    VersionChecksOut,
    VersionOut,
    VersionRefOut,
)
from almanac.platform import hosting
from almanac.platform.contract.problems import Problem, docs_link
from almanac.platform.publishing.check_queue import version_room_checks
from almanac.platform.store.history import RecordedMove, plugin_moves
from almanac.platform.store.plugins import PluginStatus, plugin_status
from almanac.platform.store.reading import HeldDetail, StoredRun, held_details, last_runs
from almanac.platform.store.versions import KeptVersion, plugin_versions, version_detail


def findings(problems: Sequence[Problem], base_url: str) -> list[FindingOut]:
    """The problems as `check --json` prints them, with docs links under `base_url`."""
    return [
        FindingOut(
            code=p.code,
            severity=p.severity,
            message=p.message,
            fix=p.fix,
            docs=docs_link(p.code, base_url),
            path=p.path,
            line=p.line,
        )
        for p in problems
    ]


class _Summary(TypedDict):
    """The fields of `PluginSummaryOut`, which `HostPluginOut` extends."""

    id: str
    state: str
    current_version: str | None
    current_digest: str | None
    approved_version: str | None
    approved_digest: str | None
    retain: str
    held: bool
    taken_down: bool
    shelved: bool


def _summary(s: PluginStatus) -> _Summary:
    return _Summary(
        id=s.id,
        state=str(s.state),
        current_version=s.current_version,
        current_digest=s.current_digest,
        approved_version=s.approved_version,
        approved_digest=s.approved_digest,
        retain=s.retain,
        held=s.held,
        taken_down=s.taken_down,
        shelved=s.shelved,
    )


def summary(s: PluginStatus) -> PluginSummaryOut:
    """A plug-in as the host's list shows it."""
    return PluginSummaryOut(**_summary(s))


def run_out(run: StoredRun) -> RunOut:
    """A kept run with its sources in order."""
    return RunOut(
        id=run.id,
        version_id=run.version_id,
        digest=run.digest,
        node_version=run.node_version,
        layers=run.layers,
        trigger=run.trigger,
        today=run.today,
        backfill=run.backfill,
        started_at=run.started_at,
        ended_at=run.ended_at,
        outcome=run.outcome,
        reason=run.reason,
        new=run.new,
        revised=run.revised,
        unchanged=run.unchanged,
        moved=run.moved,
        missed=run.missed,
        withdrawn=run.withdrawn,
        returned=run.returned,
        sources=[
            RunSourceOut(
                position=s.position,
                name=s.name,
                final_url=s.final_url,
                bytes=s.bytes,
                sha256=s.sha256,
                fetched_at=s.fetched_at,
            )
            for s in run.sources
        ],
    )


def _held_out(held: HeldDetail) -> HeldSeriesOut:
    return HeldSeriesOut(
        series=held.series,
        run_id=held.run_id,
        count=held.count,
        window_count=held.window_count,
        first_dates=held.first_dates,
        held_at=held.held_at,
    )


def _version_ref(v: KeptVersion) -> VersionRefOut:
    return VersionRefOut(
        id=v.id,
        version=v.version,
        digest=v.digest,
        origin=v.origin,
        origin_by=v.origin_by,
        arrived_at=v.arrived_at,
    )


def _move_out(m: RecordedMove) -> MoveOut:
    return MoveOut(
        action=m.action,
        from_state=m.from_state,
        to_state=m.to_state,
        version_id=m.version_id,
        by=m.by,
        at=m.at,
        detail=m.detail,
    )


def plugin_page(conn: Connection, plugin_id: str) -> HostPluginOut:
    """The plug-in page: state, flags, retain answer with the current version's licence terms,
    takedown, the last five runs, held details, versions and moves; UnknownPlugin if none."""
    s = plugin_status(conn, plugin_id)
    manifest: dict[str, Any] = {}
    if s.current_version_id is not None:
        manifest = version_detail(conn, plugin_id, s.current_version_id).manifest
    licence = manifest.get("licence", {})
    takedown = None
    if s.taken_down:
        takedown = TakedownOut(
            reason=s.takedown_reason,
            note=s.takedown_note,
            message=s.takedown_message,
            digest=s.takedown_digest,
        )
    return HostPluginOut(
        **_summary(s),
        name=manifest.get("name", {}),
        audience=manifest.get("audience"),
        current_version_id=s.current_version_id,
        approved_version_id=s.approved_version_id,
        ever_approved=s.ever_approved,
        publisher_organization_id=s.publisher_organization_id,
        registered_at=s.registered_at,
        retention=RetentionOut(
            answer=s.retain,
            registered=s.retain_registered,
            recorded_by=s.retain_recorded_by,
            recorded_at=s.retain_recorded_at,
            purge_offered=s.retain == "no",
            licence=LicenceOut(
                holder=licence.get("holder"),
                attribution=licence.get("attribution"),
                terms=licence.get("terms"),
                retain=licence.get("retain"),
            ),
        ),
        takedown=takedown,
        last_runs=[run_out(r) for r in last_runs(conn, plugin_id)],
        held_series=[_held_out(h) for h in held_details(conn, plugin_id)],
        versions=[_version_ref(v) for v in plugin_versions(conn, plugin_id)],
        moves=[_move_out(m) for m in plugin_moves(conn, plugin_id)],
    )


def version_page(conn: Connection, plugin_id: str, version_id: int, base_url: str) -> VersionOut:
    """One version: digest, manifest, covered files and its checks, with whether it is the
    current and the approved version; UnknownPlugin when the plug-in keeps no such version."""
    detail = version_detail(conn, plugin_id, version_id)
    checks = hosting.version_checks(conn, plugin_id, version_id)
    s = plugin_status(conn, plugin_id)
    return VersionOut(
        id=detail.id,
        plugin_id=plugin_id,
        version=detail.version,
        digest=detail.digest,
        origin=detail.origin,
        origin_by=detail.origin_by,
        arrived_at=detail.arrived_at,
        current=s.current_version_id == version_id,
        approved=s.approved_version_id == version_id,
        manifest=detail.manifest,
        files=[FileOut(path=f.path, size=f.size, sha256=f.sha256) for f in detail.files],
        checks=VersionChecksOut(
            manifest=findings(checks.manifest, base_url),
            update=findings(checks.update, base_url),
            against_version_id=checks.against_version_id,
            room=[
                RoomCheckOut(
                    name=c.name,
                    status=c.status.value,
                    findings=findings(c.findings, base_url),
                    queued_at=c.queued_at,
                    started_at=c.started_at,
                    finished_at=c.finished_at,
                    deadline_at=c.deadline_at,
                )
                for c in version_room_checks(conn, version_id)
            ],
        ),
    )
