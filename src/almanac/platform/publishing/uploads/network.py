"""Whose fault a failed download of the upload checks is: the publisher's URL, or the service's
own network ("Version in the portal": the checks download the real sources once and reach
each listing link). A service with no route out must not tell every publisher to repair their
URLs: such a check "could not run", the operators are told, and it runs again by itself.

The rules here are pure: the downloader says how each host failed (`HostFailure`), the
adapters run the operator's probe (`ALMANAC_NETWORK_PROBE`), and these functions decide."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from enum import StrEnum


class HostFailure(StrEnum):
    """How the download of one host failed, as far as the network is concerned."""

    ANSWERED = "answered"
    """Something on the network answered (an HTTP status, a TLS handshake that failed, a body
    too large, a connection made and then broken or too slow), or a rule refused the address
    before any packet (http, a private address): the URL's own doing."""
    NO_NAME_ANSWER = "no-name-answer"
    """The name could not be looked up: no name server answered in time, or the lookup failed
    for now ("temporary failure in name resolution")."""
    NO_SUCH_HOST = "no-such-host"
    """A name server answered that the name has no address."""
    NO_ROUTE = "no-route"
    """The machine has no route to the address ("network is unreachable")."""
    UNREACHABLE = "unreachable"
    """The address did not answer as a host ("no route to host")."""
    REFUSED = "refused"
    """The connection was refused."""
    TIMED_OUT = "timed-out"
    """Nothing answered in time, before any connection was made."""


NETWORK_WAYS = frozenset(HostFailure) - {HostFailure.ANSWERED}
"""The failures in which nothing outside the machine answered for the host."""
OWN_NETWORK = frozenset({HostFailure.NO_NAME_ANSWER, HostFailure.NO_ROUTE})
"""The failures that, without a probe, say the machine itself is cut off: the name lookup got
no answer at all, or the machine has no route. A name that does not exist, a refused
connection or a time-out to an address that resolved can be the publisher's alone."""

RETRY_WITHOUT_PROBE = timedelta(minutes=10)
"""With no probe set, how long a check that could not run waits before it runs again."""


@dataclass(frozen=True, slots=True)
class Probe:
    """The operator's known-good probe (`ALMANAC_NETWORK_PROBE`) as it went: its URL, whether
    it reached the network, and the downloader's reason when it did not answer."""

    url: str
    reached: bool
    reason: str | None = None


def every_host_failed_a_network_way(failures: Sequence[HostFailure | None]) -> bool:
    """The check tried some host, and nothing outside the machine answered for any of them."""
    return bool(failures) and all(f is not None and f in NETWORK_WAYS for f in failures)


def service_network_is_down(
    failures: Sequence[HostFailure | None], probe_reached: bool | None
) -> bool:
    """ "Version in the portal", checks (the real sources once, each listing link): whether a
    check that downloads could not run because the service's own network is down, rather than
    failing because of the publisher's URLs.

    `failures` has one entry per host the check tried: None when the host was reached, else
    how it failed. `probe_reached` is the operator's known-good probe (`ALMANAC_NETWORK_PROBE`,
    an https URL): True when it answered, False when it did not, None when no probe is set.

    The network is down when every host the check tried failed a network way (nothing outside
    the machine answered for any of them: `NETWORK_WAYS`) and
    - with a probe set: the probe did not answer either (when it answered, the network works
      and the publisher's URLs failed on their own);
    - without a probe: the failures alone say so: every one is `OWN_NETWORK` (the name lookup
      got no answer at all, or the machine has no route). A name with no address, a refused
      connection or a time-out stays the publisher's without a probe to tell them apart.
    A check that reached any host, or that any host answered, is never the network's."""
    if not every_host_failed_a_network_way(failures):
        return False
    if probe_reached is not None:
        return not probe_reached
    return all(f in OWN_NETWORK for f in failures)


def probe_reached(failure: HostFailure | None) -> bool:
    """The probe reached the network when its download succeeded or anything answered (an HTTP
    error status or a refused redirect is still an answer from outside)."""
    return failure is None or failure not in NETWORK_WAYS


def could_not_run_is_due(since: datetime, probe_reached: bool | None, now: datetime) -> bool:
    """Whether the checks that could not run (the first of them since `since`) run again now:
    with a probe set, as soon as it answers; without one, `RETRY_WITHOUT_PROBE` after."""
    if probe_reached is not None:
        return probe_reached
    return now - since >= RETRY_WITHOUT_PROBE
