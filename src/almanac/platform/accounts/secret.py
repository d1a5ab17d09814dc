"""Random secrets (session cookies, bearer tokens, verification tokens) and the hash kept of them.

A secret is shown once; the store keeps only its SHA-256, so a copy of the database opens nothing.
"""

from __future__ import annotations

import hashlib
import secrets

TOKEN_PREFIX = "alm_"


def new_secret(prefix: str = "") -> str:
    """A fresh secret of 256 random bits, URL-safe, with an optional recognisable prefix."""
    return prefix + secrets.token_urlsafe(32)


def secret_hash(secret: str) -> str:
    """The hex SHA-256 under which a secret is stored and looked up."""
    return hashlib.sha256(secret.encode("utf-8")).hexdigest()
