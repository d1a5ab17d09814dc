"""The shapes of the host routes (operators): plug-ins, versions, runs, and the bodies of the
moves a person makes at the host."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import date, datetime
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field
from sqlalchemy import Connection

from almanac.api.schemas import RowId
from almanac.platform import audience, hosting
from almanac.platform.contract.problems import Problem, docs_link
from almanac.platform.publishing.uploads.check_queue import version_room_checks
from almanac.platform.store.history import plugin_moves
from almanac.platform.store.moves import ROLLBACK_REASON_MAX, TAKEDOWN_MESSAGE_MAX
from almanac.platform.store.plugins import PluginStatus, plugin_status
from almanac.platform.store.reading import held_details, last_runs
from almanac.platform.store.versions import plugin_versions, version_detail

DIGEST_PATTERN = r"^sha256:[0-9a-f]{64}$"


class FindingOut(BaseModel):
    """One problem of a check, as `check --json` prints it."""

    code: str
    severity: str
    message: str
    fix: str
    docs: str
    path: str | None = None
    line: int | None = None

    @classmethod
    def all_of(cls, problems: Sequence[Problem], base_url: str) -> list[FindingOut]:
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


class FolderIn(BaseModel):
    path: str = Field(
        min_length=1,
        max_length=4096,
        description="Absolute path of a plug-in folder on the server, named as the plug-in id.",
    )
    publisher_organization_id: RowId | None = None


class RegisteredOut(BaseModel):
    plugin_id: str
    version_id: int
    version: str
    digest: str
    state: str
    warnings: list[FindingOut] = []

    @classmethod
    def of(cls, done: hosting.Registered, base_url: str) -> RegisteredOut:
        return cls(
            plugin_id=done.plugin_id,
            version_id=done.version_id,
            version=done.version,
            digest=done.digest,
            state=str(done.state),
            warnings=FindingOut.all_of(done.warnings, base_url),
        )


class PluginSummaryOut(BaseModel):
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

    @classmethod
    def of(cls, s: PluginStatus) -> PluginSummaryOut:
        """A plug-in as the host's list shows it (and the head of its page, `HostPluginOut`)."""
        return cls(
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


class VersionRefOut(BaseModel):
    model_config = ConfigDict(from_attributes=True)  # versions.KeptVersion, field for field

    id: int
    version: str
    digest: str
    origin: str
    origin_by: str
    arrived_at: datetime


class LicenceOut(BaseModel):
    """The licence of the current version: what the person reads before recording retain."""

    holder: str | None = None
    attribution: str | None = None
    terms: str | None = None
    retain: str | None = Field(default=None, description="The manifest's own answer.")


class RetentionOut(BaseModel):
    answer: str = Field(description="The answer the service acts on.")
    registered: str = Field(description="The manifest's answer when first registered.")
    recorded_by: str | None
    recorded_at: datetime | None
    purge_offered: bool
    licence: LicenceOut


class TakedownOut(BaseModel):
    reason: str | None
    note: str | None
    message: str | None
    digest: str | None


class RunSourceOut(BaseModel):
    model_config = ConfigDict(from_attributes=True)  # reading.RunSource, field for field

    position: int
    name: str
    final_url: str
    bytes: int
    sha256: str
    fetched_at: datetime


class RunOut(BaseModel):
    model_config = ConfigDict(from_attributes=True)  # reading.StoredRun, field for field

    id: int
    version_id: int
    digest: str
    node_version: str | None
    layers: dict[str, bool] | None = None
    trigger: str
    today: date
    backfill: bool
    started_at: datetime
    ended_at: datetime
    outcome: str
    reason: str | None
    new: int
    revised: int
    unchanged: int
    moved: int
    missed: int
    withdrawn: int
    returned: int
    sources: list[RunSourceOut] = []


class HeldSeriesOut(BaseModel):
    model_config = ConfigDict(from_attributes=True)  # reading.HeldDetail, field for field

    series: str
    run_id: int
    count: int
    window_count: int
    first_dates: list[str]
    held_at: datetime


class MoveOut(BaseModel):
    model_config = ConfigDict(from_attributes=True)  # history.RecordedMove, field for field

    action: str
    from_state: str | None
    to_state: str | None
    version_id: int | None
    by: str
    at: datetime
    detail: dict[str, Any] | None


class HostPluginOut(PluginSummaryOut):
    """The plug-in page: state, flags, retain answer and terms, versions, the last five runs,
    held details and the history of moves."""

    name: dict[str, str]
    audience: str | None
    current_version_id: int | None
    approved_version_id: int | None
    ever_approved: bool
    publisher_organization_id: int | None
    registered_at: datetime | None
    retention: RetentionOut
    takedown: TakedownOut | None
    last_runs: list[RunOut]
    held_series: list[HeldSeriesOut]
    versions: list[VersionRefOut]
    moves: list[MoveOut]

    @classmethod
    def read(cls, conn: Connection, plugin_id: str) -> HostPluginOut:
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
        return cls(
            **dict(PluginSummaryOut.of(s)),
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
            last_runs=[RunOut.model_validate(r) for r in last_runs(conn, plugin_id)],
            held_series=[HeldSeriesOut.model_validate(h) for h in held_details(conn, plugin_id)],
            versions=[VersionRefOut.model_validate(v) for v in plugin_versions(conn, plugin_id)],
            moves=[MoveOut.model_validate(m) for m in plugin_moves(conn, plugin_id)],
        )


class FileOut(BaseModel):
    model_config = ConfigDict(from_attributes=True)  # versions.CoveredFile, field for field

    path: str
    size: int
    sha256: str


class RoomCheckOut(BaseModel):
    """One locked-room check of a version (the checks job's run), with its named status."""

    name: str = Field(description="fixtures, cases, examples, sources or links")
    status: str = Field(
        description="queued, running, passed or failed (the last two final); could_not_run: "
        "the service could not reach the network (not final: it runs again by itself)"
    )
    findings: list[FindingOut]
    queued_at: datetime
    started_at: datetime | None
    finished_at: datetime | None
    deadline_at: datetime


class VersionChecksOut(BaseModel):
    manifest: list[FindingOut]
    update: list[FindingOut] = Field(
        description="Versioning rule 4 against the approved version: errors refuse, warnings "
        "inform the person approving."
    )
    against_version_id: int | None
    room: list[RoomCheckOut] = Field(
        default_factory=list,
        description="The locked-room checks, as an upload's: the fixtures twice, each run case, "
        "the example days, the real sources once, the listing links.",
    )


class VersionOut(VersionRefOut):
    plugin_id: str
    current: bool
    approved: bool
    manifest: dict[str, Any]
    files: list[FileOut]
    checks: VersionChecksOut

    @classmethod
    def read(cls, conn: Connection, plugin_id: str, version_id: int, base_url: str) -> VersionOut:
        """One version: digest, manifest, covered files and its checks, with whether it is the
        current and the approved version; UnknownPlugin when the plug-in keeps no such version."""
        detail = version_detail(conn, plugin_id, version_id)
        checks = hosting.version_checks(conn, plugin_id, version_id)
        s = plugin_status(conn, plugin_id)
        return cls(
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
            files=[FileOut.model_validate(f) for f in detail.files],
            checks=VersionChecksOut(
                manifest=FindingOut.all_of(checks.manifest, base_url),
                update=FindingOut.all_of(checks.update, base_url),
                against_version_id=checks.against_version_id,
                room=[
                    RoomCheckOut(
                        name=c.name,
                        status=c.status.value,
                        findings=FindingOut.all_of(c.findings, base_url),
                        queued_at=c.queued_at,
                        started_at=c.started_at,
                        finished_at=c.finished_at,
                        deadline_at=c.deadline_at,
                    )
                    for c in version_room_checks(conn, version_id)
                ],
            ),
        )


class DigestIn(BaseModel):
    digest: str = Field(pattern=DIGEST_PATTERN, description="The digest the page showed.")


class RollbackIn(BaseModel):
    """Roll back to a kept version approved before, with the reason kept in the history."""

    version: str = Field(
        pattern=r"^[0-9]{1,9}\.[0-9]{1,9}\.[0-9]{1,9}$",
        description="The kept version to go back to (major.minor.patch).",
    )
    reason: str = Field(
        min_length=1,
        max_length=ROLLBACK_REASON_MAX,
        pattern=r"\S",
        description="Why: recorded with who and when in the plug-in's history.",
    )


class HeldDecisionIn(BaseModel):
    decision: Literal["accept-removals", "keep-them"]


class HeldDecisionOut(BaseModel):
    withdrawn: int
    plugin: HostPluginOut

    @classmethod
    def read(cls, conn: Connection, plugin_id: str, withdrawn: int) -> HeldDecisionOut:
        """The records withdrawn by the decision, and the plug-in page after it."""
        return cls(withdrawn=withdrawn, plugin=HostPluginOut.read(conn, plugin_id))


class RetentionIn(BaseModel):
    answer: Literal["yes", "no", "unknown"]
    terms_read: Literal[True] = Field(
        description="Must be true: the person read the licence terms shown on the page."
    )


class PurgeIn(BaseModel):
    typed_id: str | None = Field(
        default=None, max_length=48, description="The plug-in id, typed by the person."
    )


class PurgeOut(BaseModel):
    model_config = ConfigDict(from_attributes=True)  # retention.PurgeCount, field for field

    records: int
    revisions: int
    removed: bool


class TakedownIn(BaseModel):
    reason: str = Field(min_length=1, max_length=200)
    note: str = Field(default="", max_length=5000, description="Private: never shown to readers.")
    message: str = Field(
        min_length=1,
        max_length=TAKEDOWN_MESSAGE_MAX,
        description="Public: what readers see instead of the plug-in's records.",
    )


class ReadersIn(BaseModel):
    # The domain refuses a list over its limits with the field named; these bounds only keep
    # a malformed request from growing without end.
    emails: list[str] = Field(default_factory=list, max_length=5000)
    organizations: list[RowId] = Field(default_factory=list, max_length=5000)


class ReadersOut(BaseModel):
    plugin: str
    emails: list[str]
    organizations: list[int]

    @classmethod
    def of(cls, found: audience.ReaderList) -> ReadersOut:
        return cls(
            plugin=found.plugin_id, emails=found.emails, organizations=found.organization_ids
        )
