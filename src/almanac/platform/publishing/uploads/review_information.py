"""An upload's review information in force ("Review information": sent separately, else its
review.json) and the digest of exactly what a reviewer reviews, which an approval names
("Version in the portal", in review) and publication checks again."""

from __future__ import annotations

import hashlib
import json

from sqlalchemy import select
from sqlalchemy.orm import Session

from almanac.platform.contract.pack import read_pack
from almanac.platform.contract.review import REVIEW_FILE
from almanac.platform.publishing.models import PortalUpload, ReviewInformation, UploadAttestation


def sent_review(db: Session, upload_id: int) -> bytes | None:
    """The review information sent separately for an upload (it takes the place of the
    upload's review.json), as review.json's bytes; None when none was sent."""
    row = db.get(ReviewInformation, upload_id)
    return None if row is None else json.dumps(row.document, ensure_ascii=False).encode()


def review_document(db: Session, upload: PortalUpload) -> bytes | None:
    """The review information of an upload: what was sent separately, else its review.json."""
    sent = sent_review(db, upload.id)
    if sent is not None:
        return sent
    return read_pack(upload.archive).files.get(REVIEW_FILE)


def reviewed_digest(db: Session, upload: PortalUpload) -> str:
    """ "Version in the portal", in review: the digest of exactly what a reviewer reviews (every
    uploaded file, the review information in force and the attestations made). An approval
    names it, and binds only that content: any later change gives another digest."""
    review = review_document(db, upload) or b""
    made = sorted(
        db.scalars(
            select(UploadAttestation.attestation).where(UploadAttestation.upload_id == upload.id)
        )
    )
    text = "\n".join(
        [upload.content_hash, hashlib.sha256(review).hexdigest(), *made, upload.digest]
    )
    return "sha256:" + hashlib.sha256(text.encode()).hexdigest()
