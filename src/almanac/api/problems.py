"""RFC 9457 problem details for every error the API answers (DECISIONS 6).

`type` is the docs link of the catalog code, plus `title`, `status`, `detail`, `code`, and
`findings` when a check produced several. Request input is never echoed back: it may hold a
password.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from typing import Any, TypeGuard

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from sqlalchemy.exc import DBAPIError
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from almanac.platform import errors
from almanac.platform.contract.problems import CATALOG, Problem, docs_link

log = logging.getLogger(__name__)

PROBLEM_JSON = "application/problem+json"

REFUSAL_STATUS: dict[type[errors.Refusal], int] = {
    errors.Malformed: 400,
    errors.Unauthenticated: 401,
    errors.Forbidden: 403,
    errors.NotFound: 404,
    errors.Conflict: 409,
    errors.TooLarge: 413,
    errors.Invalid: 422,
    errors.RateLimited: 429,
}
"""The status of each kind of refusal (`almanac.platform.errors`), for the API's problems and
the pages alike (DECISIONS 6: 404 unknown, 409 state conflict, 413 too large, 422 refused)."""


def status_of(refusal: errors.Refusal) -> int:
    """The status of a refusal's kind: the first kind in its class's order of bases, so a
    refusal of two kinds (`LocalNotApprovable`, a transition refused for its input) answers as
    the kind it names first. A bare `Refusal` is refused input."""
    return next((REFUSAL_STATUS[k] for k in type(refusal).__mro__ if k in REFUSAL_STATUS), 422)


_STATUS_CODE = {
    400: "REQUEST-MALFORMED",
    401: "AUTH-REQUIRED",
    403: "FORBIDDEN",
    404: "NOT-FOUND",
    405: "METHOD-NOT-ALLOWED",
    413: "REQUEST-TOO-LARGE",
    422: "REQUEST-INVALID",
    429: "RATE-LIMITED",
}


class ProblemError(Exception):
    """Raise from a route to answer with a problem: a status, a catalog code, a detail and
    optionally the findings of a check."""

    def __init__(
        self,
        status: int,
        code: str,
        detail: str,
        findings: Sequence[Problem] = (),
        headers: dict[str, str] | None = None,
    ) -> None:
        super().__init__(detail)
        self.status = status
        self.code = code
        self.detail = detail
        self.findings = tuple(findings)
        self.headers = headers


def problem_response(
    request: Request,
    status: int,
    code: str,
    detail: str,
    findings: Sequence[Problem] = (),
    headers: Mapping[str, str] | None = None,
) -> JSONResponse:
    """The problem+json answer for a catalog code."""
    base_url = request.app.state.almanac.settings.base_url
    entry = CATALOG.get(code)
    body: dict[str, Any] = {
        "type": docs_link(code, base_url),
        "title": entry.title if entry else code,
        "status": status,
        "detail": detail,
        "code": code,
    }
    if findings:
        body["findings"] = [f.to_dict(base_url) for f in findings]
    if status == 401:
        headers = {"WWW-Authenticate": 'Bearer realm="almanac"', **(headers or {})}
    return JSONResponse(body, status_code=status, media_type=PROBLEM_JSON, headers=headers)


def retry_after(error: Exception) -> dict[str, str] | None:
    """The `Retry-After` header (RFC 9110 section 10.2.3, in seconds) of a refusal that knows
    when the request may be made again."""
    seconds = getattr(error, "retry_after", None)
    return {"Retry-After": str(seconds)} if isinstance(seconds, int) else None


def _location(loc: Sequence[str | int]) -> str:
    return ".".join(str(part) for part in loc)


def install_problem_handlers(app: FastAPI) -> None:
    """Route every error, FastAPI's own included, through `problem_response`."""

    @app.exception_handler(ProblemError)
    async def _problem(request: Request, exc: ProblemError) -> JSONResponse:
        return problem_response(
            request, exc.status, exc.code, exc.detail, exc.findings, exc.headers
        )

    @app.exception_handler(errors.Refusal)
    async def _refusal(request: Request, exc: errors.Refusal) -> JSONResponse:
        return problem_response(
            request, status_of(exc), exc.code, exc.detail, exc.findings, retry_after(exc)
        )

    @app.exception_handler(RequestValidationError)
    async def _invalid(request: Request, exc: RequestValidationError) -> JSONResponse:
        errors = exc.errors()
        if any(e.get("type") == "json_invalid" for e in errors):
            return problem_response(
                request, 400, "REQUEST-MALFORMED", "the request body is not valid JSON"
            )
        findings = [
            Problem("REQUEST-INVALID", str(e.get("msg", "invalid")), path=_location(e["loc"]))
            for e in errors
        ]
        first = findings[0]
        detail = f"{first.path}: {first.message}"
        if len(findings) > 1:
            detail += f" (and {len(findings) - 1} more)"
        return problem_response(request, 422, "REQUEST-INVALID", detail, findings)

    @app.exception_handler(StarletteHTTPException)
    async def _http(request: Request, exc: StarletteHTTPException) -> JSONResponse:
        code = _STATUS_CODE.get(exc.status_code)
        if code is None:
            code = "INTERNAL-ERROR" if exc.status_code >= 500 else "REQUEST-INVALID"
        detail = exc.detail if isinstance(exc.detail, str) else CATALOG[code].title
        return problem_response(request, exc.status_code, code, detail, headers=exc.headers)

    app.add_middleware(AnswerUnhandledErrors)


RETRIED_METHODS = frozenset({"GET", "HEAD"})
"""The methods a request may be run again for: safe by HTTP's definition, so a second run
changes nothing the first would not have (the few GETs that write, such as the mailed
verification link, write in one transaction a lost connection rolls back)."""


def lost_connection(exc: BaseException) -> TypeGuard[DBAPIError]:
    """Whether `exc` is the store's connection lost under a request (issue 31, item 5): a
    SQLAlchemy `DBAPIError` whose `connection_invalidated` is set. SQLAlchemy sets it only when
    the dialect judges the driver's error a disconnect (psycopg: the connection is closed or
    broken, as after `pg_terminate_backend`, a server restart or a dropped socket; SQLite: a
    closed database), and it then invalidates that connection and the pool's older ones, so a
    second run checks out a new one. Every other database error (a constraint, a timeout, a
    lock, an `OperationalError` on a live connection) would fail the same way again and is
    not one; nor is a psycopg error outside SQLAlchemy, which the API never uses directly."""
    return isinstance(exc, DBAPIError) and bool(exc.connection_invalidated)


class AnswerUnhandledErrors:
    """An error no handler took becomes the 500 INTERNAL-ERROR problem, and ends there.

    Starlette's own last resort answers and then raises the error again, and uvicorn closes
    the keep-alive connection on it: the client's next request on that connection is reset.
    An error after the answer has started cannot be answered; it is raised as before.

    A GET or HEAD that lost its database connection (`lost_connection`) before anything of
    its answer was sent is run once more, on a new connection (issue 31, item 5: requests in
    flight when PostgreSQL dropped its connections answered 500). Only once: a second loss
    is the 500 as before. Other methods are never run again, whatever the error: the first
    run may have changed something before the connection went."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        started = False
        received: list[Message] = []

        async def tracked_send(message: Message) -> None:
            nonlocal started
            started = started or message["type"] == "http.response.start"
            await send(message)

        async def kept_receive() -> Message:
            message = await receive()
            received.append(message)
            return message

        retry = scope["method"] in RETRIED_METHODS
        # Each run gets the scope as it came: the app's routing writes into it.
        pristine = dict(scope)
        try:
            await self.app(dict(pristine), kept_receive if retry else receive, tracked_send)
            return
        except Exception as exc:
            if started:
                log.exception("unhandled error on %s %s", scope["method"], scope["path"])
                raise
            if not (retry and lost_connection(exc)):
                await self._answer(scope, receive, send)
                return
            log.warning(
                "%s %s lost its database connection (%s); running it again on a new one",
                scope["method"],
                scope["path"],
                type(exc.orig).__name__,
            )
        # What the first run read of the request is given again before anything new.
        replay = list(received)

        async def replayed_receive() -> Message:
            return replay.pop(0) if replay else await receive()

        try:
            await self.app(dict(pristine), replayed_receive, tracked_send)
        except Exception:
            if started:
                log.exception("unhandled error on %s %s", scope["method"], scope["path"])
                raise
            await self._answer(scope, receive, send)

    async def _answer(self, scope: Scope, receive: Receive, send: Send) -> None:
        """The 500 problem for the error being handled (logged with its traceback)."""
        request = Request(scope)
        log.exception("unhandled error on %s %s", request.method, request.url.path)
        response = problem_response(
            request, 500, "INTERNAL-ERROR", "the service failed to handle the request"
        )
        await response(scope, receive, send)
