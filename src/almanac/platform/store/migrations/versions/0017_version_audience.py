"""Each version's audience in a column of its own, read by every visibility statement

Revision ID: 0017_version_audience
Revises: 0016_attempt_limits
Create Date: 2026-12-10 08:00:00.000000
"""

from __future__ import annotations

import json

import sqlalchemy as sa
from alembic import op

revision = "0017_version_audience"
down_revision = "0016_attempt_limits"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.add_column("plugin_versions", sa.Column("audience", sa.String(length=16), nullable=True))
    versions = sa.table(
        "plugin_versions",
        sa.column("id", sa.BigInteger()),
        sa.column("manifest", sa.Text()),
        sa.column("audience", sa.String()),
    )
    conn = op.get_bind()
    rows = conn.execute(sa.select(versions.c.id, sa.cast(versions.c.manifest, sa.Text))).all()
    for version_id, manifest in rows:
        doc = json.loads(manifest) if manifest else {}
        audience = doc.get("audience") if isinstance(doc, dict) else None
        if isinstance(audience, str):
            conn.execute(
                sa.update(versions).where(versions.c.id == version_id).values(audience=audience)
            )


def downgrade() -> None:
    op.drop_column("plugin_versions", "audience")
