"""The store: SQLAlchemy models, Alembic migrations and the revision-aware write."""
