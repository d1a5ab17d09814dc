"""Plug-ins carry a stamp of their records' last change

Revision ID: 0007_records_stamp
Revises: 0006_portal_uploads
Create Date: 2026-11-25 07:30:00.000000
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0007_records_stamp"
down_revision = "0006_portal_uploads"
branch_labels = None
depends_on = None


def upgrade() -> None:
    # Left empty on existing rows: no stamp means nothing drawn is kept until the next write.
    op.add_column("plugins", sa.Column("records_stamp", sa.String(length=32), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("plugins") as batch:
        batch.drop_column("records_stamp")
