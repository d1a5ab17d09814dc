"""Sign-up, sign-in and sign-out pages, over the same account functions as `routes/auth.py`
(`accounts.sign_in`: the limits on failed sign-ins, and the password checked in a read-only
transaction), with the API's own session cookie."""

from __future__ import annotations

from fastapi import APIRouter, Request
from fastapi.responses import Response
from pydantic import ValidationError
from starlette.datastructures import FormData

from almanac.api.deps import SESSION_COOKIE, ClientAddress, Context, Db, Now, ReadDb
from almanac.api.pages.common import (
    Form,
    MaybeAccount,
    PageRefused,
    redirect,
    refusals,
    render,
    text_field,
)
from almanac.api.schemas.auth import SignInIn, SignUpIn
from almanac.platform import accounts
from almanac.platform.accounts.passwords import MIN_PASSWORD_LENGTH

router = APIRouter(include_in_schema=False)


def safe_next(value: str | None) -> str:
    """Where to go after signing in: a path on this site only (never `//host` or a URL), so a
    crafted link cannot send a person elsewhere."""
    if value and value.startswith("/") and not value.startswith("//") and "\\" not in value:
        return value
    return "/calendar"


def _password(form: FormData) -> str:
    # Never stripped: spaces are part of a password.
    value = form.get("password")
    return value if isinstance(value, str) else ""


@router.get("/signin")
def sign_in_page(request: Request, account: MaybeAccount, next: str | None = None) -> Response:
    """The sign-in form."""
    return render(
        request,
        "signin.html",
        {"title": "Sign in", "next": safe_next(next), "email": "", "error": None},
        account=account,
    )


@router.post("/signin")
def sign_in(
    request: Request,
    form: Form,
    read: ReadDb,
    db: Db,
    ctx: Context,
    now: Now,
    client_address: ClientAddress,
) -> Response:
    """Check e-mail and password as `POST /api/v1/auth/signin` does, within the same limits
    on failed sign-ins, start a session and go on to the page asked for; a refusal draws the
    form again with the reason (a limit's with how long to wait, and `Retry-After`)."""
    back = safe_next(text_field(form, "next"))
    email = text_field(form, "email")
    try:
        with refusals():
            body = SignInIn.model_validate({"email": email, "password": _password(form)})
            signed = accounts.sign_in(
                db,
                read,
                body.email,
                body.password.get_secret_value(),
                client_address,
                ctx.passwords,
                now,
            )
    except PageRefused as refusal:
        context = {"title": "Sign in", "next": back, "email": email, "error": refusal.message}
        page = render(request, "signin.html", context, status=refusal.status)
        page.headers.update(refusal.headers)
        return page
    db.commit()
    response = redirect(back)
    response.set_cookie(
        SESSION_COOKIE,
        signed.cookie,
        max_age=int(accounts.identity.SESSION_LIFETIME.total_seconds()),
        httponly=True,
        samesite="lax",
        secure=ctx.settings.base_url.startswith("https://"),
        path="/",
    )
    return response


@router.get("/signup")
def sign_up_page(request: Request, account: MaybeAccount) -> Response:
    """The sign-up form."""
    context = {
        "title": "Sign up",
        "email": "",
        "error": None,
        "done": None,
        "min_password": MIN_PASSWORD_LENGTH,
    }
    return render(request, "signup.html", context, account=account)


@router.post("/signup")
def sign_up(request: Request, form: Form, db: Db, ctx: Context, now: Now) -> Response:
    """Create the account as `POST /api/v1/auth/signup` does and mail the verification link."""
    email = text_field(form, "email")
    try:
        with refusals():
            body = SignUpIn.model_validate({"email": email, "password": _password(form)})
            created = accounts.sign_up(
                db, body.email, body.password.get_secret_value(), ctx.passwords, now
            )
            db.commit()
    except (PageRefused, ValidationError) as refusal:
        message = refusal.message if isinstance(refusal, PageRefused) else str(refusal)
        status = refusal.status if isinstance(refusal, PageRefused) else 422
        context = {
            "title": "Sign up",
            "email": email,
            "error": message,
            "done": None,
            "min_password": MIN_PASSWORD_LENGTH,
        }
        return render(request, "signup.html", context, status=status)
    ctx.mail_verification(created.account, created.verification_token, now)
    context = {
        "title": "Sign up",
        "email": email,
        "error": None,
        "done": created.account.email,
        "min_password": MIN_PASSWORD_LENGTH,
    }
    return render(request, "signup.html", context, status=201)


@router.post("/signout")
def sign_out(request: Request, form: Form, db: Db, now: Now) -> Response:
    """End the session and clear its cookie, as `POST /api/v1/auth/signout` does."""
    cookie = request.cookies.get(SESSION_COOKIE)
    if cookie:
        accounts.end_session(db, cookie, now)
        db.commit()
    response = redirect("/")
    response.delete_cookie(SESSION_COOKIE, path="/", httponly=True, samesite="lax")
    return response
