"""An upload's life story in one table ("States and transitions", Version in the portal), and
the one place an upload's state and its checks' statuses are set.

Pure rule plus its one write: `UPLOAD_STEPS` and `CHECK_STEPS` say which moves exist, and
`move` / `move_check` make a move or refuse it (`MoveRefused`, STATE-CONFLICT). The callers
keep their own refusals with the words the portal shows (a withdrawn upload, one in review);
the table is what those words describe, and the backstop when a caller forgets.

The spec's steps are upload, checks, submit, in review (a reviewer's decision), approved
(publish) and withdraw. The service's own states fill what the spec leaves to it: `checking`
and `checked` (the checks of "checks"), checks run again (re-run, review information sent),
`superseded` (publish: "the previous version is marked superseded"), withdrawn by retiring
("Listing of a published plug-in", Retire) or by a newer upload submitted in its place, and
withdrawn by the publisher from any state before publishing (README, Upload states).

A check's status has its own small table: queued, running, then passed or failed, or could
not run when the service's own network was down (`publishing.uploads.network`), which is not
final: the check is queued again once the network is back.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from almanac.platform.errors import Conflict
from almanac.platform.publishing.models import CheckStatus, PortalUpload, UploadCheck, UploadState

U = UploadState
C = CheckStatus


class MoveRefused(Conflict):
    """The table has no such move from the state the upload (or check) is in."""

    code = "STATE-CONFLICT"


@dataclass(frozen=True, slots=True)
class UploadStep:
    """One row: `trigger` moves an upload that is in one of `sources` (None: a new upload) to
    `result`."""

    trigger: str
    sources: frozenset[UploadState | None]
    result: UploadState


@dataclass(frozen=True, slots=True)
class CheckStep:
    """One row: `trigger` moves a check that is in one of `sources` (None: a new check) to
    one of `results`."""

    trigger: str
    sources: frozenset[CheckStatus | None]
    results: frozenset[CheckStatus]


_PREPARED = frozenset({U.CHECKED, U.CHANGES_REQUESTED})
_BEFORE_PUBLISHING = frozenset(
    {U.CHECKING, U.CHECKED, U.IN_REVIEW, U.APPROVED, U.CHANGES_REQUESTED, U.REJECTED}
)

UPLOAD_STEPS: tuple[UploadStep, ...] = (
    UploadStep("upload: static checks made, room checks queued", frozenset({None}), U.CHECKING),
    UploadStep("checks: every check final", frozenset({U.CHECKING}), U.CHECKED),
    UploadStep("checks run again (re-run, review information sent)", _PREPARED, U.CHECKING),
    UploadStep("submit", _PREPARED, U.IN_REVIEW),
    UploadStep("in review: the reviewer approves", frozenset({U.IN_REVIEW}), U.APPROVED),
    UploadStep(
        "in review: the reviewer requests changes", frozenset({U.IN_REVIEW}), U.CHANGES_REQUESTED
    ),
    UploadStep("in review: the reviewer rejects", frozenset({U.IN_REVIEW}), U.REJECTED),
    UploadStep("approved: publish", frozenset({U.APPROVED}), U.PUBLISHED),
    UploadStep(
        "publish: a later version takes its place, or the publisher rolls it back",
        frozenset({U.PUBLISHED}),
        U.SUPERSEDED,
    ),
    UploadStep(
        "the publisher rolls back to it (README, Rollouts)",
        frozenset({U.SUPERSEDED}),
        U.PUBLISHED,
    ),
    UploadStep(
        "withdraw (publisher), a newer upload submitted in its place, or retire",
        _BEFORE_PUBLISHING,
        U.WITHDRAWN,
    ),
)
"""Every move of an upload's state. Published, superseded and withdrawn are where its story
ends (a published plug-in is unpublished, retired or taken down through its listing), but for
a publisher's roll back after a rollout, which swaps the last two published ones."""

_FINAL_RESULTS = frozenset({C.PASSED, C.FAILED})

CHECK_STEPS: tuple[CheckStep, ...] = (
    CheckStep(
        "queued (an upload, its checks run again, a host version)",
        frozenset({None}),
        frozenset({C.QUEUED}),
    ),
    CheckStep("judged at once (a static check)", frozenset({None}), _FINAL_RESULTS),
    CheckStep("its run starts", frozenset({C.QUEUED}), frozenset({C.RUNNING})),
    CheckStep(
        "its run ends (could not run: the service's network was down)",
        frozenset({C.RUNNING}),
        _FINAL_RESULTS | {C.COULD_NOT_RUN},
    ),
    CheckStep(
        "its deadline passes (PLG-CHECK-DEADLINE)",
        frozenset({C.QUEUED, C.RUNNING}),
        frozenset({C.FAILED}),
    ),
    CheckStep(
        "the network is back: queued again", frozenset({C.COULD_NOT_RUN}), frozenset({C.QUEUED})
    ),
    CheckStep(
        "its upload is withdrawn",
        frozenset({C.QUEUED, C.RUNNING, C.COULD_NOT_RUN}),
        frozenset({C.FAILED}),
    ),
)
"""Every move of a check's status. Passed and failed are final; could not run is not."""


def upload_step(state: UploadState | None, to: UploadState) -> UploadStep | None:
    """The row that moves an upload from `state` to `to`; None when the table has none."""
    return next((s for s in UPLOAD_STEPS if s.result is to and state in s.sources), None)


def allows(state: UploadState | str | None, to: UploadState) -> bool:
    """Whether the table moves an upload from `state` to `to`."""
    return upload_step(None if state is None else UploadState(state), to) is not None


def move(upload: PortalUpload, to: UploadState) -> None:
    """Set the upload's state to `to`: the one place it is set ("States and transitions",
    Version in the portal). MoveRefused when the table has no such move."""
    current: str | None = upload.state
    was = None if current is None else UploadState(current)
    if upload_step(was, to) is None:
        whose = "a new upload" if upload.id is None else f"upload {upload.id}"
        now = "has no state yet" if was is None else f"is {was}"
        raise MoveRefused(f"{whose} {now}; it cannot become {to}: {_reached(to)}")
    upload.state = to


def check_step(status: CheckStatus | None, to: CheckStatus) -> CheckStep | None:
    """The row that moves a check from `status` to `to`; None when the table has none."""
    return next((s for s in CHECK_STEPS if to in s.results and status in s.sources), None)


def move_check(check: UploadCheck, to: CheckStatus) -> None:
    """Set a check's status to `to`: the one place it is set. MoveRefused when the table has
    no such move."""
    current: str | None = check.status
    was = None if current is None else CheckStatus(current)
    if check_step(was, to) is None:
        now = "is new" if was is None else f"is {was}"
        froms = sorted(_names(s.sources for s in CHECK_STEPS if to in s.results))
        raise MoveRefused(
            f"the {check.name} check {now}; it cannot become {to}: a check becomes {to} only "
            f"from {_listed(froms)}"
        )
    check.status = to


def _reached(to: UploadState) -> str:
    froms = sorted(_names(s.sources for s in UPLOAD_STEPS if s.result is to))
    triggers = "; ".join(s.trigger for s in UPLOAD_STEPS if s.result is to)
    return f"an upload becomes {to} only from {_listed(froms)} ({triggers})"


def _names(groups: Iterable[frozenset[object]]) -> set[str]:
    return {"nothing (new)" if s is None else str(s) for group in groups for s in group}


def _listed(names: list[str]) -> str:
    return names[0] if len(names) == 1 else f"{', '.join(names[:-1])} or {names[-1]}"
