"""The machinery every page shares: Jinja2 templates, the security headers (a strict Content
Security Policy: scripts and styles only from this site's /static, nothing inline), the CSRF
token of every form, who is signed in, and refusals drawn as pages rather than problem JSON.

CSRF: the token of a form is an HMAC keyed by the browser's session cookie, or, before sign-in,
by a random pre-session cookie (`almanac_csrf`, HttpOnly). Another site can make the browser
send those cookies but can never read them, so it cannot write the token into its own form;
every POST form is checked with `checked_form`, and a form without the right token is
refused (403) before anything is read or written."""

from __future__ import annotations

import hashlib
import hmac
import secrets
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from datetime import date
from pathlib import Path
from typing import Annotated, Any

from fastapi import Depends, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response
from jinja2 import Environment, FileSystemLoader, StrictUndefined, select_autoescape
from pydantic import ValidationError
from starlette.datastructures import FormData

from almanac.api.deps import SESSION_COOKIE, Db, Now
from almanac.api.problems import ProblemError, retry_after, status_of
from almanac.platform import accounts
from almanac.platform.accounts import Account, StaffRole
from almanac.platform.errors import Refusal
from almanac.platform.reader.text import record_words
from almanac.platform.reader.words import MONTHS, WEEKDAYS

HERE = Path(__file__).resolve().parent
TEMPLATES = HERE / "templates"
STATIC = HERE / "static"

CSRF_COOKIE = "almanac_csrf"
CSRF_FIELD = "csrf_token"

CSP = "; ".join(
    [
        "default-src 'none'",
        "script-src 'self'",
        "style-src 'self'",
        "img-src 'self'",
        "connect-src 'self'",
        "form-action 'self'",
        "base-uri 'none'",
        "frame-ancestors 'none'",
    ]
)
SECURITY_HEADERS: Mapping[str, str] = {
    "Content-Security-Policy": CSP,
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "same-origin",
    "X-Frame-Options": "DENY",
    "Cross-Origin-Opener-Policy": "same-origin",
    # Pages carry a person's own data and tokens: never kept by a shared cache.
    "Cache-Control": "no-store",
}


def long_date(value: date | str) -> str:
    """`Friday 5 June 2026`: the date as a person reads it (rule 10: English only)."""
    day = value if isinstance(value, date) else date.fromisoformat(value)
    return f"{WEEKDAYS[day.weekday()]} {day.day} {MONTHS[day.month - 1]} {day.year}"


def _environment() -> Environment:
    env = Environment(
        loader=FileSystemLoader(TEMPLATES),
        autoescape=select_autoescape(["html"]),
        undefined=StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.filters["long_date"] = long_date
    env.filters["record_words"] = record_words
    env.globals["csrf_field"] = CSRF_FIELD
    return env


TEMPLATE_ENV = _environment()


def _csrf_seed(request: Request) -> str | None:
    return request.cookies.get(SESSION_COOKIE) or request.cookies.get(CSRF_COOKIE)


def _token_of(seed: str) -> str:
    return hmac.new(seed.encode(), b"almanac-csrf-v1", hashlib.sha256).hexdigest()


class PageRefused(Exception):
    """A refusal drawn as a page: `status`, a catalog `code` and a sentence for the person;
    `retry_after`, the seconds until it may be tried again when a limit says so."""

    def __init__(
        self, status: int, code: str, message: str, retry_after: int | None = None
    ) -> None:
        super().__init__(message)
        self.status = status
        self.code = code
        self.message = message
        self.retry_after = retry_after

    @property
    def headers(self) -> dict[str, str]:
        """The refusal's own headers (`Retry-After`), as the API's problem carries them."""
        return retry_after(self) or {}


class SignInNeeded(Exception):
    """The page needs a signed-in person: answered by a redirect to /signin."""

    def __init__(self, back_to: str) -> None:
        super().__init__(back_to)
        self.back_to = back_to


def render(
    request: Request,
    template: str,
    context: Mapping[str, Any],
    *,
    status: int = 200,
    account: Account | None = None,
) -> HTMLResponse:
    """The template drawn with `context`, the signed-in `account`, a CSRF token for its forms
    and the security headers; sets the pre-session CSRF cookie when the browser has neither."""
    seed = _csrf_seed(request)
    new_seed = None
    if seed is None:
        seed = new_seed = secrets.token_urlsafe(32)
    roles: frozenset[StaffRole] = frozenset()
    if account is not None:
        roles = getattr(request.state, "staff_roles", frozenset())
    html = TEMPLATE_ENV.get_template(template).render(
        {
            **context,
            "account": account,
            "is_reviewer": StaffRole.REVIEWER in roles,
            "csrf_token": _token_of(seed),
            "path": request.url.path,
        }
    )
    response = HTMLResponse(html, status_code=status, headers=dict(SECURITY_HEADERS))
    if new_seed is not None:
        response.set_cookie(CSRF_COOKIE, new_seed, httponly=True, samesite="lax", path="/")
    return response


def redirect(url: str) -> RedirectResponse:
    """303 See Other: after a form's POST the browser GETs the page that shows the result."""
    return RedirectResponse(url, status_code=303, headers=dict(SECURITY_HEADERS))


async def checked_form(request: Request) -> FormData:
    """The posted form, only with the CSRF token of this browser's cookie (else 403)."""
    form = await request.form()
    sent = form.get(CSRF_FIELD)
    seed = _csrf_seed(request)
    if not isinstance(sent, str) or seed is None or not hmac.compare_digest(sent, _token_of(seed)):
        raise PageRefused(
            403,
            "FORBIDDEN",
            "This form was not sent from an Almanac page (its security token is missing or "
            "old). Go back, reload the page and send it again.",
        )
    return form


Form = Annotated[FormData, Depends(checked_form)]


def text_field(form: FormData, name: str) -> str:
    value = form.get(name)
    return value.strip() if isinstance(value, str) else ""


def optional_account(request: Request, db: Db, now: Now) -> Account | None:
    """The account of a live session cookie, else None (a page then offers sign-in). Its staff
    roles are kept for the request: the header links a reviewer to the desk."""
    cookie = request.cookies.get(SESSION_COOKIE)
    if not cookie:
        return None
    try:
        account = accounts.session_account(db, cookie, now)
    except accounts.NotAuthenticated:
        return None
    request.state.staff_roles = frozenset(accounts.staff_roles(db, account))
    return account


MaybeAccount = Annotated[Account | None, Depends(optional_account)]


def signed_in(request: Request, account: MaybeAccount) -> Account:
    """The signed-in account; without one the browser is sent to /signin and back."""
    if account is None:
        back = request.url.path + (f"?{request.url.query}" if request.url.query else "")
        raise SignInNeeded(back)
    return account


PageAccount = Annotated[Account, Depends(signed_in)]


def operator(account: PageAccount, db: Db) -> Account:
    """A signed-in service operator, else a 403 page."""
    if not accounts.has_staff_role(db, account, StaffRole.OPERATOR):
        raise PageRefused(403, "FORBIDDEN", "These pages are for the service's operators.")
    return account


PageOperator = Annotated[Account, Depends(operator)]


def validation_message(error: ValidationError) -> str:
    """The first problem of a form checked by the API's own input model, with its field."""
    first = error.errors()[0]
    where = ".".join(str(part) for part in first["loc"])
    return f"{where}: {first['msg']}" if where else str(first["msg"])


def field_of(message: str, fields: tuple[str, ...]) -> str | None:
    """The form field a refusal names (its messages begin `<field>: `), if it is one of
    `fields`: the page marks that field and leaves the others as they were typed."""
    named = message.partition(":")[0].strip()
    return named if named in fields else None


def _sentence(refusal: Refusal) -> str:
    """The refusal's sentence; when its findings are its reasons rather than its own finding
    (a submit's conditions not met, none of which is SUBMIT-REFUSED), each reason after it."""
    if not refusal.findings or any(p.code == refusal.code for p in refusal.findings):
        return refusal.detail
    reasons = "; ".join(f"{p.code}: {p.message}" for p in refusal.findings)
    return f"{refusal.detail}. {reasons}"


@contextmanager
def refusals() -> Iterator[None]:
    """The API's refusals (the domain's, problems) raised as `PageRefused`, with the status
    of the API's own table, so that a page says the same sentence the API's problem carries;
    a submit's reasons follow it."""
    try:
        yield
    except Refusal as error:
        raise PageRefused(
            status_of(error), error.code, _sentence(error), error.retry_after
        ) from None
    except ProblemError as error:
        raise PageRefused(error.status, error.code, error.detail) from None
    except ValidationError as error:
        raise PageRefused(422, "REQUEST-INVALID", validation_message(error)) from None


def refused_page(request: Request, refusal: PageRefused) -> Response:
    """A refusal as a page with its status, its sentence and a link to the code's docs, under
    the header of whoever is signed in: a refusal is raised before the route has drawn
    anything, so the session cookie is read again here (in a read-only session of its own)."""
    ctx = request.app.state.almanac
    with ctx.sessions() as db:
        account = optional_account(request, db, ctx.now())
        page = render(
            request,
            "refused.html",
            {"title": "Not done", "refusal": refusal},
            status=refusal.status,
            account=account,
        )
    page.headers.update(refusal.headers)
    return page


def sign_in_redirect(refusal: SignInNeeded) -> Response:
    from urllib.parse import quote

    return redirect(f"/signin?next={quote(refusal.back_to, safe='/')}")
