"""Process settings read once from the environment at the edge, never deep in the domain."""

from __future__ import annotations

import ipaddress
import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit


@dataclass(frozen=True, slots=True)
class Settings:
    home: Path
    api_port: int
    dagster_port: int
    database_url: str
    base_url: str
    run_slots: int = 1
    """How many plug-in runs may go at once (`ALMANAC_RUN_SLOTS`, the `almanac` pool's limit):
    one, Running rule 5's "one at a time", unless an operator allows more; never two runs of
    one plug-in, and none beside a deployment, whatever the number (0 holds every run)."""
    api_workers: int = 1
    """How many uvicorn worker processes serve the API (`ALMANAC_API_WORKERS`): each holds no
    state of its own (sessions and counters live in the store), so a proxy may spread requests
    over them."""
    dns_servers: tuple[tuple[str, int], ...] = ()
    """The DNS servers (address, port) domain proofs ask for TXT records; empty means the
    system's resolver configuration (`ALMANAC_DNS_SERVERS`)."""
    device_poll_interval: int = 5
    """Seconds an agent's `login` waits between polls of the device grant (RFC 8628
    `interval`; `slow_down` adds 5 to a code's own)."""
    network_probe: str | None = None
    """An https URL that always answers (`ALMANAC_NETWORK_PROBE`): when the upload checks find
    no host reachable, it tells the service's own network from the publisher's URLs, and its
    answer lets the checks that could not run run again. None: the failures alone decide."""

    host: str = "127.0.0.1"
    """The address the API and the Dagster webserver listen on (`ALMANAC_HOST`): loopback on
    one machine; the machine's own address (or `0.0.0.0`) when a load balancer or an operator
    on another machine reaches them (`almanac up --only api`, `--only dagster`)."""

    @property
    def dagster_home(self) -> Path:
        return self.home / "dagster"


def parse_dns_servers(text: str) -> tuple[tuple[str, int], ...]:
    """`ALMANAC_DNS_SERVERS`: comma-separated `host:port` (port 53 when left out; an IPv6
    address in brackets, `[::1]:5353`); the host is an IP address. Empty: the system's."""
    servers: list[tuple[str, int]] = []
    for item in (part.strip() for part in text.split(",")):
        if not item:
            continue
        host, port = item, "53"
        if item.startswith("["):
            host, _, rest = item[1:].partition("]")
            if rest:
                if not rest.startswith(":"):
                    raise SettingsError(f"ALMANAC_DNS_SERVERS: {item!r} is not [address]:port")
                port = rest[1:]
        elif item.count(":") == 1:
            host, port = item.split(":")
        try:
            address = ipaddress.ip_address(host)
        except ValueError:
            raise SettingsError(
                f"ALMANAC_DNS_SERVERS: {host!r} is not an IP address (give host:port pairs, "
                "such as 127.0.0.1:53)"
            ) from None
        if not port.isdigit() or not 1 <= int(port) <= 65535:
            raise SettingsError(f"ALMANAC_DNS_SERVERS: {port!r} is not a port (1 to 65535)")
        servers.append((str(address), int(port)))
    return tuple(servers)


class SettingsError(ValueError):
    """A setting of the environment the service cannot use; the message names the variable."""


def parse_network_probe(text: str) -> str | None:
    """`ALMANAC_NETWORK_PROBE`: an https URL with a host name (the downloader refuses anything
    else); empty: no probe."""
    text = text.strip()
    if not text:
        return None
    try:
        parts = urlsplit(text)
        host = parts.hostname
    except ValueError:
        host = None
        parts = None
    if parts is None or parts.scheme != "https" or not host or parts.username or parts.password:
        raise SettingsError(
            f"ALMANAC_NETWORK_PROBE: {text!r} is not an https URL with a host name (such as "
            "https://www.example.org/), or leave it unset"
        )
    return text


def _whole(env: Mapping[str, str], name: str, default: str) -> int:
    """The whole number in the environment variable `name` (`default` when unset)."""
    text = env.get(name, default)
    if not text.strip().isdigit():
        raise SettingsError(f"{name}: {text!r} is not a whole number")
    return int(text)


def parse_api_workers(text: str) -> int:
    """`ALMANAC_API_WORKERS` or `--api-workers`: a whole number from 1 to 64."""
    if not text.strip().isdigit() or not 1 <= int(text) <= 64:
        raise SettingsError(f"ALMANAC_API_WORKERS: {text!r} is not a number of workers (1 to 64)")
    return int(text)


def parse_host(text: str) -> str:
    """`ALMANAC_HOST`: an IP address to listen on (IPv4 or IPv6); empty: loopback."""
    text = text.strip()
    if not text:
        return "127.0.0.1"
    try:
        return str(ipaddress.ip_address(text))
    except ValueError:
        raise SettingsError(
            f"ALMANAC_HOST: {text!r} is not an IP address to listen on (such as 127.0.0.1, "
            "10.0.0.5 or 0.0.0.0)"
        ) from None


def load_settings(environ: dict[str, str] | None = None) -> Settings:
    """Settings from `ALMANAC_HOME`, `ALMANAC_PORT`, `ALMANAC_DAGSTER_PORT`,
    `ALMANAC_DATABASE_URL`, `ALMANAC_BASE_URL`, `ALMANAC_RUN_SLOTS`, `ALMANAC_API_WORKERS`,
    `ALMANAC_DNS_SERVERS`, `ALMANAC_NETWORK_PROBE` and `ALMANAC_HOST`, with the embedded defaults;
    SettingsError names a value it cannot use."""
    env = os.environ if environ is None else environ
    home = Path(env.get("ALMANAC_HOME") or Path.home() / ".almanac").resolve()
    api_port = _whole(env, "ALMANAC_PORT", "8000")
    return Settings(
        home=home,
        api_port=api_port,
        dagster_port=_whole(env, "ALMANAC_DAGSTER_PORT", "3000"),
        database_url=env.get("ALMANAC_DATABASE_URL") or f"sqlite:///{home / 'almanac.db'}",
        base_url=env.get("ALMANAC_BASE_URL") or f"http://127.0.0.1:{api_port}",
        run_slots=_whole(env, "ALMANAC_RUN_SLOTS", "1"),
        api_workers=parse_api_workers(env.get("ALMANAC_API_WORKERS", "1")),
        dns_servers=parse_dns_servers(env.get("ALMANAC_DNS_SERVERS", "")),
        network_probe=parse_network_probe(env.get("ALMANAC_NETWORK_PROBE", "")),
        host=parse_host(env.get("ALMANAC_HOST", "")),
    )
