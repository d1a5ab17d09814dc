"""A rollout's life story in one table (README, Rollouts): the one place a rollout's state is
set, and the moves it may make. A rollout starts when an approved update is published with a
shadow period, and ends promoted, held, stopped or, after its promotion, rolled back."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import select
from sqlalchemy.orm import Session

from almanac.platform.errors import Conflict
from almanac.platform.publishing.models import Rollout, RolloutState
from almanac.platform.store.history import log_move

R = RolloutState


class RolloutMoveRefused(Conflict):
    """The table has no such move from the state the rollout is in."""

    code = "STATE-CONFLICT"


@dataclass(frozen=True, slots=True)
class RolloutStep:
    """One row: `trigger` moves a rollout in one of `sources` (None: a new one) to `result`."""

    trigger: str
    sources: frozenset[RolloutState | None]
    result: RolloutState


ROLLOUT_STEPS: tuple[RolloutStep, ...] = (
    RolloutStep("publish with a shadow period of 1 to 5 runs", frozenset({None}), R.SHADOWING),
    RolloutStep(
        "its shadow runs all passed, or the publisher promotes it early",
        frozenset({R.SHADOWING}),
        R.PROMOTED,
    ),
    RolloutStep(
        "a shadow run failed, or would withdraw more than the Held limits allow",
        frozenset({R.SHADOWING}),
        R.HELD,
    ),
    RolloutStep(
        "the publisher stops it; a retire, takedown or shelf; a newer version published",
        frozenset({R.SHADOWING, R.HELD}),
        R.STOPPED,
    ),
    RolloutStep("the publisher rolls back", frozenset({R.PROMOTED}), R.ROLLED_BACK),
)
"""Every move of a rollout. Promoted waits only for a roll back; the others end its story."""

UNDER_WAY = frozenset({R.SHADOWING, R.HELD})
"""A rollout not yet ended: a held one still stands in the portal until stopped or replaced."""


def rollout_step(state: RolloutState | None, to: RolloutState) -> RolloutStep | None:
    """The row that moves a rollout from `state` to `to`; None when the table has none."""
    return next((s for s in ROLLOUT_STEPS if s.result is to and state in s.sources), None)


def move_rollout(rollout: Rollout, to: RolloutState) -> None:
    """Set the rollout's state to `to`; RolloutMoveRefused when the table has no such move."""
    current: str | None = rollout.state
    was = None if current is None else RolloutState(current)
    if rollout_step(was, to) is None:
        froms = sorted(
            "nothing (new)" if s is None else str(s)
            for step in ROLLOUT_STEPS
            if step.result is to
            for s in step.sources
        )
        raise RolloutMoveRefused(
            f"the rollout of {rollout.plugin_id} {rollout.version} is {was}; it becomes {to} "
            f"only from {' or '.join(froms)}"
        )
    rollout.state = to


def end_under_way(
    db: Session, plugin_id: str, *, reason: str, by: str, now: datetime, keep: int | None = None
) -> list[Rollout]:
    """Stop every rollout of the plug-in still under way (but `keep`'s), each kept in the
    plug-in's history with who and why: a retire, takedown or shelf, or a newer version
    published in its place ("Rules that stay")."""
    ended = list(
        db.scalars(
            select(Rollout).where(
                Rollout.plugin_id == plugin_id,
                Rollout.state.in_([str(s) for s in UNDER_WAY]),
                Rollout.id != (keep or 0),
            )
        )
    )
    for rollout in ended:
        end(db, rollout, RolloutState.STOPPED, reason=reason, by=by, now=now)
    return ended


def end(
    db: Session, rollout: Rollout, to: RolloutState, *, reason: str, by: str, now: datetime
) -> None:
    """Move the rollout to `to` with who and why, kept in the plug-in's history."""
    was = rollout.state
    move_rollout(rollout, to)
    rollout.ended_by = by
    rollout.ended_at = now
    rollout.reason = reason
    db.flush()
    log_move(
        db.connection(),
        rollout.plugin_id,
        f"rollout-{to.value.replace('_', '-')}",
        by,
        now,
        detail={
            "rollout": rollout.id,
            "upload": rollout.upload_id,
            "version": rollout.version,
            "from": was,
            "reason": reason,
        },
    )


HOST_STOPS = {
    "takedown": "the service took the plug-in down",
    "shelf": "the service took the plug-in off the shelf",
}
"""The host's moves that stop a rollout under way, and the reason each is recorded with."""


def host_stops(db: Session, plugin_id: str, what: str, *, by: str, now: datetime) -> None:
    """A takedown or a shelf (`what`, a key of HOST_STOPS) stops the plug-in's rollout under way
    ("Rules that stay"), from the host's route and page alike."""
    end_under_way(db, plugin_id, reason=HOST_STOPS[what], by=by, now=now)
