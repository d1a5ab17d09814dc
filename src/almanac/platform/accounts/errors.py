"""Refusals of the account rules. Each carries a catalog code; the API maps the kind to a status."""

from __future__ import annotations


class AccountError(Exception):
    """A rule refused the request; `code` is a problem catalog code, the message says why."""

    code = "REQUEST-INVALID"

    def __init__(self, message: str, *, code: str | None = None) -> None:
        super().__init__(message)
        if code is not None:
            self.code = code

    @property
    def detail(self) -> str:
        return str(self.args[0])


class InvalidInput(AccountError):
    code = "REQUEST-INVALID"


class AuthenticationFailed(AccountError):
    code = "AUTH-FAILED"


class NotAuthenticated(AccountError):
    code = "AUTH-REQUIRED"


class EmailUnverified(AccountError):
    code = "EMAIL-UNVERIFIED"


class Forbidden(AccountError):
    code = "FORBIDDEN"


class NotFound(AccountError):
    code = "NOT-FOUND"


class Conflict(AccountError):
    code = "ACCOUNT-EXISTS"


class VerificationInvalid(AccountError):
    code = "VERIFICATION-INVALID"


class RateLimited(AccountError):
    code = "RATE-LIMITED"
    retry_after: int | None = None
    """Seconds until the request may be made again, when known (the `Retry-After` header)."""
