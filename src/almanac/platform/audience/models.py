"""Tables of who reads what: the reader list of a private plug-in, the synced `shown`
preference of readers and the default an organization's owner or admin sets for its members,
and readers' reports about plug-ins."""

from __future__ import annotations

from datetime import date, datetime
from enum import StrEnum

from sqlalchemy import Boolean, CheckConstraint, Date, ForeignKey, Index, String, Text
from sqlalchemy.orm import Mapped, mapped_column

from almanac.platform.store.base import Base
from almanac.platform.store.models import BigId
from almanac.platform.store.types import UTCDateTime


class ReportCategory(StrEnum):
    """The categories of a reader's report ("Other resources", Report)."""

    WRONG_DATA = "wrong-data"
    OFFENSIVE = "offensive"
    IMPERSONATING = "impersonating"
    DATA_IT_MAY_NOT_USE = "data-it-may-not-use"
    STOPPED_WORKING = "stopped-working"
    OTHER = "other"


class ReaderListPerson(Base):
    """A person on the reader list of a private plug-in, by account e-mail (folded for
    comparison in `email_key`); the account need not exist yet."""

    __tablename__ = "plugin_reader_people"

    plugin_id: Mapped[str] = mapped_column(ForeignKey("plugins.id"), primary_key=True)
    email_key: Mapped[str] = mapped_column(String(320), primary_key=True)
    email: Mapped[str] = mapped_column(String(320))


class ReaderListOrganization(Base):
    """An organization on the reader list of a private plug-in: its active members read it,
    never its guests or former members."""

    __tablename__ = "plugin_reader_organizations"

    plugin_id: Mapped[str] = mapped_column(ForeignKey("plugins.id"), primary_key=True)
    organization_id: Mapped[int] = mapped_column(
        ForeignKey("organizations.id", ondelete="CASCADE"), primary_key=True
    )


class ShownPreference(Base):
    """A reader's synced `plugins.<id>.shown` choice (true or false; no row is null)."""

    __tablename__ = "reader_shown_preferences"

    account_id: Mapped[int] = mapped_column(ForeignKey("accounts.id"), primary_key=True)
    plugin_id: Mapped[str] = mapped_column(ForeignKey("plugins.id"), primary_key=True)
    shown: Mapped[bool] = mapped_column(Boolean)
    set_at: Mapped[datetime] = mapped_column(UTCDateTime)


class ShownChange(Base):
    """A change of some reader's own `plugins.<id>.shown` choice, written with the change
    (`set_shown`): the choice before and after (null: no choice), never whose. A `baseline`
    row was written when the history began (migration 0019): one marking the moment per
    plug-in then registered, one per choice then standing (`shown_after` that choice)."""

    __tablename__ = "reader_shown_changes"
    __table_args__ = (Index("ix_reader_shown_changes_plugin", "plugin_id", "changed_at"),)

    id: Mapped[int] = mapped_column(BigId, primary_key=True, autoincrement=True)
    plugin_id: Mapped[str] = mapped_column(ForeignKey("plugins.id"))
    changed_at: Mapped[datetime] = mapped_column(UTCDateTime)
    shown_before: Mapped[bool | None] = mapped_column(Boolean)
    shown_after: Mapped[bool | None] = mapped_column(Boolean)
    baseline: Mapped[bool] = mapped_column(Boolean, default=False)


class OrganizationShownDefault(Base):
    """The `shown` an organization's owner or admin chose for the members who made no choice,
    on a private plug-in the organization reads."""

    __tablename__ = "organization_shown_defaults"

    organization_id: Mapped[int] = mapped_column(
        ForeignKey("organizations.id", ondelete="CASCADE"), primary_key=True
    )
    plugin_id: Mapped[str] = mapped_column(ForeignKey("plugins.id"), primary_key=True)
    shown: Mapped[bool] = mapped_column(Boolean)
    set_by: Mapped[int] = mapped_column(ForeignKey("accounts.id"))
    set_at: Mapped[datetime] = mapped_column(UTCDateTime)


def _categories() -> str:
    return f"category IN ({', '.join(repr(c.value) for c in ReportCategory)})"


class Report(Base):
    """A reader's report about a plug-in. `account_id` is kept for abuse limits only: the
    publisher and the service read reports without it."""

    __tablename__ = "reports"
    __table_args__ = (
        CheckConstraint(_categories(), name="category"),
        Index("ix_reports_plugin_id_created_at", "plugin_id", "created_at"),
    )

    id: Mapped[int] = mapped_column(primary_key=True)
    plugin_id: Mapped[str] = mapped_column(ForeignKey("plugins.id"))
    account_id: Mapped[int] = mapped_column(ForeignKey("accounts.id"))
    category: Mapped[str] = mapped_column(String(32))
    note: Mapped[str] = mapped_column(Text)
    day: Mapped[date | None] = mapped_column(Date)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime)
