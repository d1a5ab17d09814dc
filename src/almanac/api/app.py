"""The FastAPI application: `create_app(settings, clock=..., mailer=..., engine=...)`."""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path

from fastapi import APIRouter, FastAPI
from sqlalchemy import Engine
from sqlalchemy.orm import sessionmaker
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from almanac.api.context import ApiContext
from almanac.api.pages import install_pages
from almanac.api.problems import install_problem_handlers, problem_response
from almanac.api.redact import install_access_log_redaction
from almanac.api.routes import (
    agents,
    auth,
    device,
    feeds,
    host,
    host_alerts,
    host_readers,
    invitations,
    organizations,
    portal,
    portal_listings,
    public,
    reader,
    review,
    staff,
    store,
    tokens,
    webhooks,
)
from almanac.platform.accounts import Passwords
from almanac.platform.clock import Clock
from almanac.platform.mail import Mailer
from almanac.platform.publishing.identity.proof import DomainProver
from almanac.platform.publishing.uploads.uploads import ImportsJudge
from almanac.platform.store.engine import reading, writing
from almanac.platform.webhooks.endpoints import EndpointAddresses
from almanac.sandbox.tool_imports import import_problems
from almanac.sandbox.webhooks import registration_check
from almanac.sandbox.wellknown import domain_prover as default_domain_prover
from almanac.settings import Settings

API_PREFIX = "/api/v1"
MAX_BODY = 64 * 1024
TOOL_FILE = Path(__file__).resolve().parents[3] / "tool" / "almanac-plugin.mjs"


class BodyLimit:
    """Refuses a request body above `limit` bytes with 413 REQUEST-TOO-LARGE, whether the
    size is declared in Content-Length or only seen while reading (chunked)."""

    def __init__(
        self,
        app: ASGIApp,
        limit: int,
        fastapi_app: FastAPI,
        path_limits: dict[str, int] | None = None,
        pattern_limits: Sequence[tuple[re.Pattern[str], int]] = (),
    ) -> None:
        self.app = app
        self.limit = limit
        self.fastapi_app = fastapi_app
        self.path_limits = path_limits or {}
        self.pattern_limits = tuple(pattern_limits)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        path = scope["path"]
        limit = self.path_limits.get(path) or next(
            (size for pattern, size in self.pattern_limits if pattern.fullmatch(path)),
            self.limit,
        )
        declared = dict(scope["headers"]).get(b"content-length")
        if declared is not None and declared.isdigit() and int(declared) > limit:
            await self._refuse(scope, send, limit)
            return
        seen = 0
        over = False
        answered = False

        async def counted_receive() -> Message:
            nonlocal seen, over
            if over:
                return {"type": "http.disconnect"}
            message = await receive()
            if message["type"] == "http.request":
                seen += len(message.get("body", b""))
                if seen > limit:
                    # The app sees an empty end of body; its answer is replaced below.
                    over = True
                    return {"type": "http.request", "body": b"", "more_body": False}
            return message

        async def guarded_send(message: Message) -> None:
            nonlocal answered
            if not over:
                await send(message)
            elif not answered:
                answered = True
                await self._refuse(scope, send, limit)

        await self.app(scope, counted_receive, guarded_send)

    async def _refuse(self, scope: Scope, send: Send, limit: int) -> None:
        from starlette.requests import Request

        async def no_body() -> Message:
            return {"type": "http.disconnect"}

        scope = dict(scope, app=self.fastapi_app)
        response = problem_response(
            Request(scope),
            413,
            "REQUEST-TOO-LARGE",
            f"the request body is larger than {limit} bytes",
        )
        await response(scope, no_body, send)


def create_app(
    settings: Settings,
    *,
    clock: Clock,
    mailer: Mailer,
    engine: Engine,
    passwords: Passwords | None = None,
    tool_file: Path = TOOL_FILE,
    max_body: int = MAX_BODY,
    domain_prover: DomainProver | None = None,
    imports: ImportsJudge = import_problems,
    endpoint_addresses: EndpointAddresses | None = None,
) -> FastAPI:
    """The API under /api/v1 (OpenAPI at /api/v1/openapi.json), the invitation endpoint at
    /api/developers/invitations, problem pages, the tool and /health. Every error is a
    problem+json answer. `passwords` defaults to production argon2 parameters;
    `domain_prover` to DNS through `settings.dns_servers` and the well-known file through the
    source downloader; `imports` to the tool's `checkImports` in Node; `endpoint_addresses`
    (webhook endpoints' address check and
    redirect probe) to the system's resolver and network."""
    if domain_prover is None:
        domain_prover = default_domain_prover(settings)
    app = FastAPI(
        title="Almanac",
        version="1",
        openapi_url=f"{API_PREFIX}/openapi.json",
        docs_url=f"{API_PREFIX}/docs",
        redoc_url=None,
    )
    app.state.almanac = ApiContext(
        settings=settings,
        clock=clock,
        mailer=mailer,
        engine=engine,
        sessions=sessionmaker(reading(engine), expire_on_commit=False),
        write_sessions=sessionmaker(writing(engine), expire_on_commit=False),
        passwords=passwords or Passwords(),
        tool_file=tool_file,
        domain_prover=domain_prover,
        imports=imports,
        endpoint_addresses=endpoint_addresses or registration_check(settings),
    )
    install_problem_handlers(app)
    device.install_oauth_errors(app)
    install_access_log_redaction()

    v1 = APIRouter(prefix=API_PREFIX)
    # Readers' reads are most of the traffic, and FastAPI tries the routes in order (each area
    # costs microseconds a request): the reader's areas come first. No other area's prefix
    # begins with /reader, so the order changes no answer.
    v1.include_router(reader.router)
    v1.include_router(feeds.reader_router)
    v1.include_router(webhooks.router)
    for area in (auth, tokens, organizations, staff, invitations, host, portal, portal_listings):
        v1.include_router(area.router)
    for area in (agents, device):
        v1.include_router(area.router)
    v1.include_router(review.router)
    v1.include_router(store.router)
    v1.include_router(host_readers.router)
    v1.include_router(feeds.router)
    v1.include_router(host_alerts.router)
    app.include_router(v1)
    app.include_router(invitations.router, prefix="/api")
    app.include_router(public.router)
    install_pages(app)
    app.add_middleware(
        BodyLimit,
        limit=max_body,
        fastapi_app=app,
        # Pack archives are bigger than any other body; the route itself refuses above 8 MiB.
        path_limits={f"{API_PREFIX}/host/plugins/pack": host.PACK_BODY_LIMIT},
        pattern_limits=[(portal.UPLOAD_PATH, portal.UPLOAD_BODY_LIMIT)],
    )
    return app
