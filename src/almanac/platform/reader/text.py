"""A drawn row as one line of plain text (for a calendar feed's event summary): the words of
the row `render_days` drew, in the order the reader's page draws them, nothing added."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from almanac.platform.reader.numbers import is_number, two_decimals
from almanac.platform.reader.render import Row
from almanac.platform.reader.words import WORDS

SEPARATOR = " · "


def row_words(row: Row) -> str:
    """The row's words, joined by " · ": an item's title; a status row's note; else the label,
    each figure (a value's with its field label, as the page labels them), the change and the
    note. A value row's attribution is left out: it is the caller's to place (rule 4 ends the
    row with it)."""
    if row["type"] == "item":
        return row["label"]
    if row["type"] == "status":
        return row["note"]
    parts = [row["label"]]
    for figure in row["figures"]:
        if row["type"] == "value":
            parts.append(f"{figure['label']} {figure['text']}")
        else:
            parts.append(figure["text"])
    if row["change"] is not None:
        parts.append(row["change"]["text"])
    if row["note"]:
        parts.append(row["note"])
    return SEPARATOR.join(parts)


def record_words(record: Mapping[str, Any] | None) -> str:
    """A stored record's content in a few words, for a list of its revisions: a value's fields
    (`buy 58.10`), an event's state, value, title and move, an item's title; `nothing` where
    the record did not stand (new, or withdrawn)."""
    if record is None:
        return "nothing"
    if record["kind"] == "value":
        return ", ".join(f"{k} {two_decimals(v)}" for k, v in record["fields"].items())
    if record["kind"] == "item":
        return str(record["title"])
    parts = [str(record["state"])]
    if is_number(record.get("value")):
        parts.append(two_decimals(record["value"]))
    if record.get("title"):
        parts.append(str(record["title"]))
    if record.get("movedTo"):
        parts.append(f"{WORDS.moved_to.lower()} {record['movedTo']}")
    return " ".join(parts)
