"""The schedule (Manifest `schedule`; Running rules; Limits: runs a day).

A schedule is a five-field cron (minute, hour, day of month, month, day of week), at most 100
characters, read on the wall clock of the manifest's time zone. Only the classic forms are
accepted: numbers, `*`, ranges `a-b`, steps `/n`, lists `a,b` and English month and day names
(`jan`, `mon`; `7` is Sunday too). A range never runs backwards (`5-1`, `fri-mon` are refused).
croniter's extensions (`@daily`, seconds and year fields, `L`, `W`, `#`, `?`, `H`) are refused
so the Node tool can read every schedule the same way. When both day of month and day of week
are restricted (anything croniter does not expand to `*`, so `*/2` too), a day matches either
one, as croniter does.

Clock changes (Running rule 2): a wall time skipped by a clock change does not run; a wall time
repeated by a clock change runs once, at its first instant. Every instant here is an argument.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from croniter import croniter
from croniter.croniter import CroniterError

MAX_SCHEDULE_CHARS = 100
MAX_RUNS_A_DAY = 24

_MONTHS = ("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec")
_DAYS = ("sun", "mon", "tue", "wed", "thu", "fri", "sat")
_FIELD_NAMES = ("minute", "hour", "day of month", "month", "day of week")
_NUMBER = r"[0-9]+"
_NAMED = {3: "|".join(_MONTHS), 4: "|".join(_DAYS)}
# A full Gregorian weekday-and-leap-year cycle inside 1901..2099: every day-of-month, month and
# weekday combination that ever matches matches within these 28 years.
_CYCLE_START = date(2026, 1, 1)
_CYCLE_DAYS = (date(2054, 1, 1) - _CYCLE_START).days
_SEARCH_LIMIT = 200_000


@dataclass(frozen=True, slots=True)
class Schedule:
    """A parsed five-field cron: its text and the expanded value sets of each field."""

    text: str
    minutes: frozenset[int]
    hours: frozenset[int]
    days_of_month: frozenset[int] | None  # None: `*`
    months: frozenset[int] | None  # None: `*`
    days_of_week: frozenset[int] | None  # None: `*`; 0 is Sunday

    def matches_day(self, day: date) -> bool:
        """Whether the schedule runs at some time of this calendar day (wall clock)."""
        if self.months is not None and day.month not in self.months:
            return False
        dom_ok = self.days_of_month is None or day.day in self.days_of_month
        dow_ok = self.days_of_week is None or (day.isoweekday() % 7) in self.days_of_week
        if self.days_of_month is not None and self.days_of_week is not None:
            return dom_ok or dow_ok
        return dom_ok and dow_ok


def _field_pattern(index: int) -> re.Pattern[str]:
    value = _NUMBER if index not in _NAMED else f"(?:{_NUMBER}|{_NAMED[index]})"
    token = rf"(?:\*|{value}(?:-{value})?)(?:/[0-9]+)?"
    return re.compile(rf"{token}(?:,{token})*", re.IGNORECASE)


_FIELD_PATTERNS = tuple(_field_pattern(i) for i in range(5))
_RANGE = re.compile(r"([0-9a-zA-Z]+)-([0-9a-zA-Z]+)")


def _value(token: str, index: int) -> int:
    if token.isdigit():
        return int(token)
    names = _MONTHS if index == 3 else _DAYS
    return names.index(token.lower()) + (1 if index == 3 else 0)


def parse_schedule(text: str) -> Schedule:
    """Parse a manifest `schedule`; raise ValueError with a one-line reason when it is not one."""
    if not isinstance(text, str):
        raise ValueError("schedule must be a string")
    if len(text) > MAX_SCHEDULE_CHARS:
        raise ValueError(f"schedule is {len(text)} characters, at most {MAX_SCHEDULE_CHARS}")
    fields = text.split()
    if text.strip().startswith("@"):
        raise ValueError(f"schedule {text!r} is a shorthand; write five fields instead")
    if len(fields) != 5:
        raise ValueError(
            f"schedule {text!r} has {len(fields)} fields; it needs five "
            "(minute, hour, day of month, month, day of week)"
        )
    for index, (field, pattern) in enumerate(zip(fields, _FIELD_PATTERNS, strict=True)):
        if not pattern.fullmatch(field):
            raise ValueError(f"schedule {_FIELD_NAMES[index]} field {field!r} is not valid cron")
        for low, high in _RANGE.findall(field):
            if _value(low, index) > _value(high, index):
                raise ValueError(
                    f"schedule {_FIELD_NAMES[index]} range {low}-{high} runs backwards; "
                    "write it as two ranges"
                )
    try:
        expanded, nth = croniter.expand(" ".join(fields))
    except (CroniterError, ValueError) as exc:
        raise ValueError(f"schedule {text!r} is not valid cron: {exc}") from None
    if nth:
        raise ValueError(f"schedule {text!r} uses '#', which contract 1 does not know")

    def values(i: int) -> frozenset[int] | None:
        if expanded[i] == ["*"]:
            return None
        return frozenset(int(v) for v in expanded[i])

    schedule = Schedule(
        text=text,
        minutes=values(0) or frozenset(range(60)),
        hours=values(1) or frozenset(range(24)),
        days_of_month=values(2),
        months=values(3),
        days_of_week=values(4),
    )
    if not any(schedule.matches_day(d) for d in _cycle_days()):
        raise ValueError(f"schedule {text!r} names no day that exists")
    return schedule


def _cycle_days() -> Iterator[date]:
    for offset in range(_CYCLE_DAYS):
        yield _CYCLE_START + timedelta(days=offset)


def _zone(zone: str) -> ZoneInfo:
    try:
        return ZoneInfo(zone)
    except (ZoneInfoNotFoundError, ValueError) as exc:
        raise ValueError(f"time zone {zone!r} is not a named IANA zone") from exc


def _wall_instant(wall: datetime, tz: ZoneInfo) -> datetime | None:
    """The first UTC instant showing this wall time in the zone, or None when a change skips it."""
    first = wall.replace(tzinfo=tz, fold=0).astimezone(UTC)
    if first.astimezone(tz).replace(tzinfo=None) == wall:
        return first
    second = wall.replace(tzinfo=tz, fold=1).astimezone(UTC)
    if second.astimezone(tz).replace(tzinfo=None) == wall:
        return second
    return None


def _runs_on(schedule: Schedule, day: date, tz: ZoneInfo) -> int:
    return sum(
        1
        for h in schedule.hours
        for m in schedule.minutes
        if _wall_instant(datetime(day.year, day.month, day.day, h, m), tz) is not None
    )


def _has_clock_change(day: date, tz: ZoneInfo) -> bool:
    start = datetime(day.year, day.month, day.day, tzinfo=tz)
    end = start + timedelta(days=1)
    return start.utcoffset() != end.utcoffset() or start.dst() != end.dst()


def max_runs_per_day(schedule: Schedule, zone: str) -> int:
    """The most runs on any calendar day in the zone (over 24 is PLG-SCHEDULE-TOO-FREQUENT).

    A clock change only removes runs (skipped times) or merges them (repeated times run once), so
    any matching day without a change has the most; days are searched over a 28-year cycle.
    """
    tz = _zone(zone)
    per_plain_day = len(schedule.minutes) * len(schedule.hours)
    best = 0
    for day in _cycle_days():
        if not schedule.matches_day(day):
            continue
        if not _has_clock_change(day, tz):
            return per_plain_day
        best = max(best, _runs_on(schedule, day, tz))
        if best > MAX_RUNS_A_DAY:
            return best
    return best


@dataclass(frozen=True, slots=True)
class Due:
    """The answer of the due rule.

    `scheduled_for` is the UTC instant of the newest scheduled time the run stands for (the
    orchestrator's run key); it is None only for a first run when no scheduled time has come yet.
    """

    due: bool
    scheduled_for: datetime | None
    first_run: bool = False


def _aware_utc(instant: datetime, name: str) -> datetime:
    if instant.tzinfo is None or instant.utcoffset() is None:
        raise ValueError(f"{name} must be an aware instant, got a naive datetime")
    return instant.astimezone(UTC)


def _minute(wall: datetime) -> datetime:
    return wall.replace(second=0, microsecond=0)


def latest_scheduled_at_or_before(schedule: Schedule, zone: str, now: datetime) -> datetime | None:
    """The newest scheduled instant at or before `now` (UTC), skipped and repeated times resolved.

    Wall times a clock change skips never count; a repeated wall time counts at its first instant.
    """
    tz = _zone(zone)
    now = _aware_utc(now, "now")
    local = now.astimezone(tz)
    wall = _minute(local.replace(tzinfo=None))
    if local.fold == 1:
        # In the second pass of a repeated hour every later wall time of that hour already had
        # its first instant, so the search starts past the hour.
        first_offset = local.replace(fold=0).utcoffset() or timedelta(0)
        second_offset = local.utcoffset() or timedelta(0)
        wall += max(first_offset - second_offset, timedelta(0))
    try:
        it = croniter(schedule.text, wall + timedelta(minutes=1))
        for _ in range(_SEARCH_LIMIT):
            candidate = it.get_prev(datetime)
            instant = _wall_instant(candidate, tz)
            if instant is not None and instant <= now:
                return instant
    except CroniterError:
        return None
    return None


def next_run_after(schedule: Schedule, zone: str, after: datetime) -> datetime | None:
    """The first scheduled instant strictly after `after` (UTC), for display; None if none comes."""
    tz = _zone(zone)
    after = _aware_utc(after, "after")
    wall = _minute(after.astimezone(tz).replace(tzinfo=None))
    try:
        it = croniter(schedule.text, wall - timedelta(minutes=1))
        for _ in range(_SEARCH_LIMIT):
            candidate = it.get_next(datetime)
            instant = _wall_instant(candidate, tz)
            if instant is not None and instant > after:
                return instant
    except CroniterError:
        return None
    return None


def is_due(schedule: Schedule, zone: str, last_attempt: datetime | None, now: datetime) -> Due:
    """Running rules 1-3: due when a scheduled time passed since the last attempt (zone clock).

    Several missed times give one run, for the newest of them. `last_attempt` None means the
    plug-in was never attempted: its very first run starts at once (rule 3), so it is due.
    """
    return due_since(latest_scheduled_at_or_before(schedule, zone, now), last_attempt)


def due_since(newest: datetime | None, last_attempt: datetime | None) -> Due:
    """`is_due` once the newest scheduled instant at or before now is known (`None`: none):
    plug-ins that share a schedule and a zone share it, and it is the costly part."""
    if last_attempt is None:
        return Due(due=True, scheduled_for=newest, first_run=True)
    last_attempt = _aware_utc(last_attempt, "last_attempt")
    if newest is not None and newest > last_attempt:
        return Due(due=True, scheduled_for=newest)
    return Due(due=False, scheduled_for=None)
