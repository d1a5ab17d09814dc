"""Runs keep the locked room's active layers

Revision ID: 0004_run_layers
Revises: 0003_readers
Create Date: 2026-11-23 12:35:44.617602
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0004_run_layers"
down_revision = "0003_readers"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.add_column("runs", sa.Column("layers", sa.JSON(), nullable=True))


def downgrade() -> None:
    op.drop_column("runs", "layers")
