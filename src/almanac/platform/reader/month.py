"""A day of the month grid: the rows of every shown plug-in's section, made into a few short
lines so that what happened that day comes first (the month grid is the readers' page's own
choice; the specification draws days, "Reader presentation rules").

A desk's month cell has room for four lines. Drawn in the day panel's order (rule 3, section by
section), one plug-in with many value series fills every cell with the values it carries
forward (rule 5's value in force and last rate) and pushes the day's own events and records of
the plug-ins after it out of sight. The cell therefore draws, in this order:

1. events (rule 3: events lead a day): one line per plug-in, its first event, with the count
   of its other events that day;
2. the records dated that day (value rows of style `normal`, items): one line per plug-in, its
   first row, with the count of its others;
3. values carried forward (`in-force` and `last` rows of every plug-in): the row itself when
   there is one, else one line counting them ("26 rates in force");
4. status rows (rule 9) that say something is wrong (could not refresh, could not reach, not
   updating), one per plug-in, as drawn. A `last-rate` status row only says no record came
   after the plug-in's newest, which the lighter rows already show: the day panel draws it.

Lines keep the plug-ins' order (by id, as the days come) within each group. The day panel and
the agenda still draw every row, in rule 3's order: a line only stands for rows drawn there.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from almanac.platform.reader.render import Row, Section

IN_FORCE = "rates in force"
"""The words after the count of values carried forward (the app's words are English only at
present, rule 10; a value in force is a rate in force, as rule 5's "Rate of" and "Last rate"
call it)."""


@dataclass(frozen=True, slots=True)
class CellLine:
    """One line of a month cell: `row` drawn compactly, standing also for `more` further rows
    of the same plug-in and group; or, with `row` None, the count `more` of values in force."""

    group: str
    row: Row | None
    more: int
    plugin: str | None

    @property
    def words(self) -> str:
        """The words of a line counting values in force."""
        return f"{self.more} {IN_FORCE}"


def _carried(row: Row) -> bool:
    return row["type"] == "value" and row["style"] != "normal"


def month_cell(sections: Sequence[Section]) -> list[CellLine]:
    """The lines of a month cell for the day's sections (one per plug-in, as `render_days`
    draws them), in the order of the module's docstring."""
    events: list[CellLine] = []
    own: list[CellLine] = []
    carried: list[tuple[str, Row]] = []
    statuses: list[CellLine] = []
    for section in sections:
        plugin = section["plugin"]
        rows = section["rows"]
        happened = [r for r in rows if r["type"] == "event"]
        if happened:
            events.append(CellLine("event", happened[0], len(happened) - 1, plugin))
        dated = [
            r for r in rows if r["type"] == "item" or (r["type"] == "value" and not _carried(r))
        ]
        if dated:
            own.append(CellLine("record", dated[0], len(dated) - 1, plugin))
        carried.extend((plugin, r) for r in rows if _carried(r))
        statuses.extend(
            CellLine("status", r, 0, plugin)
            for r in rows
            if r["type"] == "status" and r["status"] != "last-rate"
        )
    if len(carried) == 1:
        ((plugin, row),) = carried
        in_force = [CellLine("in-force", row, 0, plugin)]
    elif carried:
        in_force = [CellLine("in-force", None, len(carried), None)]
    else:
        in_force = []
    return events + own + in_force + statuses
