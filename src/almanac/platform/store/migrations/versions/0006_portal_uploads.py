"""Portal uploads and their checks

Revision ID: 0006_portal_uploads
Revises: 0005_publishing
Create Date: 2026-11-25 07:00:00.000000
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0006_portal_uploads"
down_revision = "0005_publishing"
branch_labels = None
depends_on = None


def _moment(name: str, nullable: bool = False) -> sa.Column:
    return sa.Column(name, sa.DateTime(timezone=True), nullable=nullable)


def upgrade() -> None:
    op.create_table(
        "portal_uploads",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("organization_id", sa.Integer(), nullable=False),
        sa.Column("plugin_id", sa.String(length=48), nullable=False),
        sa.Column("version", sa.String(length=32), nullable=False),
        sa.Column("digest", sa.String(length=80), nullable=False),
        sa.Column("content_hash", sa.String(length=64), nullable=False),
        sa.Column("code_upload_id", sa.Integer(), nullable=True),
        sa.Column("code_published", sa.Boolean(), nullable=False),
        sa.Column("manifest", sa.JSON(), nullable=False),
        sa.Column("archive", sa.LargeBinary(), nullable=False),
        sa.Column("state", sa.String(length=16), nullable=False),
        sa.Column("uploaded_by", sa.String(length=320), nullable=False),
        sa.Column("agent_name", sa.String(length=200), nullable=True),
        _moment("uploaded_at"),
        sa.Column("withdrawn_by", sa.String(length=320), nullable=True),
        _moment("withdrawn_at", True),
        sa.Column("record_diff", sa.JSON(), nullable=True),
        sa.CheckConstraint(
            "state IN ('checking', 'checked', 'in_review', 'withdrawn')",
            name=op.f("ck_portal_uploads_state"),
        ),
        sa.ForeignKeyConstraint(
            ["code_upload_id"],
            ["portal_uploads.id"],
            name=op.f("fk_portal_uploads_code_upload_id_portal_uploads"),
        ),
        sa.ForeignKeyConstraint(
            ["organization_id"],
            ["organizations.id"],
            name=op.f("fk_portal_uploads_organization_id_organizations"),
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_portal_uploads")),
    )
    op.create_index(
        "ix_portal_uploads_organization_id_uploaded_at",
        "portal_uploads",
        ["organization_id", "uploaded_at"],
        unique=False,
    )
    op.create_index("ix_portal_uploads_plugin_id", "portal_uploads", ["plugin_id"], unique=False)
    op.create_table(
        "portal_upload_checks",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("upload_id", sa.Integer(), nullable=True),
        sa.Column(
            "version_id", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), nullable=True
        ),
        sa.Column("name", sa.String(length=32), nullable=False),
        sa.Column("status", sa.String(length=16), nullable=False),
        sa.Column("findings", sa.JSON(), nullable=False),
        _moment("queued_at"),
        _moment("started_at", True),
        _moment("finished_at", True),
        _moment("deadline_at"),
        sa.CheckConstraint(
            "status IN ('queued', 'running', 'passed', 'failed')",
            name=op.f("ck_portal_upload_checks_status"),
        ),
        sa.CheckConstraint(
            "(upload_id IS NULL) <> (version_id IS NULL)",
            name=op.f("ck_portal_upload_checks_one_subject"),
        ),
        sa.ForeignKeyConstraint(
            ["upload_id"],
            ["portal_uploads.id"],
            name=op.f("fk_portal_upload_checks_upload_id_portal_uploads"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["version_id"],
            ["plugin_versions.id"],
            name=op.f("fk_portal_upload_checks_version_id_plugin_versions"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_portal_upload_checks")),
    )
    op.create_index(
        "ix_portal_upload_checks_upload_id", "portal_upload_checks", ["upload_id"], unique=False
    )
    op.create_index(
        "ix_portal_upload_checks_version_id", "portal_upload_checks", ["version_id"], unique=False
    )
    op.create_table(
        "version_check_inputs",
        sa.Column(
            "version_id", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), nullable=False
        ),
        sa.Column("archive", sa.LargeBinary(), nullable=False),
        sa.ForeignKeyConstraint(
            ["version_id"],
            ["plugin_versions.id"],
            name=op.f("fk_version_check_inputs_version_id_plugin_versions"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("version_id", name=op.f("pk_version_check_inputs")),
    )


def downgrade() -> None:
    op.drop_table("version_check_inputs")
    op.drop_index("ix_portal_upload_checks_version_id", table_name="portal_upload_checks")
    op.drop_index("ix_portal_upload_checks_upload_id", table_name="portal_upload_checks")
    op.drop_table("portal_upload_checks")
    op.drop_index("ix_portal_uploads_plugin_id", table_name="portal_uploads")
    op.drop_index("ix_portal_uploads_organization_id_uploaded_at", table_name="portal_uploads")
    op.drop_table("portal_uploads")
