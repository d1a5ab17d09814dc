"""Keeps secrets carried in addresses out of access logs: the mailed verification link has its
token in the query string, a reader's calendar feed address its secret in the path, and
uvicorn's access log prints the whole path."""

from __future__ import annotations

import logging
import re

_SECRET_PARAM = re.compile(r"(?i)\b(token|code|password)=[^&\s\"]*")
# A private feed's path segment; a public feed's `plugins/<id>.ics` keeps its id.
_FEED_SECRET = re.compile(r"(/feeds/)(?!plugins/)[^/?#\s\"]+")


def redact_query(text: str) -> str:
    """`/verify?token=abc&x=1` -> `/verify?token=[redacted]&x=1`;
    `/api/v1/feeds/<secret>.ics` -> `/api/v1/feeds/[redacted]`."""
    text = _FEED_SECRET.sub(lambda m: f"{m.group(1)}[redacted]", text)
    return _SECRET_PARAM.sub(lambda m: f"{m.group(1)}=[redacted]", text)


class RedactSecretsFilter(logging.Filter):
    """Rewrites each record's message arguments (uvicorn.access passes the path as one)."""

    def filter(self, record: logging.LogRecord) -> bool:
        if isinstance(record.args, tuple):
            record.args = tuple(redact_query(a) if isinstance(a, str) else a for a in record.args)
        elif isinstance(record.msg, str):
            record.msg = redact_query(record.msg)
        return True


def install_access_log_redaction() -> None:
    """Add the filter to uvicorn's access logger once."""
    logger = logging.getLogger("uvicorn.access")
    if not any(isinstance(f, RedactSecretsFilter) for f in logger.filters):
        logger.addFilter(RedactSecretsFilter())
