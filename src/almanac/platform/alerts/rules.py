"""The pure rules of the asset checks (freshness, volume, Held) and of the alerts (which
causes are due); every rule takes the stored facts and the moment `now` (DECISIONS 7).

They add to the spec and change none of its rules: "The write" 5 (an empty batch is a
success) still stands, the volume check only says that a success printed far fewer records
than usual; Held ("States and transitions", Approved plug-in) is still decided by a person.
"""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, timedelta
from enum import StrEnum
from typing import Any
from zoneinfo import ZoneInfo

from almanac.platform.contract.schedule import latest_scheduled_at_or_before, parse_schedule
from almanac.platform.lifecycle import State

RETRY_ALLOWANCE = timedelta(minutes=30)
"""Running rule 4: a failed run is retried 30 minutes later. A scheduled time counts as passed
for the freshness check only this long after it, so the retry has had its chance."""
VOLUME_HISTORY = 10
"""The volume check compares a success with the median of up to this many earlier successes."""
VOLUME_MIN_HISTORY = 3
"""Fewer earlier successes than this give no usual count (only an empty batch fails then)."""
STILL_FAILING_AFTER = timedelta(days=1)
RUNNING_STATES = (State.APPROVED, State.FAILING)


class CheckName(StrEnum):
    """The Dagster asset checks of every plug-in asset."""

    FRESHNESS = "freshness"
    VOLUME = "volume"
    HELD = "held"


class Severity(StrEnum):
    WARN = "warn"
    ERROR = "error"


class Cause(StrEnum):
    """Why an alert is sent (at most one a day per plug-in and cause)."""

    FAILING = "failing"
    """The plug-in turned Failing (once for each time it turns Failing)."""
    STILL_FAILING = "still-failing"
    """The plug-in stays Failing past a day since its first failed run (once a day)."""
    HELD = "held"
    """A run is Held, waiting for Accept removals or Keep them (once a day)."""
    NETWORK = "network"
    """The service's own (no plug-in): upload checks could not run because its network was down
    (once a day; `send.send_network_alert`)."""


PUBLISHER_CAUSES = frozenset({Cause.FAILING, Cause.STILL_FAILING})
"""The causes the publishing organization's owners and admins hear about too."""


@dataclass(frozen=True, slots=True)
class RunFact:
    """A kept run as the rules read it: when, outcome, reason, how many records it printed
    (new, revised, unchanged and returned ones), and the sources it downloaded (name, URL)."""

    id: int
    started_at: datetime
    ended_at: datetime
    outcome: str
    reason: str | None = None
    printed: int = 0
    sources: tuple[tuple[str, str], ...] = ()

    @property
    def succeeded(self) -> bool:
        return self.outcome == "success"


@dataclass(frozen=True, slots=True)
class HeldFact:
    series: str
    count: int
    first_dates: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class PluginFacts:
    """What the checks and alerts of one plug-in read, backfills left out (DECISIONS 8: they
    never change Approved/Failing).

    `successes`: the newest successful runs, newest first (up to `VOLUME_HISTORY` + 1);
    `last_run`: the newest run; `first_attempt`: when the first run started; `failing_since`:
    when the first failed run after the last success started; `sources`: the approved
    manifest's sources (name, URL), in declared order."""

    plugin_id: str
    name: str
    state: State
    schedule: str | None
    timezone: str | None
    taken_down: bool = False
    held: tuple[HeldFact, ...] = ()
    publisher_organization_id: int | None = None
    successes: tuple[RunFact, ...] = ()
    last_run: RunFact | None = None
    first_attempt: datetime | None = None
    failing_since: datetime | None = None
    sources: tuple[tuple[str, str], ...] = ()


@dataclass(frozen=True, slots=True)
class CheckOutcome:
    """One check's answer: passed or not, with its severity, a sentence and the facts shown
    beside it in the Dagster UI."""

    check: CheckName
    passed: bool
    description: str
    severity: Severity = Severity.ERROR
    metadata: dict[str, Any] = field(default_factory=dict)


def _local(instant: datetime, zone: str) -> str:
    return instant.astimezone(ZoneInfo(zone)).strftime("%Y-%m-%d %H:%M %Z")


def freshness(facts: PluginFacts, now: datetime) -> CheckOutcome:
    """Freshness: the last success is older than the schedule allows, read in the manifest's
    zone with the platform's own schedule rule (Running rules 1-2).

    Rule: take the newest scheduled time at least 30 minutes before `now` (the retry's
    allowance, Running rule 4) and the scheduled time before it. The plug-in is stale when no
    run succeeded since that earlier time: two scheduled times in a row, each with its retry,
    passed without a success. A plug-in that never succeeded counts from its first attempt;
    one never attempted yet (its first run starts at once, rule 3), or not running (Pending,
    Paused, Removed, taken down), passes."""
    name = CheckName.FRESHNESS
    if facts.state not in RUNNING_STATES or facts.taken_down:
        why = "taken down" if facts.taken_down else str(facts.state)
        return CheckOutcome(name, True, f"not running ({why}): nothing is expected")
    if facts.schedule is None or facts.timezone is None:
        return CheckOutcome(name, True, "no approved schedule")
    schedule = parse_schedule(facts.schedule)
    zone = facts.timezone
    newest = latest_scheduled_at_or_before(schedule, zone, now - RETRY_ALLOWANCE)
    earlier = (
        latest_scheduled_at_or_before(schedule, zone, newest - timedelta(seconds=1))
        if newest is not None
        else None
    )
    last_success = facts.successes[0].ended_at if facts.successes else None
    since = last_success or facts.first_attempt
    metadata: dict[str, Any] = {
        "schedule": facts.schedule,
        "timezone": zone,
        "last success": _local(last_success, zone) if last_success else "none",
    }
    if newest is not None:
        metadata["newest scheduled time"] = _local(newest, zone)
    if earlier is not None:
        metadata["scheduled time before it"] = _local(earlier, zone)
    if since is None:
        return CheckOutcome(
            name, True, "not run yet: the first run starts at once", metadata=metadata
        )
    if earlier is None or since >= earlier:
        return CheckOutcome(name, True, "fresh: the schedule allows this age", metadata=metadata)
    assert newest is not None
    what = f"no success since {_local(last_success, zone)}" if last_success else "no success yet"
    return CheckOutcome(
        name,
        False,
        f"stale: {what}; the scheduled times {_local(earlier, zone)} and "
        f"{_local(newest, zone)} passed, each with its 30-minute retry",
        metadata=metadata,
    )


def usual_count(facts: PluginFacts) -> int | float | None:
    """The usual number of records printed: the median of up to `VOLUME_HISTORY` successes
    before the newest, or None with fewer than `VOLUME_MIN_HISTORY` of them."""
    earlier = [run.printed for run in facts.successes[1 : VOLUME_HISTORY + 1]]
    if len(earlier) < VOLUME_MIN_HISTORY:
        return None
    return statistics.median(earlier)


def volume(facts: PluginFacts) -> CheckOutcome:
    """Volume (a warning): the newest success printed no records while some success before it
    (of up to `VOLUME_HISTORY`) printed some, or its first success printed none; or it printed
    fewer than half the usual count (`usual_count`). "An empty batch is a success" ("The write"
    5) stays true for the store; this check keeps it from hiding a broken source. A plug-in
    whose last successes all printed nothing may print nothing."""
    name = CheckName.VOLUME
    if not facts.successes:
        return CheckOutcome(name, True, "no successful run yet", Severity.WARN)
    printed = facts.successes[0].printed
    earlier = [run.printed for run in facts.successes[1 : VOLUME_HISTORY + 1]]
    usual = usual_count(facts)
    metadata: dict[str, Any] = {"printed": printed, "store run": facts.successes[0].id}
    if usual is not None:
        metadata["usual"] = usual
        metadata["successes compared"] = len(earlier)
    usually = f" (usually {usual:g})" if usual is not None else ""
    if printed == 0 and (not earlier or max(earlier) > 0):
        before = f"; the successes before it printed up to {max(earlier)}" if earlier else ""
        return CheckOutcome(
            name,
            False,
            f"the newest successful run printed no records{before}: is a source broken?",
            Severity.WARN,
            metadata,
        )
    if usual is not None and printed < usual / 2:
        return CheckOutcome(
            name,
            False,
            f"the newest successful run printed {printed} records, under half the usual "
            f"{usual:g} (the median of the successes before it)",
            Severity.WARN,
            metadata,
        )
    return CheckOutcome(name, True, f"printed {printed} records{usually}", Severity.WARN, metadata)


def held(facts: PluginFacts) -> CheckOutcome:
    """Held: a run would withdraw more records than the held-run limits allow and waits for a
    person's Accept removals or Keep them."""
    name = CheckName.HELD
    if not facts.held:
        return CheckOutcome(name, True, "not held")
    parts = [
        f"{h.series}: {h.count} records (first missing {', '.join(h.first_dates[:3])})"
        for h in facts.held
    ]
    return CheckOutcome(
        name,
        False,
        "held: " + "; ".join(parts) + "; choose Accept removals or Keep them at the host",
        metadata={"series": [h.series for h in facts.held]},
    )


def evaluate_checks(facts: PluginFacts, now: datetime) -> list[CheckOutcome]:
    """The three checks of one plug-in at `now`."""
    return [freshness(facts, now), volume(facts), held(facts)]


@dataclass(frozen=True, slots=True)
class SentFact:
    """An alert already sent for the plug-in: its cause and when."""

    cause: Cause
    day: date
    sent_at: datetime


def alert_day(now: datetime) -> date:
    """The day an alert counts against (at most one a day per plug-in and cause): UTC."""
    return now.astimezone(UTC).date()


def causes_due(facts: PluginFacts, sent: Sequence[SentFact], now: datetime) -> list[Cause]:
    """The alert causes to send now for one plug-in, given the alerts sent for it.

    Failing: once when the plug-in turns Failing (no Failing alert since its first failed
    run); still Failing: once a day while it has been Failing for more than a day; Held: once
    a day while Held. None twice the same (UTC) day for the same cause."""
    today = alert_day(now)
    sent_today = {s.cause for s in sent if s.day == today}
    due: list[Cause] = []
    if facts.state is State.FAILING and facts.failing_since is not None:
        if now - facts.failing_since < STILL_FAILING_AFTER:
            told = any(s.cause is Cause.FAILING and s.sent_at >= facts.failing_since for s in sent)
            if not told:
                due.append(Cause.FAILING)
        else:
            due.append(Cause.STILL_FAILING)
    if facts.held:
        due.append(Cause.HELD)
    return [cause for cause in due if cause not in sent_today]


def failed_source(facts: PluginFacts) -> tuple[str, str] | None:
    """The source a failed last run could not download (Source download rule 7: its reason
    reads "could not download <name>: ..."), as (name, URL), or None."""
    run = facts.last_run
    if run is None or run.succeeded or not run.reason:
        return None
    prefix = "could not download "
    if not run.reason.startswith(prefix):
        return None
    name = run.reason[len(prefix) :].split(":", 1)[0]
    for source, url in facts.sources:
        if source == name:
            return source, url
    return name, ""
