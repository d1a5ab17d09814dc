"""Audience tests reuse the store's engines: PostgreSQL and SQLite, each made by the
migrations."""

from tests.store.conftest import db_url, engine, migrated_postgres, sqlite_template  # noqa: F401
