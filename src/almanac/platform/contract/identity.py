"""Record identity and content ("Records" and "Stored-record behaviour" sections).

The write compares what a run prints with what is stored through these two functions only.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

RecordKey = tuple[str, str, str]
"""(series, date, discriminator): the period for a value dated by publication, the id for an
event or an item, and "" otherwise."""


def record_key(record: Mapping[str, Any], dates: str) -> RecordKey:
    """The record key: value = series + date (+ period when `dates` is "publication");
    event and item = series + date + id. ("Records", the line under the Item table.)"""
    kind = record["kind"]
    if kind == "value":
        period = (record.get("period") or "") if dates == "publication" else ""
        return (record["series"], record["date"], period)
    return (record["series"], record["date"], record["id"])


def event_identity(record: Mapping[str, Any]) -> tuple[str, str]:
    """An event is the same event across dates by series + id ("Event record" state table)."""
    return (record["series"], record["id"])


def record_content(record: Mapping[str, Any]) -> dict[str, Any]:
    """What counts as the content of a record: for a value its fields and `revises`; for an
    event its state, value and title; for an item its title and link. ("Stored-record
    behaviour", the line under the table.)"""
    kind = record["kind"]
    if kind == "value":
        return {"fields": dict(record["fields"]), "revises": record.get("revises")}
    if kind == "event":
        return {
            "state": record["state"],
            "value": record.get("value"),
            "title": record.get("title"),
        }
    return {"title": record["title"], "url": record["url"]}
