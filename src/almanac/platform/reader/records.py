"""Stored records in the shape the rendering reads (the shape of a fetcher's output line, plus
`movedTo` on the old date of a moved event; see `render`)."""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping
from typing import Any, Protocol


class StoredLike(Protocol):
    """What the store keeps of a record as it stands: `store.reading.StoredRecord` has it."""

    # `dt.date`: in the class body the property `date` hides the type of the same name.
    @property
    def kind(self) -> str: ...
    @property
    def series(self) -> str: ...
    @property
    def date(self) -> dt.date: ...
    @property
    def discriminator(self) -> str: ...
    @property
    def content(self) -> Mapping[str, Any]: ...
    @property
    def moved_to(self) -> dt.date | None: ...


def from_stored(stored: StoredLike) -> dict[str, Any]:
    """The record a reader's day is drawn from: key parts and content (`identity.record_key`,
    `identity.record_content`) put back together; a stored null `value`, `title` or
    `revises` is left out, as the fetcher left it out."""
    content = stored.content
    record: dict[str, Any] = {
        "kind": stored.kind,
        "series": stored.series,
        "date": stored.date.isoformat(),
    }
    if stored.kind == "value":
        # The discriminator of a value is its period for a series dated by publication.
        if stored.discriminator:
            record["period"] = stored.discriminator
        record["fields"] = dict(content["fields"])
        if content.get("revises") is not None:
            record["revises"] = content["revises"]
        return record
    record["id"] = stored.discriminator
    if stored.kind == "event":
        record["state"] = content["state"]
        for key in ("value", "title"):
            if content.get(key) is not None:
                record[key] = content[key]
        if stored.moved_to is not None:
            record["movedTo"] = stored.moved_to.isoformat()
        return record
    record["title"] = content["title"]
    record["url"] = content["url"]
    return record
