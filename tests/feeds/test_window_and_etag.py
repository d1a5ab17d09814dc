"""The feed's window, If-None-Match matching and the access log's redaction of feed addresses,
as plain functions."""

from __future__ import annotations

from datetime import date

import pytest

from almanac.api.redact import redact_query
from almanac.platform.accounts import Invalid
from almanac.platform.feeds import etag_matches, window_of


def test_the_window_is_62_days_back_and_366_ahead_by_default() -> None:
    window = window_of(date(2026, 3, 1))
    assert (window.first, window.last, window.today) == (
        date(2025, 12, 29),
        date(2027, 3, 2),
        date(2026, 3, 1),
    )
    assert window_of(date(2026, 3, 1), 0, 0).first == window_of(date(2026, 3, 1), 0, 0).last
    for past, ahead in ((-1, 0), (0, -1), (732, 0), (0, 732)):
        with pytest.raises(Invalid):
            window_of(date(2026, 3, 1), past, ahead)


def test_if_none_match_compares_weakly_and_takes_a_list_or_a_star() -> None:
    etag = '"abc"'
    assert etag_matches('"abc"', etag)
    assert etag_matches('W/"abc"', etag)
    assert etag_matches('"x", "abc"', etag)
    assert etag_matches("*", etag)
    assert not etag_matches(None, etag)
    assert not etag_matches('"abcd"', etag)
    assert not etag_matches("abc", etag)


def test_a_private_feed_address_is_redacted_and_a_public_one_kept() -> None:
    line = '127.0.0.1:1 - "GET /api/v1/feeds/almcal_s3cr-t_x.ics?language=es HTTP/1.1" 200'
    assert redact_query(line) == (
        '127.0.0.1:1 - "GET /api/v1/feeds/[redacted]?language=es HTTP/1.1" 200'
    )
    public = '"GET /api/v1/feeds/plugins/bcrd-rates.ics HTTP/1.1"'
    assert redact_query(public) == public
