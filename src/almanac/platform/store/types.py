"""Column types and the canonical text of record content, the same on PostgreSQL and SQLite."""

from __future__ import annotations

import json
import math
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import DateTime
from sqlalchemy.engine import Dialect
from sqlalchemy.types import TypeDecorator


class UTCDateTime(TypeDecorator[datetime]):
    """A moment stored in UTC and always read back timezone-aware (SQLite keeps no zone)."""

    impl = DateTime(timezone=True)
    cache_ok = True

    def process_bind_param(self, value: datetime | None, dialect: Dialect) -> datetime | None:
        if value is None:
            return None
        if value.tzinfo is None:
            raise ValueError(f"moment {value!r} has no time zone; pass an aware datetime")
        value = value.astimezone(UTC)
        return value.replace(tzinfo=None) if dialect.name == "sqlite" else value

    def process_result_value(self, value: datetime | None, dialect: Dialect) -> datetime | None:
        if value is None:
            return None
        if value.tzinfo is None:
            return value.replace(tzinfo=UTC)
        return value.astimezone(UTC)


def _normalise(value: Any) -> Any:
    # 1 and 1.0 are the same figure: a fetcher that prints either must not cause a revision.
    if isinstance(value, float) and math.isfinite(value) and value.is_integer():
        return int(value)
    if isinstance(value, dict):
        return {k: _normalise(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_normalise(v) for v in value]
    return value


def canonical_content(content: dict[str, Any]) -> str:
    """The one text of a record's content: equal content gives equal text (keys sorted,
    integral floats written as integers, no spaces)."""
    return json.dumps(
        _normalise(content), sort_keys=True, separators=(",", ":"), ensure_ascii=False
    )
