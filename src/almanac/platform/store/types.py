"""Column types and the canonical text of record content, the same on PostgreSQL and SQLite."""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import DateTime
from sqlalchemy.engine import Dialect
from sqlalchemy.types import TypeDecorator

from almanac.platform.contract.identity import record_content


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


_ENCODER = json.JSONEncoder(sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def _figure(value: Any) -> Any:
    # 1 and 1.0 are the same figure: a fetcher that prints either must not cause a revision.
    if type(value) is float and math.isfinite(value) and value.is_integer():
        return int(value)
    return value


def _normalise(content: dict[str, Any]) -> dict[str, Any]:
    # Content is flat except a value's `fields`, an object of numbers.
    return {
        key: {k: _figure(v) for k, v in value.items()} if type(value) is dict else _figure(value)
        for key, value in content.items()
    }


def canonical_content(content: dict[str, Any]) -> str:
    """The one text of a record's content: equal content gives equal text (keys sorted,
    integral floats written as integers, no spaces)."""
    return _ENCODER.encode(_normalise(content))


def content_text(record: Mapping[str, Any]) -> str:
    """`canonical_content(record_content(record))` for a record the contract has checked.

    Value records, the bulk of large batches, are written directly: their field keys are Keys
    (nothing to escape) mapped to finite ints or floats, which JSON writes as `repr` does.
    Anything else takes the general path, so the text is always the same."""
    if record["kind"] != "value":
        return canonical_content(record_content(record))
    fields = record["fields"]
    parts = []
    for key in sorted(fields):
        figure = fields[key]
        kind = type(figure)
        if kind is float:
            if figure.is_integer():
                figure = int(figure)
        elif kind is not int:
            return canonical_content(record_content(record))
        parts.append(f'"{key}":{figure!r}')
    revises = record.get("revises")
    revises_text = "null" if revises is None else _ENCODER.encode(revises)
    return '{"fields":{' + ",".join(parts) + '},"revises":' + revises_text + "}"
