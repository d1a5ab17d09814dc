"""A drawn row as one line of plain text (for a calendar feed's event summary): the words of
the row `render_days` drew, in the order the reader's page draws them, nothing added."""

from __future__ import annotations

from almanac.platform.reader.render import Row

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
