"""The audience's tables as SQLAlchemy Core `Table`s, typed once (see `store/tables.py`)."""

from __future__ import annotations

from typing import cast

from sqlalchemy import Table

from almanac.platform.audience.models import (
    OrganizationShownDefault,
    ReaderListOrganization,
    ReaderListPerson,
    Report,
    ShownChange,
    ShownPreference,
)

reader_list_people = cast(Table, ReaderListPerson.__table__)
reader_list_organizations = cast(Table, ReaderListOrganization.__table__)
shown_preferences = cast(Table, ShownPreference.__table__)
shown_changes = cast(Table, ShownChange.__table__)
organization_shown_defaults = cast(Table, OrganizationShownDefault.__table__)
reports = cast(Table, Report.__table__)
