"""Sign up, verify the e-mail address, sign in and out, and who am I."""

from __future__ import annotations

import logging

from fastapi import APIRouter, Query, Request, Response, status

from almanac.api.deps import (
    SESSION_COOKIE,
    ClientAddress,
    Context,
    CurrentAccount,
    Db,
    Now,
    ReadDb,
    WriteDb,
)
from almanac.api.pages.common import refusals, render
from almanac.api.schemas.auth import AccountOut, SignInIn, SignUpIn, VerifiedOut
from almanac.platform import accounts

log = logging.getLogger(__name__)

router = APIRouter(prefix="/auth", tags=["auth"])


@router.post("/signup", status_code=status.HTTP_201_CREATED, response_model=AccountOut)
def sign_up(body: SignUpIn, db: Db, ctx: Context, now: Now) -> AccountOut:
    """Create an account; a verification link is mailed to the address."""
    created = accounts.sign_up(db, body.email, body.password.get_secret_value(), ctx.passwords, now)
    db.commit()
    ctx.mail_verification(created.account, created.verification_token, now)
    return AccountOut.read(db, created.account)


def prefers_page(request: Request) -> bool:
    """Whether the client asked for HTML before JSON: a browser following the mailed link."""
    accept = request.headers.get("accept", "")
    html, json_ = accept.find("text/html"), accept.find("application/json")
    return html != -1 and (json_ == -1 or html < json_)


@router.get(
    "/verify",
    response_model=VerifiedOut,
    responses={200: {"content": {"text/html": {}}, "description": "a page, for a browser"}},
)
def verify(
    request: Request, db: WriteDb, now: Now, token: str = Query(max_length=200)
) -> VerifiedOut | Response:
    """The mailed link: verifies the account's e-mail address (single use, 24 hours). A
    browser (Accept naming text/html before JSON) gets a page saying so, or why not."""
    if prefers_page(request):
        with refusals():
            account = accounts.verify_email(db, token, now)
        db.commit()
        return render(
            request, "verified.html", {"title": "Address verified", "email": account.email}
        )
    account = accounts.verify_email(db, token, now)
    db.commit()
    return VerifiedOut.model_validate(account)


@router.post("/verify/resend", status_code=status.HTTP_202_ACCEPTED)
def resend_verification(account: CurrentAccount, db: Db, ctx: Context, now: Now) -> Response:
    """Mail a new verification link when the address is not verified yet."""
    if not account.verified:
        token = accounts.issue_verification(db, account, now)
        db.commit()
        ctx.mail_verification(account, token, now)
    return Response(status_code=status.HTTP_202_ACCEPTED)


@router.post(
    "/signin",
    response_model=AccountOut,
    responses={429: {"description": "too many failed sign-ins: see Retry-After"}},
)
def sign_in(
    body: SignInIn,
    response: Response,
    read: ReadDb,
    db: Db,
    ctx: Context,
    now: Now,
    client_address: ClientAddress,
) -> AccountOut:
    """Check e-mail and password and set the session cookie (HttpOnly, SameSite=Lax). At most
    10 failed sign-ins per e-mail address and 30 per client address in 15 minutes: past either
    the answer is 429 with `Retry-After`, whatever the password (SIGN-IN-LOCKED,
    SIGN-IN-ADDRESS-LIMITED)."""
    signed = accounts.sign_in(
        db,
        read,
        body.email,
        body.password.get_secret_value(),
        client_address,
        ctx.passwords,
        now,
    )
    db.commit()
    response.set_cookie(
        SESSION_COOKIE,
        signed.cookie,
        max_age=int(accounts.identity.SESSION_LIFETIME.total_seconds()),
        httponly=True,
        samesite="lax",
        secure=ctx.settings.base_url.startswith("https://"),
        path="/",
    )
    return AccountOut.read(db, signed.account)


@router.post("/signout", status_code=status.HTTP_204_NO_CONTENT)
def sign_out(request: Request, db: Db, now: Now) -> Response:
    """End the session of the cookie, if any, and clear the cookie."""
    cookie = request.cookies.get(SESSION_COOKIE)
    if cookie:
        accounts.end_session(db, cookie, now)
        db.commit()
    response = Response(status_code=status.HTTP_204_NO_CONTENT)
    response.delete_cookie(SESSION_COOKIE, path="/", httponly=True, samesite="lax")
    return response


@router.get("/me", response_model=AccountOut)
def me(account: CurrentAccount, db: Db) -> AccountOut:
    """The signed-in account, its staff roles and organizations."""
    return AccountOut.read(db, account)
