"""Schedule parsing, runs a day and the due rule (Running rules) across real clock changes."""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta
from zoneinfo import ZoneInfo

import pytest
from croniter import croniter

from almanac.platform.contract.schedule import (
    is_due,
    latest_scheduled_at_or_before,
    max_runs_per_day,
    next_run_after,
    parse_schedule,
)

NY = "America/New_York"
BERLIN = "Europe/Berlin"
LORD_HOWE = "Australia/Lord_Howe"
SANTO_DOMINGO = "America/Santo_Domingo"


def utc(text: str) -> datetime:
    return datetime.fromisoformat(text).replace(tzinfo=UTC)


def local(zone: str, text: str, fold: int = 0) -> datetime:
    return datetime.fromisoformat(text).replace(tzinfo=ZoneInfo(zone), fold=fold).astimezone(UTC)


def runs_between(
    text: str, zone: str, start: datetime, end: datetime, step: int = 5
) -> list[datetime]:
    """The scheduled instants of the runs the due rule starts when asked every `step` minutes
    (the service asks each minute; every schedule here names multiples of 5 minutes)."""
    schedule = parse_schedule(text)
    last = start
    runs: list[datetime] = []
    now = start
    while now <= end:
        answer = is_due(schedule, zone, last, now)
        if answer.due:
            assert answer.scheduled_for is not None
            runs.append(answer.scheduled_for)
            last = now
        now += timedelta(minutes=step)
    return runs


# --- parsing ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "text",
    [
        "0 * * * *",
        "*/15 1 * * *",
        "0 9 * * 1-5",
        "0 0 29 2 *",
        "5 4 * jan,JUL sun",
        "0 0 * * 7",
        "0-30/10 6-8 1,15 * mon-fri",
        "0 0 * * 5-7",
        "0 0 * jan-MAR mon-SAT",
        "  0   6 * * *  ",
    ],
)
def test_five_field_schedules_parse(text: str) -> None:
    assert parse_schedule(text).text == text


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ("@daily", "shorthand"),
        ("@hourly", "shorthand"),
        ("0 0 * * * *", "6 fields"),
        ("0 0 0 * * * 2026", "7 fields"),
        ("0 0 * *", "4 fields"),
        ("", "0 fields"),
        ("60 * * * *", "not valid cron"),
        ("0 24 * * *", "not valid cron"),
        ("0 0 L * *", "day of month"),
        ("0 0 15W * *", "day of month"),
        ("0 0 ? * *", "day of month"),
        ("0 0 * * 5#2", "day of week"),
        ("0 0 * * L5", "day of week"),
        ("H * * * *", "minute"),
        ("0 0 * foo *", "month"),
        ("0 0 * * mon-funday", "day of week"),
        ("5-1 * * * *", "backwards"),
        ("0 0 * * fri-mon", "backwards"),
        ("0 0 * nov-feb *", "backwards"),
        ("0 0 31 2 *", "no day that exists"),
        ("0 0 30 2 *", "no day that exists"),
        ("0 0 31 4,6,9,11 *", "no day that exists"),
        ("0 0 * * " + "1," * 50 + "1", "at most 100"),
    ],
)
def test_other_forms_are_refused_with_a_reason(text: str, reason: str) -> None:
    with pytest.raises(ValueError, match=reason) as caught:
        parse_schedule(text)
    assert "\n" not in str(caught.value)


def test_day_matching_agrees_with_croniter_over_years() -> None:
    for text in [
        "0 0 1 jan mon-fri",
        "0 0 */2 * 1",
        "0 0 13 * fri",
        "0 0 29 2 *",
        "0 0 * 2 sun",
        "0 0 1-7 * 0",
        "0 0 31 * *",
    ]:
        schedule = parse_schedule(text)
        it = croniter(text, datetime(2026, 1, 1) - timedelta(minutes=1))
        expected = set()
        while (d := it.get_next(datetime)) < datetime(2034, 1, 1):
            expected.add(d.date())
        day = date(2026, 1, 1)
        ours = set()
        while day < date(2034, 1, 1):
            if schedule.matches_day(day):
                ours.add(day)
            day += timedelta(days=1)
        assert ours == expected, text


# --- runs a day ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "runs"),
    [
        ("0 * * * *", 24),
        ("*/30 * * * *", 48),
        ("0 9 * * 1-5", 1),
        ("0 0 29 2 *", 1),
        ("0,30 8-19 * * *", 24),
        ("*/5 9 * * *", 12),
        ("* * * * *", 1440),
        ("0 0 31 2 1", 1),  # day of month never exists, Mondays still match
    ],
)
def test_most_runs_on_any_day(text: str, runs: int) -> None:
    for zone in (NY, LORD_HOWE, SANTO_DOMINGO):
        assert max_runs_per_day(parse_schedule(text), zone) == runs


def test_runs_a_day_counts_a_day_whose_only_matches_are_clock_changes() -> None:
    # 8 March 2026 is the New York spring-forward Sunday; the 2 o'clock hour is skipped that day,
    # but 8 March is an ordinary day in other years, so the busiest 8 March has 60 runs.
    assert max_runs_per_day(parse_schedule("* 2 8 3 *"), NY) == 60


def test_runs_a_day_refuses_an_unknown_zone() -> None:
    with pytest.raises(ValueError, match="IANA"):
        max_runs_per_day(parse_schedule("0 * * * *"), "Mars/Olympus")


# --- due rule: the instant of a scheduled wall time ------------------------------------------


def test_spring_forward_wall_time_is_skipped_new_york() -> None:
    runs = runs_between("30 2 * * *", NY, utc("2026-03-07T00:00"), utc("2026-03-10T00:00"))
    assert runs == [local(NY, "2026-03-07T02:30"), local(NY, "2026-03-09T02:30")]


def test_spring_forward_wall_time_is_skipped_berlin() -> None:
    runs = runs_between("30 2 * * *", BERLIN, utc("2026-03-28T00:00"), utc("2026-03-31T00:00"))
    assert runs == [local(BERLIN, "2026-03-28T02:30"), local(BERLIN, "2026-03-30T02:30")]


def test_fall_back_wall_time_runs_once_at_its_first_instant_new_york() -> None:
    runs = runs_between("30 1 * * *", NY, utc("2026-10-31T12:00"), utc("2026-11-02T12:00"))
    # 01:30 happens at 05:30Z (EDT) and again at 06:30Z (EST): it runs at 05:30Z only.
    assert runs == [utc("2026-11-01T05:30"), utc("2026-11-02T06:30")]


def test_fall_back_quarter_hours_run_once_each_new_york() -> None:
    runs = runs_between(
        "*/15 1 * * *", NY, utc("2026-11-01T00:00"), utc("2026-11-01T12:00"), step=1
    )
    assert runs == [
        utc("2026-11-01T05:00"),
        utc("2026-11-01T05:15"),
        utc("2026-11-01T05:30"),
        utc("2026-11-01T05:45"),
    ]


def test_fall_back_repeated_hour_runs_once_berlin() -> None:
    runs = runs_between("*/30 2 * * *", BERLIN, utc("2026-10-24T12:00"), utc("2026-10-25T12:00"))
    # 02:00-02:59 happens in CEST (00:00Z-00:59Z) and again in CET (01:00Z-01:59Z).
    assert runs == [utc("2026-10-25T00:00"), utc("2026-10-25T00:30")]


def test_lord_howe_half_hour_spring_forward_skips_two_o_clock() -> None:
    # 4 October 2026: 02:00 becomes 02:30 (+10:30 to +11:00).
    runs = runs_between("0 2 * * *", LORD_HOWE, utc("2026-10-02T00:00"), utc("2026-10-05T12:00"))
    assert runs == [local(LORD_HOWE, "2026-10-03T02:00"), local(LORD_HOWE, "2026-10-05T02:00")]
    assert [r.astimezone(ZoneInfo(LORD_HOWE)).hour for r in runs] == [2, 2]


def test_lord_howe_half_hour_fall_back_runs_once() -> None:
    # 5 April 2026: 02:00 becomes 01:30 again (+11:00 to +10:30); 01:45 happens twice.
    runs = runs_between("45 1 * * *", LORD_HOWE, utc("2026-04-04T00:00"), utc("2026-04-05T12:00"))
    assert runs == [local(LORD_HOWE, "2026-04-05T01:45", fold=0)]
    assert runs[0] == utc("2026-04-04T14:45")
    # 02:00 is not repeated there and runs once, as on any day.
    runs = runs_between("0 2 * * *", LORD_HOWE, utc("2026-04-04T00:00"), utc("2026-04-05T12:00"))
    assert runs == [utc("2026-04-04T15:30")]


def test_hourly_schedule_over_both_changes_new_york() -> None:
    spring = runs_between(
        "0 * * * *", NY, local(NY, "2026-03-08T00:30"), local(NY, "2026-03-08T23:59")
    )
    assert len(spring) == 22  # 01:00 and 03:00-23:00; 02:00 does not exist
    assert local(NY, "2026-03-08T03:00") in spring
    fall = runs_between(
        "0 * * * *", NY, local(NY, "2026-11-01T00:30"), local(NY, "2026-11-01T23:59")
    )
    assert len(fall) == 23  # 01:00-23:00 with 01:00 once (at 05:00Z), not at 06:00Z
    assert utc("2026-11-01T05:00") in fall
    assert utc("2026-11-01T06:00") not in fall
    assert fall == sorted(set(fall))


def test_zone_without_clock_changes() -> None:
    runs = runs_between(
        "0 * * * *", SANTO_DOMINGO, utc("2026-03-08T04:30"), utc("2026-03-09T04:29")
    )
    assert len(runs) == 24
    assert runs[0] == utc("2026-03-08T05:00")


def test_missed_times_over_a_long_outage_run_once_for_the_newest() -> None:
    schedule = parse_schedule("0 * * * *")
    last = utc("2026-01-01T00:00")
    answer = is_due(schedule, BERLIN, last, utc("2026-01-04T07:42"))
    assert answer.due
    assert answer.scheduled_for == utc("2026-01-04T07:00")
    again = is_due(schedule, BERLIN, utc("2026-01-04T07:42"), utc("2026-01-04T07:59"))
    assert not again.due


def test_not_due_before_the_next_time_and_due_exactly_at_it() -> None:
    schedule = parse_schedule("30 9 * * 1-5")
    last = local(NY, "2026-06-05T09:30")  # a Friday
    assert not is_due(schedule, NY, last, local(NY, "2026-06-08T09:29")).due
    answer = is_due(schedule, NY, last, local(NY, "2026-06-08T09:30"))
    assert answer.due and answer.scheduled_for == local(NY, "2026-06-08T09:30")


def test_attempt_at_the_scheduled_instant_is_not_repeated() -> None:
    schedule = parse_schedule("0 6 * * *")
    at = local(BERLIN, "2026-07-01T06:00")
    assert not is_due(schedule, BERLIN, at, at + timedelta(seconds=30)).due


def test_first_run_is_due_at_once() -> None:
    schedule = parse_schedule("0 6 * * *")
    answer = is_due(schedule, BERLIN, None, utc("2026-07-01T10:17"))
    assert answer.due and answer.first_run
    assert answer.scheduled_for == local(BERLIN, "2026-07-01T06:00")


def test_leap_day_schedule() -> None:
    schedule = parse_schedule("0 0 29 2 *")
    assert latest_scheduled_at_or_before(schedule, NY, utc("2027-06-01T00:00")) == local(
        NY, "2024-02-29T00:00"
    )
    assert next_run_after(schedule, NY, utc("2026-01-01T00:00")) == local(NY, "2028-02-29T00:00")


def test_next_run_after_skips_and_merges_clock_changes() -> None:
    schedule = parse_schedule("30 2 * * *")
    assert next_run_after(schedule, NY, local(NY, "2026-03-07T03:00")) == local(
        NY, "2026-03-09T02:30"
    )
    schedule = parse_schedule("30 1 * * *")
    # Asked during the second 01:00-01:59 of the fall-back night: 01:30 already ran.
    assert next_run_after(schedule, NY, utc("2026-11-01T06:10")) == utc("2026-11-02T06:30")
    assert next_run_after(schedule, NY, utc("2026-11-01T05:10")) == utc("2026-11-01T05:30")


def test_naive_instants_are_refused() -> None:
    with pytest.raises(ValueError, match="aware"):
        is_due(parse_schedule("0 * * * *"), NY, None, datetime(2026, 1, 1))
