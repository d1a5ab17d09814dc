"""Sign-up, e-mail verification and web sessions ("Authentication" 2; DECISIONS 6)."""

from __future__ import annotations

import logging
from dataclasses import dataclass
from datetime import datetime, timedelta

from email_validator import EmailNotValidError, validate_email
from sqlalchemy import String, bindparam, select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from almanac.platform.accounts.errors import (
    AuthenticationFailed,
    NotAuthenticated,
    VerificationInvalid,
)
from almanac.platform.accounts.models import Account, EmailVerification, WebSession
from almanac.platform.accounts.passwords import Passwords
from almanac.platform.accounts.secret import new_secret, secret_hash
from almanac.platform.errors import Conflict, Invalid
from almanac.platform.limits import (
    SIGN_IN_FAILURES_PER_ACCOUNT,
    SIGN_IN_FAILURES_PER_ADDRESS,
    address_subject,
    count_attempt,
    take_back,
)

log = logging.getLogger(__name__)

VERIFICATION_LIFETIME = timedelta(hours=24)
SESSION_LIFETIME = timedelta(days=14)


def normalize_email(address: str) -> tuple[str, str]:
    """The address as given (trimmed, domain normalised) and its lower-case key; refuses an
    address that is not one. The key makes uniqueness case-insensitive."""
    try:
        checked = validate_email(address.strip(), check_deliverability=False)
    except EmailNotValidError as exc:
        raise Invalid(f"email: {exc}") from None
    return checked.normalized, checked.normalized.lower()


def find_account(db: Session, address: str) -> Account | None:
    """The account of an e-mail address, whatever its case."""
    _, key = normalize_email(address)
    return db.scalar(select(Account).where(Account.email_key == key))


@dataclass(frozen=True, slots=True)
class SignUp:
    account: Account
    verification_token: str  # to be mailed, never shown in a response

    def __repr__(self) -> str:
        return f"SignUp(account={self.account!r})"


def sign_up(
    db: Session, address: str, password: str, passwords: Passwords, now: datetime
) -> SignUp:
    """Create an unverified account and its first verification token; one account per address
    case-insensitively (ACCOUNT-EXISTS)."""
    email, key = normalize_email(address)
    # Hashed before the first statement: argon2 takes a quarter of a second, and on the embedded
    # default a writing transaction holds the store's one write lock from its first statement.
    password_hash = passwords.hash(password)
    if db.scalar(select(Account.id).where(Account.email_key == key)) is not None:
        raise Conflict("an account with this e-mail address exists", code="ACCOUNT-EXISTS")
    account = Account(email=email, email_key=key, password_hash=password_hash, created_at=now)
    db.add(account)
    try:
        db.flush()
    except IntegrityError:
        raise Conflict(
            "an account with this e-mail address exists", code="ACCOUNT-EXISTS"
        ) from None
    token = issue_verification(db, account, now)
    log.info("account %s signed up", account.id)
    return SignUp(account=account, verification_token=token)


def issue_verification(db: Session, account: Account, now: datetime) -> str:
    """A new single-use verification token valid for 24 hours; the store keeps its hash."""
    token = new_secret()
    db.add(
        EmailVerification(
            account_id=account.id,
            token_hash=secret_hash(token),
            created_at=now,
            expires_at=now + VERIFICATION_LIFETIME,
        )
    )
    db.flush()
    return token


def verification_link(base_url: str, token: str) -> str:
    """The mailed link: `{base_url}/api/v1/auth/verify?token=...`."""
    return f"{base_url.rstrip('/')}/api/v1/auth/verify?token={token}"


def verify_email(db: Session, token: str, now: datetime) -> Account:
    """Mark the token's account verified; an unknown, used or expired token is refused
    (VERIFICATION-INVALID). Using a token spends it."""
    row = db.scalar(
        select(EmailVerification).where(EmailVerification.token_hash == secret_hash(token))
    )
    if row is None or row.used_at is not None or row.expires_at <= now:
        raise VerificationInvalid("the verification link is unknown, used or expired")
    row.used_at = now
    account = db.get_one(Account, row.account_id)
    if account.verified_at is None:
        account.verified_at = now
    log.info("account %s verified its e-mail address", account.id)
    return account


def authenticate(db: Session, address: str, password: str, passwords: Passwords) -> Account:
    """The account whose address and password these are, or AUTH-FAILED (the same refusal for
    an unknown address as for a wrong password). Only reads: give it a read-only session, so the
    slow password check holds no write lock (`rehashed_password` gives what to store)."""
    try:
        account = find_account(db, address)
    except Invalid:
        account = None
    if not passwords.verify(account.password_hash if account else None, password):
        raise AuthenticationFailed("the e-mail address or password is wrong")
    assert account is not None
    return account


@dataclass(frozen=True, slots=True)
class SignedIn:
    account: Account
    cookie: str  # the new session's cookie value: set on the response, never logged

    def __repr__(self) -> str:
        return f"SignedIn(account={self.account!r})"


def sign_in(
    db: Session,
    read: Session,
    address: str,
    password: str,
    client_address: str | None,
    passwords: Passwords,
    now: datetime,
) -> SignedIn:
    """Check e-mail and password and start a web session, within the limits on failed
    sign-ins (`SIGN_IN_FAILURES_PER_ACCOUNT` for the e-mail address, whether or not an account
    has it; `SIGN_IN_FAILURES_PER_ADDRESS` for the client's address): over either, the attempt
    is refused (TooManyAttempts) before the password is checked, whether it is right or not.
    The attempt counts as a failure from before the check; a success takes back its own count
    and no other, so a success between failures resets nothing. `db` is the request's
    writing session (committed here; the caller commits the session), `read` a read-only one
    for the password check: argon2 takes a quarter of a second, which must not be spent
    holding the embedded default's write lock."""
    try:
        _, email_key = normalize_email(address)
    except Invalid:
        email_key = address.strip().lower()
    counted = count_attempt(
        db,
        [
            (SIGN_IN_FAILURES_PER_ACCOUNT, email_key),
            (SIGN_IN_FAILURES_PER_ADDRESS, address_subject(client_address)),
        ],
        now,
    )
    # Kept before the slow check: sign-ins sent at once each see the others' counts.
    db.commit()
    checked = authenticate(read, address, password, passwords)
    new_hash = rehashed_password(checked, password, passwords)
    read.close()  # its connection goes back to the pool before the request takes another
    account = db.get_one(Account, checked.id)
    if new_hash is not None:
        account.password_hash = new_hash
    take_back(db, counted)
    return SignedIn(account=account, cookie=start_session(db, account, now))


def rehashed_password(account: Account, password: str, passwords: Passwords) -> str | None:
    """A new hash of the password when its stored hash was made with older parameters, else
    None (pure: the caller stores it in its writing transaction)."""
    if passwords.needs_rehash(account.password_hash):
        return passwords.hash(password)
    return None


def start_session(db: Session, account: Account, now: datetime) -> str:
    """A new web session; returns the cookie value (shown once, stored as a hash)."""
    cookie = new_secret()
    db.add(
        WebSession(
            account_id=account.id,
            token_hash=secret_hash(cookie),
            created_at=now,
            expires_at=now + SESSION_LIFETIME,
        )
    )
    db.flush()
    log.info("account %s signed in", account.id)
    return cookie


# Built once, since every signed-in request runs it: building an ORM statement and its cache
# key costs about as much as the round trip.
_SESSION_BY_HASH = select(WebSession).where(
    WebSession.token_hash == bindparam("session_token_hash", type_=String)
)


def _web_session(db: Session, cookie: str) -> WebSession | None:
    return db.scalar(_SESSION_BY_HASH, {"session_token_hash": secret_hash(cookie)})


def session_account(db: Session, cookie: str, now: datetime) -> Account:
    """The account of a live session cookie, or AUTH-REQUIRED."""
    row = _web_session(db, cookie)
    if row is None or row.ended_at is not None or row.expires_at <= now:
        raise NotAuthenticated("the session has ended; sign in again")
    return row.account


def end_session(db: Session, cookie: str, now: datetime) -> None:
    """End a session (sign out); an unknown or ended one is left as it is."""
    row = _web_session(db, cookie)
    if row is not None and row.ended_at is None:
        row.ended_at = now
