"""The pure rules of the checks and alerts, at their edges: freshness read in the manifest's
zone (a clock change included), volume against the usual count, Held, and which alert causes
are due given those already sent."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, date, datetime, timedelta

from almanac.platform.alerts.rules import (
    Cause,
    CheckName,
    HeldFact,
    PluginFacts,
    RunFact,
    SentFact,
    Severity,
    causes_due,
    evaluate_checks,
    failed_source,
    freshness,
    held,
    volume,
)
from almanac.platform.lifecycle import State


def utc(*args: int) -> datetime:
    return datetime(*args, tzinfo=UTC)


def success(ended: datetime, printed: int = 5, run_id: int = 1) -> RunFact:
    return RunFact(run_id, ended - timedelta(seconds=5), ended, "success", printed=printed)


# Daily at 06:00 in New York: 11:00 UTC in winter (EST), 10:00 UTC in summer (EDT).
DAILY_NY = PluginFacts(
    plugin_id="p",
    name="P",
    state=State.APPROVED,
    schedule="0 6 * * *",
    timezone="America/New_York",
)


def test_freshness_allows_one_missed_time_and_fails_after_the_second_and_its_retry() -> None:
    facts = replace(DAILY_NY, successes=(success(utc(2026, 1, 5, 11, 0, 20)),))
    # Jan 6 06:00 EST passed without a success: still fresh (one scheduled time missed).
    assert freshness(facts, utc(2026, 1, 7, 11, 29)).passed
    # Jan 7 06:00 EST (11:00 UTC) also passed, but its retry's 30 minutes have not.
    assert freshness(facts, utc(2026, 1, 7, 11, 29, 59)).passed
    stale = freshness(facts, utc(2026, 1, 7, 11, 30))
    assert not stale.passed and stale.severity is Severity.ERROR
    assert stale.description == (
        "stale: no success since 2026-01-05 06:00 EST; the scheduled times 2026-01-06 06:00 EST "
        "and 2026-01-07 06:00 EST passed, each with its 30-minute retry"
    )
    assert stale.metadata["last success"] == "2026-01-05 06:00 EST"


def test_freshness_reads_the_schedule_in_the_zone_across_a_clock_change() -> None:
    # DST starts in New York on 2026-03-08: 06:00 EDT is 10:00 UTC from that day.
    facts = replace(DAILY_NY, successes=(success(utc(2026, 3, 7, 11, 0, 20)),))
    assert freshness(facts, utc(2026, 3, 9, 10, 29)).passed
    stale = freshness(facts, utc(2026, 3, 9, 10, 30))
    assert not stale.passed
    assert "2026-03-08 06:00 EDT and 2026-03-09 06:00 EDT" in stale.description


def test_freshness_of_plugins_not_running_or_never_run() -> None:
    now = utc(2026, 1, 20, 12)
    for state in (State.PAUSED, State.PENDING, State.REMOVED):
        outcome = freshness(replace(DAILY_NY, state=state), now)
        assert outcome.passed and str(state) in outcome.description
    assert freshness(replace(DAILY_NY, taken_down=True), now).passed
    assert freshness(DAILY_NY, now).description == "not run yet: the first run starts at once"
    # Never succeeded: counted from the first attempt.
    tried = replace(DAILY_NY, state=State.FAILING, first_attempt=utc(2026, 1, 17, 11, 0))
    assert freshness(tried, utc(2026, 1, 18, 11, 31)).passed
    failing = freshness(tried, utc(2026, 1, 19, 11, 30))
    assert not failing.passed and failing.description.startswith("stale: no success yet;")


def test_volume_fails_an_empty_batch_and_one_under_half_the_usual_count() -> None:
    t = utc(2026, 1, 10)
    assert volume(DAILY_NY).passed  # no success yet

    def with_counts(*printed: int) -> PluginFacts:
        runs = tuple(success(t - timedelta(days=i), n, 100 - i) for i, n in enumerate(printed))
        return replace(DAILY_NY, successes=runs)

    empty_first = volume(with_counts(0))
    assert not empty_first.passed and empty_first.severity is Severity.WARN
    assert empty_first.description.startswith("the newest successful run printed no records")
    # The usual count is the median of the earlier successes (here 10, 10, 12, 40).
    assert volume(with_counts(6, 10, 40, 10, 12)).passed
    low = volume(with_counts(5, 10, 40, 10, 12))
    assert not low.passed
    assert "printed 5 records, under half the usual 11" in low.description
    assert low.metadata["usual"] == 11
    # Two earlier successes give no usual count yet: only an empty batch fails.
    assert volume(with_counts(1, 100, 100)).passed
    # A plug-in whose successes before printed nothing may print nothing.
    assert volume(with_counts(0, 0, 0, 0)).passed
    assert volume(with_counts(0)).description.endswith("printed no records: is a source broken?")
    # An empty batch after some success printed records warns, even when empty batches have
    # become usual since the source broke (ten successes are compared).
    for counts in ((0, 3, 4, 5), (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 7)):
        empty = volume(with_counts(*counts))
        assert not empty.passed, counts
        assert f"the successes before it printed up to {max(counts)}" in empty.description
    assert volume(with_counts(0, *[0] * 10, 7)).passed  # the eleventh before is not compared


def test_held_and_all_three_checks() -> None:
    assert held(DAILY_NY).passed
    facts = replace(DAILY_NY, held=(HeldFact("ticks", 12, ("2026-01-01", "2026-01-02")),))
    outcome = held(facts)
    assert not outcome.passed
    assert outcome.description == (
        "held: ticks: 12 records (first missing 2026-01-01, 2026-01-02); "
        "choose Accept removals or Keep them at the host"
    )
    assert [o.check for o in evaluate_checks(facts, utc(2026, 1, 1))] == list(CheckName)


def test_failing_alerts_once_per_failure_then_daily_while_still_failing() -> None:
    since = utc(2026, 1, 9, 23, 50)
    facts = replace(DAILY_NY, state=State.FAILING, failing_since=since)
    assert causes_due(facts, [], since + timedelta(minutes=1)) == [Cause.FAILING]
    told = [SentFact(Cause.FAILING, date(2026, 1, 9), since + timedelta(minutes=1))]
    # The next UTC day, still within a day of the failure: not told again.
    assert causes_due(facts, told, utc(2026, 1, 10, 0, 30)) == []
    # Past a day: still Failing, once a day.
    later = utc(2026, 1, 10, 23, 51)
    assert causes_due(facts, told, later) == [Cause.STILL_FAILING]
    told.append(SentFact(Cause.STILL_FAILING, date(2026, 1, 10), later))
    assert causes_due(facts, told, utc(2026, 1, 10, 23, 59)) == []
    assert causes_due(facts, told, utc(2026, 1, 11, 0, 0)) == [Cause.STILL_FAILING]
    # A new failure after a success is a new Failing alert, but not twice the same day.
    again = replace(facts, failing_since=utc(2026, 1, 12, 8))
    assert causes_due(again, told, utc(2026, 1, 12, 8, 1)) == [Cause.FAILING]
    same_day = [SentFact(Cause.FAILING, date(2026, 1, 12), utc(2026, 1, 12, 1))]
    assert causes_due(again, same_day, utc(2026, 1, 12, 8, 1)) == []
    # Approved, not held: nothing.
    assert causes_due(DAILY_NY, [], later) == []


def test_held_alerts_once_a_day() -> None:
    facts = replace(DAILY_NY, held=(HeldFact("ticks", 12, ("2026-01-01",)),))
    now = utc(2026, 1, 9, 12)
    assert causes_due(facts, [], now) == [Cause.HELD]
    told = [SentFact(Cause.HELD, date(2026, 1, 9), now)]
    assert causes_due(facts, told, now + timedelta(hours=11)) == []
    assert causes_due(facts, told, now + timedelta(hours=12)) == [Cause.HELD]


def test_the_source_that_failed_is_read_from_the_reason() -> None:
    run = RunFact(7, utc(2026, 1, 9), utc(2026, 1, 9), "failure", "could not download data: HTTP")
    facts = replace(DAILY_NY, last_run=run, sources=(("data", "https://x.example.org/d"),))
    assert failed_source(facts) == ("data", "https://x.example.org/d")
    fetcher = replace(run, reason="the fetcher exited with status 2")
    assert failed_source(replace(facts, last_run=fetcher)) is None
