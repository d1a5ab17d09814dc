"""The web pages served by the same app as the API: readers' calendar and store, sign-in and
sign-up, the publishers' portal, the reviewers' desk and the operators' host pages, drawn with
Jinja2 from the same domain functions the API routes call. `install_pages(app)` adds their
routes, their static files at /static and the handlers that answer a page's refusal as a
page."""

from __future__ import annotations

from fastapi import FastAPI, Request
from fastapi.responses import Response
from fastapi.staticfiles import StaticFiles

from almanac.api.pages import account, host, invitations, portal, reader, review, store, webhooks
from almanac.api.pages.common import (
    STATIC,
    PageRefused,
    SignInNeeded,
    refused_page,
    sign_in_redirect,
)


def install_pages(app: FastAPI) -> None:
    """Page routes at /, /calendar, /signin, /signup, /signout, /invitations, /store, /portal,
    /review and /host; CSS and the small script at /static."""
    for area in (account, invitations, reader, webhooks, host, store, portal, review):
        app.include_router(area.router)
    app.mount("/static", StaticFiles(directory=STATIC), name="static")

    # A plain function: Starlette runs it in the thread pool, where reading who is signed in
    # may wait on the database without holding up the event loop.
    @app.exception_handler(PageRefused)
    def _refused(request: Request, exc: PageRefused) -> Response:
        return refused_page(request, exc)

    @app.exception_handler(SignInNeeded)
    async def _sign_in(request: Request, exc: SignInNeeded) -> Response:
        return sign_in_redirect(exc)
