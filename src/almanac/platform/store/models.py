"""The tables of the store: plug-ins, their versions and code, state moves, run requests, runs,
records and their revisions, Held details, and the store listing of a plug-in published through
the portal (beside the plug-in's own shelf and takedown flags)."""

from __future__ import annotations

import datetime as dt
from datetime import date, datetime
from typing import Any

from sqlalchemy import (
    JSON,
    BigInteger,
    Boolean,
    Date,
    ForeignKey,
    Index,
    Integer,
    LargeBinary,
    String,
    Text,
    UniqueConstraint,
    text,
)
from sqlalchemy.orm import Mapped, mapped_column

from almanac.platform.store.base import Base
from almanac.platform.store.types import UTCDateTime

# SQLite makes only an INTEGER PRIMARY KEY an alias of its rowid (autoincrement).
BigId = BigInteger().with_variant(Integer(), "sqlite")


class Plugin(Base):
    """A plug-in id (never reused) with its approval state and the flags a person sets."""

    __tablename__ = "plugins"

    id: Mapped[str] = mapped_column(String(48), primary_key=True)
    state: Mapped[str] = mapped_column(String(16))
    current_version_id: Mapped[int | None] = mapped_column(
        ForeignKey("plugin_versions.id", use_alter=True)
    )
    approved_version_id: Mapped[int | None] = mapped_column(
        ForeignKey("plugin_versions.id", use_alter=True)
    )
    ever_approved: Mapped[bool] = mapped_column(Boolean, default=False)
    retain_registered: Mapped[str] = mapped_column(String(8))
    retain: Mapped[str] = mapped_column(String(8))
    retain_recorded_by: Mapped[str | None] = mapped_column(String(320))
    retain_recorded_at: Mapped[datetime | None] = mapped_column(UTCDateTime)
    held: Mapped[bool] = mapped_column(Boolean, default=False)
    taken_down: Mapped[bool] = mapped_column(Boolean, default=False)
    shelved: Mapped[bool] = mapped_column(Boolean, default=False)
    # Retired by its publisher ("Listing of a published plug-in", Retire): runs stop for good.
    retired: Mapped[bool] = mapped_column(Boolean, default=False, server_default=text("false"))
    publisher_organization_id: Mapped[int | None] = mapped_column(
        ForeignKey("organizations.id", use_alter=True)
    )
    takedown_reason: Mapped[str | None] = mapped_column(Text)
    takedown_note: Mapped[str | None] = mapped_column(Text)
    takedown_message: Mapped[str | None] = mapped_column(String(280))
    takedown_digest: Mapped[str | None] = mapped_column(String(128))
    registered_at: Mapped[datetime] = mapped_column(UTCDateTime)
    # A fresh random token from every transaction that changes the plug-in's records (see
    # `plugins.mark_records_changed`); None until the first such write. Readers' drawn days are
    # kept by it: a token, unlike a counter, never comes back after a rollback, and never
    # repeats in another database served by the same process.
    records_stamp: Mapped[str | None] = mapped_column(String(32))


class PluginVersion(Base):
    """One exact code of a plug-in, identified by its digest, with its manifest and origin."""

    __tablename__ = "plugin_versions"
    __table_args__ = (UniqueConstraint("plugin_id", "digest"),)

    id: Mapped[int] = mapped_column(BigId, primary_key=True, autoincrement=True)
    plugin_id: Mapped[str] = mapped_column(ForeignKey("plugins.id"))
    version: Mapped[str] = mapped_column(String(64))
    digest: Mapped[str] = mapped_column(String(128))
    manifest: Mapped[dict[str, Any]] = mapped_column(JSON)
    # The manifest's audience, read by every visibility statement: reading it out of the
    # manifest parses each version's whole JSON text (issue 33).
    audience: Mapped[str | None] = mapped_column(String(16))
    origin: Mapped[str] = mapped_column(String(16))
    origin_by: Mapped[str] = mapped_column(String(320))
    arrived_at: Mapped[datetime] = mapped_column(UTCDateTime)


class CodeBlob(Base):
    """A covered file's bytes, kept once by SHA-256."""

    __tablename__ = "code_blobs"

    sha256: Mapped[str] = mapped_column(String(64), primary_key=True)
    content: Mapped[bytes] = mapped_column(LargeBinary)


class VersionFile(Base):
    """A covered file of a version: its path and the blob holding its bytes."""

    __tablename__ = "version_files"

    version_id: Mapped[int] = mapped_column(ForeignKey("plugin_versions.id"), primary_key=True)
    path: Mapped[str] = mapped_column(String(1024), primary_key=True)
    sha256: Mapped[str] = mapped_column(ForeignKey("code_blobs.sha256"))


class PluginMove(Base):
    """Every state move and every flag or answer a person sets, with who and when."""

    __tablename__ = "plugin_moves"
    __table_args__ = (Index("ix_plugin_moves_plugin_id_at", "plugin_id", "at"),)

    id: Mapped[int] = mapped_column(BigId, primary_key=True, autoincrement=True)
    plugin_id: Mapped[str] = mapped_column(ForeignKey("plugins.id"))
    action: Mapped[str] = mapped_column(String(32))
    from_state: Mapped[str | None] = mapped_column(String(16))
    to_state: Mapped[str | None] = mapped_column(String(16))
    version_id: Mapped[int | None] = mapped_column(ForeignKey("plugin_versions.id"))
    by: Mapped[str] = mapped_column(String(320))
    at: Mapped[datetime] = mapped_column(UTCDateTime)
    detail: Mapped[dict[str, Any] | None] = mapped_column(JSON)


class RunRequest(Base):
    """A run to start at once (approval, resume, first run, retry), left for the sensor."""

    __tablename__ = "run_requests"
    __table_args__ = (Index("ix_run_requests_open", "taken_at", "id"),)

    id: Mapped[int] = mapped_column(BigId, primary_key=True, autoincrement=True)
    plugin_id: Mapped[str] = mapped_column(ForeignKey("plugins.id"))
    version_id: Mapped[int] = mapped_column(ForeignKey("plugin_versions.id"))
    trigger: Mapped[str] = mapped_column(String(16))
    requested_by: Mapped[str] = mapped_column(String(320))
    requested_at: Mapped[datetime] = mapped_column(UTCDateTime)
    not_before: Mapped[datetime] = mapped_column(UTCDateTime)
    taken_at: Mapped[datetime | None] = mapped_column(UTCDateTime)


class Run(Base):
    """One attempt: version, digest, Node version, the locked room's layers that were active,
    trigger, times, counts, outcome, reason."""

    __tablename__ = "runs"
    __table_args__ = (
        Index("ix_runs_plugin_id_id", "plugin_id", "id"),
        Index("uq_runs_orchestrator_run", "orchestrator_run", unique=True),
    )

    id: Mapped[int] = mapped_column(BigId, primary_key=True, autoincrement=True)
    plugin_id: Mapped[str] = mapped_column(ForeignKey("plugins.id"))
    version_id: Mapped[int] = mapped_column(ForeignKey("plugin_versions.id"))
    digest: Mapped[str] = mapped_column(String(128))
    node_version: Mapped[str | None] = mapped_column(String(32))
    layers: Mapped[dict[str, bool] | None] = mapped_column(JSON)
    trigger: Mapped[str] = mapped_column(String(16))
    request_id: Mapped[int | None] = mapped_column(ForeignKey("run_requests.id"))
    # The orchestrator's id of the run that kept this row (Dagster's run id): one row a run.
    orchestrator_run: Mapped[str | None] = mapped_column(String(64))
    today: Mapped[date] = mapped_column(Date)
    backfill: Mapped[bool] = mapped_column(Boolean)
    started_at: Mapped[datetime] = mapped_column(UTCDateTime)
    ended_at: Mapped[datetime] = mapped_column(UTCDateTime)
    outcome: Mapped[str] = mapped_column(String(8))
    reason: Mapped[str | None] = mapped_column(String(300))
    new: Mapped[int] = mapped_column(Integer, default=0)
    revised: Mapped[int] = mapped_column(Integer, default=0)
    unchanged: Mapped[int] = mapped_column(Integer, default=0)
    moved: Mapped[int] = mapped_column(Integer, default=0)
    missed: Mapped[int] = mapped_column(Integer, default=0)
    withdrawn: Mapped[int] = mapped_column(Integer, default=0)
    returned: Mapped[int] = mapped_column(Integer, default=0)


class RunSource(Base):
    """A source downloaded for a run: name, final URL, bytes, SHA-256 and time."""

    __tablename__ = "run_sources"

    run_id: Mapped[int] = mapped_column(ForeignKey("runs.id"), primary_key=True)
    position: Mapped[int] = mapped_column(Integer, primary_key=True)
    name: Mapped[str] = mapped_column(String(48))
    final_url: Mapped[str] = mapped_column(Text)
    bytes: Mapped[int] = mapped_column(BigInteger)
    sha256: Mapped[str] = mapped_column(String(64))
    fetched_at: Mapped[datetime] = mapped_column(UTCDateTime)


class Record(Base):
    """A stored record by key (series, date, discriminator) with its current content and state.

    `discriminator` is the period (value dated by publication), the id (event, item), or "".
    `since` is when the current content and state became current. The plug-in, run and
    version columns carry no foreign key: a key check per row would triple the cost of writing
    250,000 records, and only the write (which holds the plug-in lock) ever sets them.
    """

    __tablename__ = "records"
    __table_args__ = (
        # Date second: the key's unique index also serves reading a plug-in over a range of days.
        UniqueConstraint("plugin_id", "date", "series", "discriminator"),
    )

    # `dt.date`: in the class body the column `date` hides the type of the same name.
    id: Mapped[int] = mapped_column(BigId, primary_key=True, autoincrement=True)
    plugin_id: Mapped[str] = mapped_column(String(48))
    series: Mapped[str] = mapped_column(String(48))
    date: Mapped[dt.date] = mapped_column(Date)
    discriminator: Mapped[str] = mapped_column(String(64))
    kind: Mapped[str] = mapped_column(String(8))
    content: Mapped[str] = mapped_column(Text)
    run_id: Mapped[int] = mapped_column(BigId)
    version_id: Mapped[int] = mapped_column(BigId)
    digest: Mapped[str] = mapped_column(String(128))
    since: Mapped[datetime] = mapped_column(UTCDateTime)
    misses: Mapped[int] = mapped_column(Integer, default=0)
    withdrawn: Mapped[bool] = mapped_column(Boolean, default=False)
    moved_to: Mapped[dt.date | None] = mapped_column(Date)


class Revision(Base):
    """An earlier content and state of a record, current from `valid_from` until `valid_to`."""

    __tablename__ = "revisions"
    __table_args__ = (Index("ix_revisions_record_id_valid_from", "record_id", "valid_from"),)

    id: Mapped[int] = mapped_column(BigId, primary_key=True, autoincrement=True)
    record_id: Mapped[int] = mapped_column(ForeignKey("records.id", ondelete="CASCADE"))
    content: Mapped[str] = mapped_column(Text)
    run_id: Mapped[int] = mapped_column(ForeignKey("runs.id"))
    version_id: Mapped[int] = mapped_column(ForeignKey("plugin_versions.id"))
    digest: Mapped[str] = mapped_column(String(128))
    withdrawn: Mapped[bool] = mapped_column(Boolean)
    moved_to: Mapped[date | None] = mapped_column(Date)
    valid_from: Mapped[datetime] = mapped_column(UTCDateTime)
    valid_to: Mapped[datetime] = mapped_column(UTCDateTime)


class HeldSeries(Base):
    """A series whose withdrawals a run held back, waiting for Accept removals or Keep them."""

    __tablename__ = "held_series"

    plugin_id: Mapped[str] = mapped_column(ForeignKey("plugins.id"), primary_key=True)
    series: Mapped[str] = mapped_column(String(48), primary_key=True)
    run_id: Mapped[int] = mapped_column(ForeignKey("runs.id"))
    record_ids: Mapped[list[int]] = mapped_column(JSON)
    first_dates: Mapped[list[str]] = mapped_column(JSON)
    window_count: Mapped[int] = mapped_column(Integer)
    held_at: Mapped[datetime] = mapped_column(UTCDateTime)


class StoreListing(Base):
    """A plug-in published through the portal and its place in the store: the published
    upload whose listing shows, whether its publisher lists it, and its retirement. The
    service's shelf and takedown are the plug-in's own flags (`plugins.shelved`,
    `plugins.taken_down`), acting on the same listing."""

    __tablename__ = "store_listings"
    __table_args__ = (Index("ix_store_listings_organization_id", "organization_id"),)

    plugin_id: Mapped[str] = mapped_column(ForeignKey("plugins.id"), primary_key=True)
    organization_id: Mapped[int] = mapped_column(ForeignKey("organizations.id"))
    upload_id: Mapped[int] = mapped_column(ForeignKey("portal_uploads.id"))
    listing: Mapped[dict[str, Any] | None] = mapped_column(JSON(none_as_null=True))
    """listing.json's object; SQL NULL for a plug-in published without one."""
    icon: Mapped[bytes | None] = mapped_column(LargeBinary)
    category: Mapped[str | None] = mapped_column(String(32))
    words: Mapped[str | None] = mapped_column(Text)
    """The words a search finds it by (`storefront.listing_words`), kept at publish."""
    listed: Mapped[bool] = mapped_column(Boolean)
    published_at: Mapped[datetime] = mapped_column(UTCDateTime())
    retired_at: Mapped[datetime | None] = mapped_column(UTCDateTime())
    retired_by: Mapped[str | None] = mapped_column(String(320))
