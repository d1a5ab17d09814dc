"""The rule that tells the service's own network from a publisher's URLs in the upload checks,
at its edges (the downloader's side of it runs for real in test_network_down.py)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from almanac.platform.publishing.uploads.network import (
    RETRY_WITHOUT_PROBE,
    HostFailure,
    could_not_run_is_due,
    probe_reached,
    service_network_is_down,
)

F = HostFailure
T0 = datetime(2026, 11, 2, 12, 0, tzinfo=UTC)


@pytest.mark.parametrize(
    ("failures", "probe", "down"),
    [
        # With a probe: every host failed a network way and the probe failed too.
        ([F.NO_SUCH_HOST], False, True),
        ([F.REFUSED, F.TIMED_OUT, F.UNREACHABLE], False, True),
        ([F.NO_NAME_ANSWER, F.NO_ROUTE], False, True),
        # The probe answered: the network works, the URLs failed on their own.
        ([F.NO_NAME_ANSWER], True, False),
        ([F.NO_ROUTE, F.NO_ROUTE], True, False),
        # A host answered (an HTTP status, TLS) or was reached: the publisher's, probe or not.
        ([F.NO_NAME_ANSWER, F.ANSWERED], False, False),
        ([F.NO_NAME_ANSWER, None], False, False),
        ([None, F.NO_NAME_ANSWER, None, None], None, False),
        ([F.ANSWERED], None, False),
        # Without a probe, the failures alone: only "no name server answered" and "no route".
        ([F.NO_NAME_ANSWER], None, True),
        ([F.NO_ROUTE, F.NO_NAME_ANSWER], None, True),
        ([F.NO_SUCH_HOST], None, False),
        ([F.REFUSED], None, False),
        ([F.TIMED_OUT], None, False),
        ([F.NO_NAME_ANSWER, F.REFUSED], None, False),
        # A check that tried no host (no listing links) never could not run.
        ([], False, False),
        ([], None, False),
    ],
)
def test_the_service_network_is_down_only_when_nothing_answered_for_any_host(
    failures: list[HostFailure | None], probe: bool | None, down: bool
) -> None:
    assert service_network_is_down(failures, probe) is down


def test_the_probe_reaches_the_network_when_anything_answers() -> None:
    assert probe_reached(None)
    assert probe_reached(F.ANSWERED)  # an HTTP 404 or a refused redirect is still an answer
    for failure in (F.NO_NAME_ANSWER, F.NO_SUCH_HOST, F.NO_ROUTE, F.REFUSED, F.TIMED_OUT):
        assert not probe_reached(failure)


def test_checks_that_could_not_run_run_again_when_the_probe_answers_or_after_ten_minutes() -> None:
    assert timedelta(minutes=10) == RETRY_WITHOUT_PROBE
    assert could_not_run_is_due(T0, True, T0)
    assert not could_not_run_is_due(T0, False, T0 + timedelta(days=1))
    assert not could_not_run_is_due(T0, None, T0 + timedelta(minutes=9, seconds=59))
    assert could_not_run_is_due(T0, None, T0 + timedelta(minutes=10))
