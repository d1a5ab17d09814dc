"""Alembic environment: runs on the connection handed in by `upgrade_database`, or on the URL."""

from __future__ import annotations

import importlib
import pkgutil

from alembic import context
from sqlalchemy import Connection

import almanac.platform
from almanac.platform.store.base import Base


def _import_models() -> None:
    # Every table is declared on the one Base; import each `models` module of the domain so the
    # metadata compared by autogenerate is complete.
    for info in pkgutil.walk_packages(almanac.platform.__path__, "almanac.platform."):
        if info.name.rsplit(".", 1)[-1] == "models":
            importlib.import_module(info.name)


_import_models()
target_metadata = Base.metadata


def _run(connection: Connection) -> None:
    context.configure(
        connection=connection,
        target_metadata=target_metadata,
        render_as_batch=connection.dialect.name == "sqlite",
        compare_type=True,
    )
    context.run_migrations()


connection = context.config.attributes.get("connection")
if connection is not None:
    _run(connection)
else:
    from almanac.platform.store.engine import make_engine

    url = context.config.get_main_option("sqlalchemy.url")
    if url is None:
        raise RuntimeError("no connection handed in and no sqlalchemy.url to open one")
    engine = make_engine(url)
    with engine.begin() as conn:
        _run(conn)
    engine.dispose()
