"""Each store listing's words, kept at publish, so a search matches them in the database

Revision ID: 0021_listing_words
Revises: 0020_webhooks
Create Date: 2026-11-27 12:10:00.000000
"""

from __future__ import annotations

import json

import sqlalchemy as sa
from alembic import op

from almanac.platform.publishing.publication.storefront import listing_words

revision = "0021_listing_words"
down_revision = "0020_webhooks"
branch_labels = None
depends_on = None


def _doc(text: str | None) -> object:
    return json.loads(text) if text else None


def upgrade() -> None:
    op.add_column("store_listings", sa.Column("words", sa.Text(), nullable=True))
    listings = sa.table(
        "store_listings",
        sa.column("plugin_id", sa.String()),
        sa.column("upload_id", sa.BigInteger()),
        sa.column("listing", sa.Text()),
        sa.column("words", sa.Text()),
    )
    uploads = sa.table(
        "portal_uploads", sa.column("id", sa.BigInteger()), sa.column("manifest", sa.Text())
    )
    conn = op.get_bind()
    rows = conn.execute(
        sa.select(
            listings.c.plugin_id,
            sa.cast(listings.c.listing, sa.Text),
            sa.cast(uploads.c.manifest, sa.Text),
        ).join(uploads, uploads.c.id == listings.c.upload_id)
    ).all()
    for plugin_id, listing, manifest in rows:
        doc = _doc(listing)
        names = _doc(manifest)
        words = listing_words(
            doc if isinstance(doc, dict) else None,
            plugin_id,
            names.get("name") if isinstance(names, dict) else None,
        )
        conn.execute(
            sa.update(listings).where(listings.c.plugin_id == plugin_id).values(words=words)
        )


def downgrade() -> None:
    op.drop_column("store_listings", "words")
