"""The shapes of the host routes (operators): plug-ins, versions, runs, and the bodies of the
moves a person makes at the host."""

from __future__ import annotations

from datetime import date, datetime
from typing import Any, Literal

from pydantic import BaseModel, Field

from almanac.api.schemas import RowId
from almanac.platform.store.moves import ROLLBACK_REASON_MAX, TAKEDOWN_MESSAGE_MAX

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


class VersionRefOut(BaseModel):
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
    position: int
    name: str
    final_url: str
    bytes: int
    sha256: str
    fetched_at: datetime


class RunOut(BaseModel):
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
    series: str
    run_id: int
    count: int
    window_count: int
    first_dates: list[str]
    held_at: datetime


class MoveOut(BaseModel):
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


class FileOut(BaseModel):
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
