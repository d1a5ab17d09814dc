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


_VALUE_TEXTS: dict[tuple[str, ...], tuple[tuple[str, ...], str]] = {}
"""By the order of a value record's field keys as printed: the keys sorted, and the record's text
with a `%r` for each figure in that order and a `%s` for `revises` (made once per order rather
than once per record)."""
_VALUE_TEXTS_MOST = 4096
"""Orders kept at most: a batch may print its fields in ever new orders."""


def _value_text(order: tuple[str, ...]) -> tuple[tuple[str, ...], str]:
    """The `_VALUE_TEXTS` entry of `order`, made and kept."""
    if len(_VALUE_TEXTS) >= _VALUE_TEXTS_MOST:
        _VALUE_TEXTS.clear()
    keys = tuple(sorted(order))
    figures = ",".join(f'"{key.replace("%", "%%")}":%r' for key in keys)
    shape = _VALUE_TEXTS[order] = (keys, '{"fields":{' + figures + '},"revises":%s}')
    return shape


def content_text(record: Mapping[str, Any]) -> str:
    """`canonical_content(record_content(record))` for a record the contract has checked.

    Value records, the bulk of large batches, are written directly: their field keys are Keys
    (nothing to escape) mapped to finite ints or floats, which JSON writes as `repr` does.
    Anything else takes the general path, so the text is always the same."""
    if record["kind"] != "value":
        return canonical_content(record_content(record))
    fields = record["fields"]
    order = tuple(fields)
    keys, text = _VALUE_TEXTS.get(order) or _value_text(order)
    figures: list[object] = []
    for key in keys:
        figure = fields[key]
        kind = type(figure)
        if kind is float:
            if figure.is_integer():
                figure = int(figure)
        elif kind is not int:
            return canonical_content(record_content(record))
        figures.append(figure)
    revises = record.get("revises")
    figures.append("null" if revises is None else _ENCODER.encode(revises))
    return text % tuple(figures)
