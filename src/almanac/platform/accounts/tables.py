"""The accounts' tables as SQLAlchemy Core `Table`s, typed once (see `store/tables.py`)."""

from __future__ import annotations

from typing import cast

from sqlalchemy import Table

from almanac.platform.accounts.models import Membership, Organization

organizations = cast(Table, Organization.__table__)
memberships = cast(Table, Membership.__table__)
