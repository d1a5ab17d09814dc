"""Refusals: one tree for every rule of the domain that says no to a request.

A refusal's class says its kind; the API answers each kind with one status
(`almanac.api.problems.REFUSAL_STATUS`), and the pages draw it with the same one. Each refusal
carries its problem catalog `code` (a class default, or given when raised), the sentence for
the person (`detail`), and, when a check found several things, its `findings`.

Our refusal hierarchy (the kind, then the refusals of that kind, by module):

* Refusal
  + Malformed .................. 400  accounts: VerificationInvalid
  + Unauthenticated ............ 401  accounts: AuthenticationFailed, NotAuthenticated
  + Forbidden .................. 403  accounts: EmailUnverified
  + NotFound ................... 404  store.plugins: UnknownPlugin
                                        + store.moves: UnknownVersion
  + Conflict ................... 409  lifecycle: TransitionRefused
                                        + DigestChanged, DigestNotCurrent, NeverApproved
                                        + store.moves: PluginRetired
                                      store.moves: TakedownRefused
                                        + TakedownDigest
                                      store.held: NothingHeld
                                      store.retention: PurgeNotOffered
                                      hosting: IdTaken, VersionReused, VersionNotGreater,
                                        VersionKept
                                      publishing.review.submission: SubmitRefused
                                      publishing.uploads.upload_states: MoveRefused
  + TooLarge ................... 413  contract.pack: ArchiveTooLarge (also a CodeRefused)
  + Invalid .................... 422  contract.pack: CodeRefused
                                      store.moves: LocalNotApprovable (also a
                                        TransitionRefused)
                                      store.retention: PurgeNotConfirmed
                                      hosting: UnknownOrganization
  + RateLimited ................ 429  limits: TooManyAttempts

The kinds are raised as they are too, with a code of their own (`Conflict(..., code=...)`).
Not refusals: the device grant's `DeviceGrantError`, answered with the RFC 8628 error body of
its own handler; and the failures of the service itself (a run, a download, the mail), which
no request caused (`tests/api/test_refusal_tree.py` lists each with its reason).
"""

from __future__ import annotations

from collections.abc import Sequence

from almanac.platform.contract.problems import Problem


class Refusal(Exception):
    """A rule refused the request; `code` is a problem catalog code, the message says why."""

    code = "REQUEST-INVALID"
    retry_after: int | None = None
    """Seconds until the request may be made again, when known (the `Retry-After` header)."""

    def __init__(
        self, message: str, *, code: str | None = None, findings: Sequence[Problem] = ()
    ) -> None:
        super().__init__(message)
        if code is not None:
            self.code = code
        self.findings: tuple[Problem, ...] = tuple(findings)

    @property
    def detail(self) -> str:
        """The sentence for the person: the problem's `detail`, the page's message."""
        return str(self)


class Malformed(Refusal):
    """The request is not one the service can read (a link that is no link of it)."""

    code = "REQUEST-MALFORMED"


class Unauthenticated(Refusal):
    """Nobody, or not the person claimed, is signed in."""

    code = "AUTH-REQUIRED"


class Forbidden(Refusal):
    """The person may not do this."""

    code = "FORBIDDEN"


class NotFound(Refusal):
    """No such thing, or none the person may see."""

    code = "NOT-FOUND"


class Conflict(Refusal):
    """Not now: the state of what the request names does not allow it."""

    code = "STATE-CONFLICT"


class TooLarge(Refusal):
    """The request is over a size limit."""

    code = "REQUEST-TOO-LARGE"


class Invalid(Refusal):
    """The request's input breaks a rule; the message names the field and the fix."""

    code = "REQUEST-INVALID"


class RateLimited(Refusal):
    """Too many attempts; `retry_after` says when the next one may be made, when known."""

    code = "RATE-LIMITED"
