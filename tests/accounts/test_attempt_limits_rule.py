"""The rule of the limits on repeated attempts (`almanac.platform.limits`) on its own, and its
counts in the store, on PostgreSQL and SQLite (the HTTP edges: tests/api/test_attempt_limits.py)."""

from __future__ import annotations

from datetime import timedelta

import pytest
from sqlalchemy import func, select
from sqlalchemy.orm import Session

from almanac.platform import limits
from almanac.platform.limits import Limit, TooManyAttempts, count_attempt, take_back, wait_before
from almanac.platform.limits.models import CountedAttempt
from tests.accounts.conftest import T0

MINUTE = timedelta(minutes=1)
THREE = Limit(name="test-three", most=3, window=10 * MINUTE, code="RATE-LIMITED", refusal="x")


def test_an_attempt_is_allowed_until_the_limit_is_reached_in_the_window() -> None:
    assert wait_before(THREE, [], T0) is None
    assert wait_before(THREE, [T0, T0], T0) is None
    assert wait_before(THREE, [T0, T0, T0], T0) == 10 * MINUTE
    # Out of order; the wait is until the oldest of the three in the window leaves it.
    at = [T0 + 4 * MINUTE, T0, T0 + 2 * MINUTE]
    assert wait_before(THREE, at, T0 + 5 * MINUTE) == 5 * MINUTE
    # An attempt exactly one window old no longer counts.
    assert wait_before(THREE, at, T0 + 10 * MINUTE) is None
    # More counted than the limit (a limit lowered meanwhile): until enough have left.
    five = [T0 + n * MINUTE for n in range(5)]
    assert wait_before(THREE, five, T0 + 5 * MINUTE) == 7 * MINUTE


@pytest.mark.parametrize(
    ("seconds", "words"),
    [
        (1, "1 second"),
        (45, "45 seconds"),
        (60, "1 minute"),
        (61, "2 minutes"),
        (900, "15 minutes"),
        (3600, "1 hour"),
        (5400, "1 hour 30 minutes"),
        (86399, "24 hours"),
    ],
)
def test_a_wait_in_words_is_never_shorter_than_the_wait(seconds: int, words: str) -> None:
    assert limits.wait_words(seconds) == words


def test_retry_after_is_whole_seconds_rounded_up() -> None:
    assert limits.retry_after_seconds(timedelta(seconds=0.2)) == 1
    assert limits.retry_after_seconds(timedelta(seconds=899.001)) == 900
    assert limits.retry_after_seconds(timedelta(0)) == 1


def test_an_ipv6_client_counts_by_its_64_network() -> None:
    subject = limits.address_subject
    assert subject("192.0.2.7") == "192.0.2.7"
    assert subject("::ffff:192.0.2.7") == "192.0.2.7"
    assert subject("2001:db8:1:2:3:4:5:6") == subject("2001:db8:1:2:ffff::1") == "2001:db8:1:2::/64"
    assert subject("2001:db8:1:3::1") != subject("2001:db8:1:2::1")
    assert subject(None) == "unknown"
    assert subject("testclient") == "testclient"


def counted(db: Session) -> int:
    return int(db.scalar(select(func.count()).select_from(CountedAttempt)) or 0)


def test_counts_are_rows_refusals_count_nothing_and_old_ones_go(db: Session) -> None:
    other = Limit(name="test-other", most=1, window=60 * MINUTE, code="RATE-LIMITED", refusal="y")
    for _ in range(3):
        count_attempt(db, [(THREE, "a")], T0)
    db.commit()
    with pytest.raises(TooManyAttempts) as refused:
        count_attempt(db, [(THREE, "a")], T0 + MINUTE)
    assert refused.value.retry_after == 9 * 60 and refused.value.code == "RATE-LIMITED"
    assert refused.value.detail == "x; try again in 9 minutes"
    db.rollback()
    assert counted(db) == 3

    # Several limits at once: all counted, or none; the refusal is the longest wait's.
    count_attempt(db, [(other, "a")], T0 + 2 * MINUTE)
    db.commit()
    with pytest.raises(TooManyAttempts) as refused:
        count_attempt(db, [(THREE, "a"), (other, "a")], T0 + 3 * MINUTE)
    assert refused.value.limit is other and refused.value.retry_after == 59 * 60
    db.rollback()

    # Taken back, an attempt counts no more.
    [taken] = count_attempt(db, [(THREE, "b")], T0)
    take_back(db, [taken])
    db.commit()
    assert counted(db) == 4

    # Counting deletes the limit's attempts past its window, every subject's (not another
    # limit's).
    count_attempt(db, [(THREE, "c")], T0 + 10 * MINUTE)
    db.commit()
    at = db.scalars(select(CountedAttempt.at).order_by(CountedAttempt.at)).all()
    assert at == [T0 + 2 * MINUTE, T0 + 10 * MINUTE]
