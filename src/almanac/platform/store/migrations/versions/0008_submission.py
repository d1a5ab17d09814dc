"""Review information, attestations and submission of portal uploads

Revision ID: 0008_submission
Revises: 0007_records_stamp
Create Date: 2026-11-25 08:00:00.000000
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0008_submission"
down_revision = "0007_records_stamp"
branch_labels = None
depends_on = None

ATTESTATIONS = (
    "may-publish-the-data",
    "sources-are-holders-own-publication",
    "no-record-names-a-private-person",
    "fetcher-never-tries-the-network",
    "words-inform-without-selling",
)


def upgrade() -> None:
    op.add_column("portal_uploads", sa.Column("submitted_by", sa.String(320), nullable=True))
    op.add_column(
        "portal_uploads", sa.Column("submitted_at", sa.DateTime(timezone=True), nullable=True)
    )
    op.add_column("portal_uploads", sa.Column("agreement_version", sa.Integer(), nullable=True))
    op.add_column("portal_uploads", sa.Column("replaced_by", sa.Integer(), nullable=True))
    op.create_table(
        "portal_review_information",
        sa.Column("upload_id", sa.Integer(), nullable=False),
        sa.Column("document", sa.JSON(), nullable=False),
        sa.Column("sent_by", sa.String(length=320), nullable=False),
        sa.Column("sent_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["upload_id"],
            ["portal_uploads.id"],
            name=op.f("fk_portal_review_information_upload_id_portal_uploads"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("upload_id", name=op.f("pk_portal_review_information")),
    )
    op.create_table(
        "portal_attestations",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("upload_id", sa.Integer(), nullable=False),
        sa.Column("organization_id", sa.Integer(), nullable=False),
        sa.Column("attestation", sa.String(length=48), nullable=False),
        sa.Column("made_by", sa.String(length=320), nullable=False),
        sa.Column("agent_name", sa.String(length=200), nullable=True),
        sa.Column("made_at", sa.DateTime(timezone=True), nullable=False),
        sa.CheckConstraint(
            f"attestation IN ({', '.join(repr(a) for a in ATTESTATIONS)})",
            name=op.f("ck_portal_attestations_attestation"),
        ),
        sa.ForeignKeyConstraint(
            ["upload_id"],
            ["portal_uploads.id"],
            name=op.f("fk_portal_attestations_upload_id_portal_uploads"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["organization_id"],
            ["organizations.id"],
            name=op.f("fk_portal_attestations_organization_id_organizations"),
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_portal_attestations")),
        sa.UniqueConstraint(
            "upload_id", "attestation", name=op.f("uq_portal_attestations_upload_id")
        ),
    )


def downgrade() -> None:
    op.drop_table("portal_attestations")
    op.drop_table("portal_review_information")
    with op.batch_alter_table("portal_uploads") as batch:
        batch.drop_column("replaced_by")
        batch.drop_column("agreement_version")
        batch.drop_column("submitted_at")
        batch.drop_column("submitted_by")
