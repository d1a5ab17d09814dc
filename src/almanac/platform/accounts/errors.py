"""The account rules' own refusals, each of a kind of the tree in `almanac.platform.errors`."""

from __future__ import annotations

from almanac.platform.errors import Forbidden, Malformed, Unauthenticated


class AuthenticationFailed(Unauthenticated):
    code = "AUTH-FAILED"


class NotAuthenticated(Unauthenticated):
    code = "AUTH-REQUIRED"


class EmailUnverified(Forbidden):
    code = "EMAIL-UNVERIFIED"


class VerificationInvalid(Malformed):
    code = "VERIFICATION-INVALID"
