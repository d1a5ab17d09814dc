"""The app's own words and how a screen reader says a unit (spec "Reader presentation rules"
8 and 10), and a schedule said in words for the store. English only at present; the same
words as the tool's `WORDS` and `UNIT_WORDS`."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from types import MappingProxyType

from almanac.platform.contract.schedule import Schedule, parse_schedule


@dataclass(frozen=True, slots=True)
class AppWords:
    """The app's own words (rule 10: English only at present)."""

    scheduled: str = "Scheduled"
    last_rate: str = "Last rate"
    rate_of: str = "Rate of"
    moved_to: str = "Moved to"
    cancelled: str = "Cancelled"
    was: str = "Was"
    held: str = "Held"
    could_not_refresh_since: str = "Could not refresh since"
    could_not_refresh: str = "Could not refresh"
    could_not_reach: str = "Could not reach Almanac"
    not_updating: str = "Not updating"


WORDS = AppWords()

UNIT_WORDS: Mapping[str, str] = MappingProxyType(
    {"DOP": "Dominican pesos", "USD": "US dollars", "EUR": "euros", "%": "percent"}
)
"""Units a screen reader says as words (rule 8); any other unit is said as written."""


def spoken(text: str, unit: str | None) -> str:
    """What a screen reader says for a figure: its two-decimal text, then the unit in words
    (rule 8: `DOP`, `USD`, `EUR` and `%` as words, others as written); no unit: the text."""
    if not unit:
        return text
    return f"{text} {UNIT_WORDS.get(unit, unit)}"


WEEKDAYS = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday")
"""The days' names, Monday first, as `date.weekday()` counts them."""
MONTHS = (
    "January",
    "February",
    "March",
    "April",
    "May",
    "June",
    "July",
    "August",
    "September",
    "October",
    "November",
    "December",
)
"""The months' names, January first."""
_WORKING_WEEK = frozenset({1, 2, 3, 4, 5})


def _listed(items: Sequence[str]) -> str:
    """`a`, `a and b`, `a, b and c`."""
    if len(items) <= 1:
        return "".join(items)
    return f"{', '.join(items[:-1])} and {items[-1]}"


def _step(values: Sequence[int], span: int) -> int | None:
    """The step of values that run 0, n, 2n, ... through the whole span (`*/n`), else None."""
    if len(values) < 2 or values[0] != 0 or span % (values[1] - values[0]):
        return None
    step = values[1]
    return step if list(values) == list(range(0, span, step)) else None


def _days(schedule: Schedule) -> str:
    months = None
    if schedule.months is not None:
        months = _listed([MONTHS[m - 1] for m in sorted(schedule.months)])
    week = None
    if schedule.days_of_week is not None:
        weekdays = {d % 7 for d in schedule.days_of_week}
        if weekdays == _WORKING_WEEK:
            week = "every weekday"
        else:
            # The schedule counts from Sunday (0); the names from Monday.
            monday_first = sorted((d + 6) % 7 for d in weekdays)
            week = "every " + _listed([WEEKDAYS[d] for d in monday_first])
    if schedule.days_of_month is not None:
        numbers = sorted(schedule.days_of_month)
        which = "day" if len(numbers) == 1 else "days"
        phrase = f"on {which} {_listed([str(n) for n in numbers])} of {months or 'every month'}"
        # Both restricted: a day matching either one runs (croniter's reading, schedule.py).
        return f"{phrase} and {week}" if week else phrase
    return f"{week or 'every day'}{f' in {months}' if months else ''}"


def _times(schedule: Schedule) -> tuple[bool, str]:
    """The times of day in words, and whether they are named one by one (`at 16:00`)."""
    minutes, hours = sorted(schedule.minutes), sorted(schedule.hours)
    step = _step(minutes, 60)
    if len(hours) == 24:
        if step == 1:
            return False, "every minute"
        if step is not None:
            return False, f"every {step} minutes"
        if len(minutes) == 1:
            at = "on the hour" if minutes[0] == 0 else f"at minute {minutes[0]}"
            return False, f"every hour {at}"
    times = [f"{h:02d}:{m:02d}" for h in hours for m in minutes]
    in_a_row = hours[-1] - hours[0] + 1 == len(hours)
    if len(times) > 6 and in_a_row and (len(minutes) == 1 or step is not None):
        every = "every hour" if len(minutes) == 1 else f"every {step} minutes"
        return False, f"{every} from {times[0]} to {times[-1]}"
    return True, f"at {_listed(times)}"


def schedule_words(schedule: str, zone: str) -> str:
    """A manifest's `schedule` (five-field cron, read on the wall clock of `zone`) said in the
    app's own words, as the store shows it to readers: `every weekday at 16:00 Europe/Prague`,
    `on day 1 of every month at 06:00 UTC`, `every day, every hour from 08:15 to 18:15 UTC`.
    Rule 10: the app's own words are English only at present. A schedule that does not parse
    (none is stored) is said as written."""
    try:
        parsed = parse_schedule(schedule)
    except ValueError:
        return f"on the schedule {schedule} {zone}"
    days = _days(parsed)
    named, times = _times(parsed)
    return f"{days} {times} {zone}" if named else f"{days}, {times} {zone}"
