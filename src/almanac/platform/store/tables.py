"""The store's tables as SQLAlchemy Core `Table`s, typed once for every module that writes or reads
them with Core statements (a mapped class's `__table__` is typed as any `FromClause`, which
`insert`, `update`, `delete` and COPY do not take). The accounts' and the audience's tables have
the same kind of home in their own packages (`accounts/tables.py`, `audience/tables.py`)."""

from __future__ import annotations

from typing import cast

from sqlalchemy import Table

from almanac.platform.store.models import (
    CodeBlob,
    HeldSeries,
    Plugin,
    PluginMove,
    PluginVersion,
    Record,
    Revision,
    Run,
    RunRequest,
    RunSource,
    VersionFile,
)

plugins = cast(Table, Plugin.__table__)
versions = cast(Table, PluginVersion.__table__)
blobs = cast(Table, CodeBlob.__table__)
version_files = cast(Table, VersionFile.__table__)
moves = cast(Table, PluginMove.__table__)
requests = cast(Table, RunRequest.__table__)
runs = cast(Table, Run.__table__)
run_sources = cast(Table, RunSource.__table__)
records = cast(Table, Record.__table__)
revisions = cast(Table, Revision.__table__)
held_series = cast(Table, HeldSeries.__table__)
