"""The approved-plug-in state machine ("States and transitions", Approved plug-in table).

Pure rule only: `next_state` says where a trigger leads and whether a run starts at once.
The store persists the move (who, when) and leaves the run request.

Roll back is the host's explicit move back to a kept version approved before (the table has
no row for it; "Versioning" 3 keeps each version's code by digest): that digest is approved
again without a new review, because a person approved it before. Registering such code again
is refused instead (`hosting.VersionKept`), so a version never comes back by accident.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

from almanac.platform.errors import Conflict


class State(StrEnum):
    PENDING = "pending"
    APPROVED = "approved"
    FAILING = "failing"
    PAUSED = "paused"
    REMOVED = "removed"


class Trigger(StrEnum):
    CODE_CHANGED = "code-changed"
    """The first version arrives, or any covered file changes (even only `version`)."""
    APPROVE = "approve"
    REMOVE = "remove"
    PAUSE = "pause"
    RESUME = "resume"
    RUN_FAILED = "run-failed"
    RUN_SUCCEEDED = "run-succeeded"
    ROLL_BACK = "roll-back"
    """A person makes a kept version approved before the current and approved one again."""


class RunTrigger(StrEnum):
    """Why a run happened (kept on the run row and on a run request)."""

    SCHEDULE = "schedule"
    RETRY = "retry"
    APPROVAL = "approval"
    RESUME = "resume"
    FIRST = "first"
    BACKFILL = "backfill"


class TransitionRefused(Conflict):
    """The trigger is not allowed from this state, or its condition does not hold."""

    code = "STATE-CONFLICT"


class DigestChanged(TransitionRefused):
    """Approval refused: the digest the page showed is an earlier version's, so the files
    changed since the page was shown."""

    code = "DIGEST-CHANGED"


class DigestNotCurrent(TransitionRefused):
    """Approval refused: the digest given was never a digest of this plug-in's code, so it is
    not the current version's either."""

    code = "DIGEST-NOT-CURRENT"


class NeverApproved(TransitionRefused):
    """Roll back refused: the version was never approved, so it needs a review first."""

    code = "ROLLBACK-NOT-APPROVED"


@dataclass(frozen=True, slots=True)
class Facts:
    """What the conditions of the table read.

    `digest_shown`: the digest on the page the person approved from; `current_digest`: the
    digest of the newest covered files; `approved_digest`: the digest last approved (None if
    none); `ever_approved`: an earlier version was approved; `ever_ran`: any run is stored;
    `kept_digests`: every digest of the plug-in's kept versions; `target_version`,
    `target_digest` and `target_approved_before`: the version a roll back goes to, and whether
    a person approved it before.
    """

    current_digest: str | None = None
    digest_shown: str | None = None
    approved_digest: str | None = None
    ever_approved: bool = False
    ever_ran: bool = False
    kept_digests: frozenset[str] = frozenset()
    target_version: str | None = None
    target_digest: str | None = None
    target_approved_before: bool = False


@dataclass(frozen=True, slots=True)
class Move:
    """Where the trigger leads; `starts` names the run that starts at once, if any."""

    state: State
    starts: RunTrigger | None = None


_ACTIVE = (State.APPROVED, State.FAILING, State.PAUSED)


def next_state(state: State | None, trigger: Trigger, facts: Facts) -> Move:
    """The next state for `trigger` from `state` (Approved plug-in table of "States and
    transitions"); TransitionRefused when the table allows no move."""
    if trigger is Trigger.CODE_CHANGED:
        if state is None or state is State.PENDING or state in _ACTIVE:
            # Stays Pending until approved, even when the files change back.
            return Move(State.PENDING)
        if state is State.REMOVED:
            # A removed plug-in stays removed; approving the new code brings it back.
            return Move(State.REMOVED)
    if state is None:
        raise TransitionRefused("the plug-in has no version yet")
    if trigger is Trigger.APPROVE:
        if state not in (State.PENDING, State.REMOVED):
            raise TransitionRefused(f"a plug-in that is {state} cannot be approved")
        shown, current = facts.digest_shown, facts.current_digest
        if shown is None or shown != current:
            if shown in facts.kept_digests:
                raise DigestChanged(
                    f"the digest shown, {shown}, is an earlier version's: the files changed "
                    f"since the page was shown, and the current digest is {current}; read the "
                    "new version and approve again"
                )
            raise DigestNotCurrent(
                f"the digest {shown} is not the current version's digest {current}: it was "
                "never the digest of this plug-in's code; approve the digest the current "
                "version's page shows"
            )
        return Move(State.APPROVED, _first_or_approval(facts))
    if trigger is Trigger.REMOVE:
        if state is State.REMOVED:
            raise TransitionRefused("the plug-in is already removed")
        return Move(State.REMOVED)
    if trigger is Trigger.PAUSE:
        if state in (State.APPROVED, State.FAILING):
            return Move(State.PAUSED)
        if state is State.PENDING and facts.ever_approved:
            return Move(State.PAUSED)
        if state is State.PENDING:
            raise TransitionRefused(
                "a plug-in can be paused from Pending only when an earlier version was approved"
            )
        raise TransitionRefused(f"a plug-in that is {state} cannot be paused")
    if trigger is Trigger.RESUME:
        if state is not State.PAUSED:
            raise TransitionRefused(f"only a paused plug-in can be resumed, not one {state}")
        if facts.approved_digest is None or facts.current_digest != facts.approved_digest:
            return Move(State.PENDING)
        return Move(State.APPROVED, RunTrigger.RESUME)
    if trigger is Trigger.ROLL_BACK:
        return _roll_back(state, facts)
    if trigger is Trigger.RUN_FAILED:
        return Move(State.FAILING if state is State.APPROVED else state)
    if trigger is Trigger.RUN_SUCCEEDED:
        return Move(State.APPROVED if state is State.FAILING else state)
    raise TransitionRefused(f"{trigger} is not allowed from {state}")


def _first_or_approval(facts: Facts) -> RunTrigger:
    return RunTrigger.APPROVAL if facts.ever_ran else RunTrigger.FIRST


def _roll_back(state: State, facts: Facts) -> Move:
    """Roll back: from Pending, Approved or Failing the kept version is approved again and runs
    at once; from Paused it stays Paused (resume runs it), since a pause is a person's choice.
    Refused from Removed (restore brings it back), for the current version itself, and for a
    version no person approved before (NeverApproved)."""
    if state is State.REMOVED:
        raise TransitionRefused("a removed plug-in cannot be rolled back; restore it first")
    if facts.target_digest is None:
        raise TransitionRefused("a roll back names the kept version it goes to")
    target = f"version {facts.target_version} ({facts.target_digest})"
    if not facts.target_approved_before:
        raise NeverApproved(
            f"{target} was never approved; only a version a person approved before is rolled "
            "back to without a new review"
        )
    if facts.target_digest == facts.current_digest:
        raise TransitionRefused(f"{target} is the current version already")
    if state is State.PAUSED:
        return Move(State.PAUSED)
    return Move(State.APPROVED, _first_or_approval(facts))
