"""Host name resolution for source downloads, behind a small interface tests can replace.

The downloader resolves a host once per connection through a `Resolver`, checks every answer
with the address policy, and connects to a checked address only.
"""

from __future__ import annotations

import socket
import threading
from typing import Protocol

from almanac.sandbox.addresses import IPAddress, parse_address


class ResolveError(Exception):
    """The host name could not be resolved in time. `no_answer` is True when no name server
    gave an answer (none reached, or a failure for now), False when one answered that the name
    has no address: the upload checks tell the service's network from a publisher's URL by it."""

    def __init__(self, message: str, *, no_answer: bool = False) -> None:
        super().__init__(message)
        self.no_answer = no_answer


_NO_ANSWER_ERRORS = frozenset(
    code
    for code in (socket.EAI_AGAIN, socket.EAI_FAIL, getattr(socket, "EAI_SYSTEM", None))
    if code is not None
)
"""getaddrinfo's errors that carry no answer about the name: "temporary failure in name
resolution" (no name server reached, or one failed), a non-recoverable resolver failure, a
system error. EAI_NONAME and EAI_NODATA are a name server's answer."""


class Resolver(Protocol):
    def resolve(self, host: str, port: int, timeout: float) -> list[IPAddress]:
        """Every address `host` resolves to for a TCP connection to `port`, within `timeout`
        seconds; raise ResolveError when it cannot."""
        ...


class SystemResolver:
    """The operating system's resolver (`socket.getaddrinfo`).

    getaddrinfo has no timeout of its own, so it runs in a daemon thread that is abandoned
    when `timeout` passes: a hung resolver cannot hold a download past its deadline."""

    def resolve(self, host: str, port: int, timeout: float) -> list[IPAddress]:
        answer: list[IPAddress] = []
        failure: list[BaseException] = []

        def lookup() -> None:
            try:
                infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
                for _family, _type, _proto, _name, sockaddr in infos:
                    address = parse_address(str(sockaddr[0]))
                    if address is not None:
                        answer.append(address)
            except BaseException as exc:  # reported to the waiting caller below
                failure.append(exc)

        worker = threading.Thread(target=lookup, name=f"resolve {host}", daemon=True)
        worker.start()
        worker.join(max(timeout, 0.0))
        if worker.is_alive():
            raise ResolveError(
                f"resolving {host} took longer than {timeout:.0f} seconds", no_answer=True
            )
        if failure:
            error = failure[0]
            no_answer = not isinstance(error, socket.gaierror) or error.errno in _NO_ANSWER_ERRORS
            raise ResolveError(f"could not resolve {host}: {error}", no_answer=no_answer)
        return list(dict.fromkeys(answer))
