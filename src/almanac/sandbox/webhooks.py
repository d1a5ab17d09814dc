"""Sending webhooks (issue 38, Delivery): each message signed by the Standard Webhooks
specification with the `standardwebhooks` library (`webhook-id`, `webhook-timestamp`,
`webhook-signature`, one signature per secret in use), posted through the downloader's checked
client: the endpoint's host resolved once, every address checked by the download rules'
address policy, the connection made to the checked address, no redirect followed, a short
time-out for the whole attempt, and the answer's body read to at most 64 KiB and ignored."""

from __future__ import annotations

import json
import ssl
from datetime import datetime
from secrets import token_hex

import httpx
from standardwebhooks.webhooks import Webhook

from almanac.platform.errors import Invalid
from almanac.platform.webhooks.deliveries import Answer, Due
from almanac.sandbox.addresses import AddressRefused, check_resolved, parse_address
from almanac.sandbox.download import (
    Deadline,
    Dialer,
    SystemDialer,
    checked_client,
    checked_url,
    failure_detail,
    user_agent,
)
from almanac.sandbox.resolver import ResolveError, Resolver, SystemResolver
from almanac.settings import Settings

TIMEOUT_SECONDS = 10.0
TEST_EVENT = "webhook.test"
ANSWER_BODY_LIMIT = 64 * 1024


def signature(secrets: tuple[str, ...], message_id: str, at: datetime, body: str) -> str:
    """The `webhook-signature` header: a `v1,<base64>` signature by each secret, space
    separated, as receivers verify them (any one matching)."""
    return " ".join(Webhook(secret).sign(message_id, at, body) for secret in secrets)


class EndpointAddressCheck:
    """Registration's check of an endpoint: the host resolved and every address public, by
    the same resolver and policy the deliveries use (`almanac.sandbox.addresses`); with a
    `sender`, then a signed `webhook.test` message posted through the deliveries' own checked
    client, and an endpoint answering it with a redirect refused (issue 38: endpoints that
    redirect are refused at registration and at delivery). Any other answer, or none, is let
    pass: a receiver may be deployed after it is registered, and its delivery log tells."""

    def __init__(
        self,
        resolver: Resolver | None = None,
        timeout: float = 5.0,
        sender: WebhookSender | None = None,
    ) -> None:
        self._resolver: Resolver = resolver or SystemResolver()
        self._timeout = timeout
        self._sender = sender

    def check(self, host: str, port: int) -> None:
        if parse_address(host) is not None:
            raise Invalid(f"url: give the endpoint's host name, not an IP address ({host})")
        try:
            check_resolved(host, self._resolver.resolve(host, port, self._timeout))
        except (AddressRefused, ResolveError) as exc:
            raise Invalid(f"url: {exc}; webhooks go to public addresses only") from exc

    def probe(self, url: str, secret: str, now: datetime) -> None:
        if self._sender is None:
            return
        body = json.dumps(
            {"type": TEST_EVENT, "timestamp": now.isoformat(), "data": {"url": url}},
            separators=(",", ":"),
        )
        message_id = f"msg_test_{token_hex(8)}"
        answer = self._sender.post(url, message_id, (secret,), body, now)
        if answer.status is not None and 300 <= answer.status < 400:
            raise Invalid(
                f"url: the endpoint answered Almanac's {TEST_EVENT} message with HTTP "
                f"{answer.status}, a redirect; deliveries follow no redirect, so give the "
                "address it redirects to, answering 2xx"
            )


class WebhookSender:
    """Posts one signed message to its endpoint and says what came back. `resolver`,
    `dialer` and `ssl_context` default to the system's, as the downloader's do."""

    def __init__(
        self,
        *,
        base_url: str,
        resolver: Resolver | None = None,
        dialer: Dialer | None = None,
        ssl_context: ssl.SSLContext | None = None,
        timeout_seconds: float = TIMEOUT_SECONDS,
    ) -> None:
        context = ssl_context or httpx.create_ssl_context(trust_env=False)
        if context.verify_mode != ssl.CERT_REQUIRED or not context.check_hostname:
            raise ValueError("webhook deliveries keep TLS certificate and host name checks")
        self._user_agent = user_agent(base_url)
        self._resolver: Resolver = resolver or SystemResolver()
        self._dialer: Dialer = dialer or SystemDialer()
        self._ssl_context = context
        self._timeout = timeout_seconds

    def send(self, due: Due, now: datetime) -> Answer:
        return self.post(due.url, due.message_id, due.secrets, due.body, now)

    def post(
        self, address: str, message_id: str, secrets: tuple[str, ...], body: str, now: datetime
    ) -> Answer:
        """Post one message signed with `secrets` to `address` and say what came back."""
        deadline = Deadline(self._timeout)
        headers = {
            "User-Agent": self._user_agent,
            "Content-Type": "application/json",
            "Accept-Encoding": "identity",
            "webhook-id": message_id,
            "webhook-timestamp": str(int(now.timestamp())),
            "webhook-signature": signature(secrets, message_id, now, body),
        }
        try:
            url = httpx.URL(address)
            url = checked_url(url, frozenset({url.raw_host.decode("ascii")}), redirect=False)
            client = checked_client(
                resolver=self._resolver,
                dialer=self._dialer,
                ssl_context=self._ssl_context,
                deadline=deadline,
                headers=headers,
            )
            with client, client.stream("POST", url, content=body.encode()) as response:
                _read_some(response)
                status = response.status_code
        except Exception as exc:
            return Answer(None, failure_detail(exc, deadline))
        if 300 <= status < 400:
            return Answer(status, f"HTTP {status}: redirects are not followed; answer 2xx")
        if not 200 <= status < 300:
            return Answer(status, f"HTTP {status}, not 2xx")
        return Answer(status)


def _read_some(response: httpx.Response) -> None:
    """Read the answer's body up to 64 KiB (a receiver's words are not kept); the rest is
    dropped with the connection."""
    seen = 0
    for chunk in response.iter_raw():
        seen += len(chunk)
        if seen >= ANSWER_BODY_LIMIT:
            return


PROBE_TIMEOUT_SECONDS = 5.0


def registration_check(settings: Settings) -> EndpointAddressCheck:
    """Production's registration check: the system's resolver and a probe through the
    system's network, with a shorter time-out than a delivery's (a person is waiting)."""
    sender = WebhookSender(base_url=settings.base_url, timeout_seconds=PROBE_TIMEOUT_SECONDS)
    return EndpointAddressCheck(sender=sender)
