"""A manifest's schedule said in the app's words (the store's "Updates"; rule 10: English)."""

from __future__ import annotations

import pytest

from almanac.platform.reader.words import schedule_words


@pytest.mark.parametrize(
    ("cron", "words"),
    [
        ("0 16 * * 1-5", "every weekday at 16:00 Europe/Prague"),
        ("0 16 * * mon-fri", "every weekday at 16:00 Europe/Prague"),
        ("0 6 * * *", "every day at 06:00 Europe/Prague"),
        ("0 7,19 * * *", "every day at 07:00 and 19:00 Europe/Prague"),
        ("30 9 * * sat,sun", "every Saturday and Sunday at 09:30 Europe/Prague"),
        ("0 9 * * 7", "every Sunday at 09:00 Europe/Prague"),
        ("0 9 * * 0,1", "every Monday and Sunday at 09:00 Europe/Prague"),
        ("0 10 1 * *", "on day 1 of every month at 10:00 Europe/Prague"),
        ("0 10 1,15 jan,jul *", "on days 1 and 15 of January and July at 10:00 Europe/Prague"),
        ("0 9 1 * mon", "on day 1 of every month and every Monday at 09:00 Europe/Prague"),
        ("0 9 * dec *", "every day in December at 09:00 Europe/Prague"),
        ("0 0,6,12,18 * * *", "every day at 00:00, 06:00, 12:00 and 18:00 Europe/Prague"),
        ("15 8-18 * * 1-5", "every weekday, every hour from 08:15 to 18:15 Europe/Prague"),
        ("*/30 9-17 * * *", "every day, every 30 minutes from 09:00 to 17:30 Europe/Prague"),
        ("0 * * * *", "every day, every hour on the hour Europe/Prague"),
        ("5 * * * *", "every day, every hour at minute 5 Europe/Prague"),
        ("*/15 * * * *", "every day, every 15 minutes Europe/Prague"),
    ],
)
def test_a_schedule_in_words(cron: str, words: str) -> None:
    assert schedule_words(cron, "Europe/Prague") == words


def test_a_schedule_that_does_not_parse_is_said_as_written() -> None:
    assert schedule_words("@daily", "UTC") == "on the schedule @daily UTC"
