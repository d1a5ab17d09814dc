"""Every row of the Approved plug-in table, its refusals, the recorded moves and run requests;
retain recorded at first registration; purge."""

from __future__ import annotations

from dataclasses import replace

import pytest
from sqlalchemy import Engine

from almanac.platform.lifecycle import (
    DigestChanged,
    DigestNotCurrent,
    Facts,
    Move,
    NeverApproved,
    RunTrigger,
    State,
    TransitionRefused,
    Trigger,
    next_state,
)
from almanac.platform.store import moves as store_moves
from almanac.platform.store.engine import write_transaction
from almanac.platform.store.history import plugin_moves
from almanac.platform.store.moves import UnknownVersion
from almanac.platform.store.plugins import plugin_status
from almanac.platform.store.reading import last_runs
from almanac.platform.store.retention import PurgeNotConfirmed, PurgeNotOffered, purge
from almanac.platform.store.run_requests import OpenRunRequest, open_run_requests, take_run_request
from almanac.platform.store.versions import approved_code

from .conftest import Plug, series_of, value
from .test_write import stored


@pytest.fixture
def fresh(engine: Engine) -> Plug:
    return Plug(engine, [series_of("rate", "value")])


def act(p: Plug, name: str, **kwargs):
    with write_transaction(p.engine) as conn:
        return getattr(store_moves, name)(conn, p.id, by="host@example.org", now=p.now(), **kwargs)


def requests(p: Plug) -> list[OpenRunRequest]:
    with p.engine.connect() as conn:
        return [r for r in open_run_requests(conn, p.now()) if r.plugin_id == p.id]


def moves(p: Plug) -> list[tuple]:
    with p.engine.connect() as conn:
        return [(m.action, m.from_state, m.to_state) for m in plugin_moves(conn, p.id)]


def test_first_version_is_pending_then_approval_starts_the_first_run(fresh: Plug) -> None:
    fresh.register("d1")
    assert fresh.state() == "pending"
    request_id = fresh.approve()
    assert fresh.state() == "approved"
    (request,) = requests(fresh)
    assert request.id == request_id and request.trigger == "first"
    assert moves(fresh) == [
        ("code-changed", None, "pending"),
        ("approve", "pending", "approved"),
    ]
    with fresh.engine.connect() as conn:
        assert take_run_request(conn, request_id, fresh.now())
        assert not take_run_request(conn, request_id, fresh.now())
        conn.commit()
    assert requests(fresh) == []


def test_approval_refused_when_the_digest_shown_is_not_current(fresh: Plug) -> None:
    fresh.register("d1")
    fresh.register("d2", "1.0.1")
    with pytest.raises(TransitionRefused, match="digest shown"):
        fresh.approve(digest_shown="d1")
    assert fresh.state() == "pending"
    fresh.approve(digest_shown="d2")
    assert fresh.state() == "approved"


def test_any_covered_change_returns_to_pending_and_stays_even_if_changed_back(fresh: Plug):
    fresh.ready()
    fresh.write([value("2026-11-01", 1)])
    fresh.register("d2", "1.0.0")  # a change of code, same version
    assert fresh.state() == "pending"
    fresh.register("d1")  # the files change back
    assert fresh.state() == "pending"
    assert len(stored(fresh)) == 1  # records stay
    fresh.register("d1")  # the very same files again: no change at all
    assert moves(fresh)[-1] == ("code-changed", "pending", "pending")


@pytest.mark.parametrize("before", ["approved", "failing", "paused"])
def test_covered_change_from_every_active_state(fresh: Plug, before: str) -> None:
    fresh.ready()
    if before == "failing":
        fresh.fail()
    if before == "paused":
        act(fresh, "pause")
    assert fresh.state() == before
    fresh.register("d9", "1.1.0")
    assert fresh.state() == "pending"


def test_pause_from_pending_only_after_an_earlier_approval(fresh: Plug) -> None:
    fresh.register("d1")
    with pytest.raises(TransitionRefused, match="earlier version was approved"):
        act(fresh, "pause")
    fresh.approve()
    fresh.register("d2", "1.0.1")
    act(fresh, "pause")
    assert fresh.state() == "paused"


def test_failing_and_back_on_runs(fresh: Plug) -> None:
    fresh.ready()
    fresh.fail()
    assert fresh.state() == "failing"
    fresh.fail(trigger=RunTrigger.RETRY)
    assert fresh.state() == "failing"
    fresh.write([])
    assert fresh.state() == "approved"
    assert moves(fresh)[-2:] == [
        ("run-failed", "approved", "failing"),
        ("run-succeeded", "failing", "approved"),
    ]


@pytest.mark.parametrize("before", ["approved", "failing"])
def test_pause_then_resume_unchanged_runs_at_once(fresh: Plug, before: str) -> None:
    fresh.ready()
    if before == "failing":
        fresh.fail()
    act(fresh, "pause")
    assert fresh.state() == "paused"
    request_id = act(fresh, "resume")
    assert fresh.state() == "approved"
    assert [r.trigger for r in requests(fresh) if r.id == request_id] == ["resume"]


def test_resume_with_changed_files_goes_to_pending() -> None:
    move = next_state(
        State.PAUSED, Trigger.RESUME, Facts(current_digest="d2", approved_digest="d1")
    )
    assert move.state is State.PENDING and move.starts is None


@pytest.mark.parametrize("before", ["pending", "approved", "failing", "paused"])
def test_remove_keeps_records_and_approval_brings_them_back(fresh: Plug, before: str) -> None:
    fresh.register("d1")
    if before != "pending":
        fresh.approve()
        fresh.write([value("2026-11-01", 1)])
    if before == "failing":
        fresh.fail()
    if before == "paused":
        act(fresh, "pause")
    act(fresh, "remove")
    assert fresh.state() == "removed"
    with pytest.raises(TransitionRefused):
        act(fresh, "remove")
    fresh.register("d1")  # nothing changes: removed stays removed
    assert fresh.state() == "removed"
    request_id = fresh.approve()
    assert fresh.state() == "approved"
    expected = "first" if before == "pending" else "approval"
    assert [r.trigger for r in requests(fresh) if r.id == request_id] == [expected]
    assert len(stored(fresh)) == (0 if before == "pending" else 1)


@pytest.mark.parametrize(
    ("state", "trigger"),
    [
        (State.APPROVED, Trigger.APPROVE),
        (State.FAILING, Trigger.APPROVE),
        (State.PAUSED, Trigger.APPROVE),
        (State.PENDING, Trigger.RESUME),
        (State.APPROVED, Trigger.RESUME),
        (State.PAUSED, Trigger.PAUSE),
        (State.REMOVED, Trigger.PAUSE),
        (State.REMOVED, Trigger.RESUME),
        (None, Trigger.APPROVE),
    ],
)
def test_moves_the_table_does_not_allow_are_refused(state, trigger) -> None:
    with pytest.raises(TransitionRefused):
        next_state(state, trigger, Facts(current_digest="d", digest_shown="d", ever_approved=True))


def test_run_outcomes_outside_approved_and_failing_change_nothing() -> None:
    for state in (State.PAUSED, State.PENDING, State.REMOVED):
        assert next_state(state, Trigger.RUN_FAILED, Facts()).state is state
        assert next_state(state, Trigger.RUN_SUCCEEDED, Facts()).state is state


def test_retain_recorded_at_first_registration_then_the_persons_answer(fresh: Plug) -> None:
    fresh.retain = "unknown"
    fresh.register("d1")
    fresh.retain = "no"
    fresh.register("d2", "1.0.1")  # a later manifest does not change it by itself
    with fresh.engine.connect() as conn:
        status = plugin_status(conn, fresh.id)
    assert (status.retain_registered, status.retain) == ("unknown", "unknown")
    act(fresh, "record_retain_answer", answer="no")
    with fresh.engine.connect() as conn:
        assert plugin_status(conn, fresh.id).retain == "no"
    with pytest.raises(ValueError, match="retain must be"):
        act(fresh, "record_retain_answer", answer="maybe")


def test_purge(fresh: Plug) -> None:
    fresh.ready()
    fresh.write([value("2026-11-01", 1), value("2026-11-02", 1)])
    fresh.write([value("2026-11-01", 2), value("2026-11-02", 1)])
    with write_transaction(fresh.engine) as conn, pytest.raises(PurgeNotOffered, match="'yes'"):
        purge(conn, fresh.id, typed_id=fresh.id, dry_run=True, by="host", now=fresh.now())
    act(fresh, "record_retain_answer", answer="no")
    with write_transaction(fresh.engine) as conn:
        count = purge(conn, fresh.id, typed_id=None, dry_run=True, by="host", now=fresh.now())
    assert (count.records, count.revisions, count.removed) == (2, 1, False)
    assert len(stored(fresh)) == 2
    with write_transaction(fresh.engine) as conn, pytest.raises(PurgeNotConfirmed, match="type"):
        purge(conn, fresh.id, typed_id="other", dry_run=False, by="host", now=fresh.now())
    assert len(stored(fresh)) == 2
    with write_transaction(fresh.engine) as conn:
        count = purge(conn, fresh.id, typed_id=fresh.id, dry_run=False, by="host", now=fresh.now())
    assert count.removed and stored(fresh) == []
    with fresh.engine.connect() as conn:
        assert len(last_runs(conn, fresh.id)) == 2  # run history stays
    assert moves(fresh)[-1][0] == "purge"


def test_approved_code_is_kept_by_digest(fresh: Plug) -> None:
    fresh.ready()
    fresh.register("d2", "1.0.1")
    with fresh.engine.connect() as conn:
        code = approved_code(conn, fresh.id)
    assert (code.digest, code.files["fetch.mjs"]) == ("d1", b"d1")
    assert code.plugin_id == fresh.id


def test_shelf_flag_is_recorded(fresh: Plug) -> None:
    fresh.ready()
    act(fresh, "set_shelved", shelved=True)
    with fresh.engine.connect() as conn:
        assert plugin_status(conn, fresh.id).shelved
    assert moves(fresh)[-1][0] == "shelve"


# Roll back: the host's explicit move back to a kept version approved before --------------


def test_roll_back_from_failing_runs_the_earlier_approved_code(fresh: Plug) -> None:
    fresh.ready()  # d1, 1.0.0 approved
    fresh.write([value("2026-11-01", 1)])
    fresh.register("d2", "1.1.0")
    fresh.approve()
    fresh.fail()
    assert fresh.state() == "failing"
    request_id = act(fresh, "roll_back", version="1.0.0", reason="1.1.0 fails every run")
    assert fresh.state() == "approved"
    with fresh.engine.connect() as conn:
        status = plugin_status(conn, fresh.id)
        code = approved_code(conn, fresh.id)
        last = plugin_moves(conn, fresh.id)[-1]
    assert (status.current_digest, status.approved_digest, code.files["fetch.mjs"]) == (
        "d1",
        "d1",
        b"d1",
    )
    (request,) = [r for r in requests(fresh) if r.id == request_id]
    assert (request.trigger, request.version_id) == ("approval", code.version_id)
    assert (last.action, last.from_state, last.to_state, last.by) == (
        "roll-back",
        "failing",
        "approved",
        "host@example.org",
    )
    assert last.detail["reason"] == "1.1.0 fails every run"
    assert (last.detail["from_version"], last.detail["to_version"]) == ("1.1.0", "1.0.0")
    assert len(stored(fresh)) == 1  # records stay


def test_roll_back_refusals_change_nothing(fresh: Plug) -> None:
    fresh.ready()
    fresh.register("d2", "1.0.1")  # never approved
    fresh.register("d3", "1.0.2")
    fresh.approve()
    before = moves(fresh)
    with pytest.raises(NeverApproved, match=r"1\.0\.1"):
        act(fresh, "roll_back", version="1.0.1", reason="r")
    with pytest.raises(UnknownVersion):
        act(fresh, "roll_back", version="0.0.1", reason="r")
    with pytest.raises(TransitionRefused, match="current version already"):
        act(fresh, "roll_back", version="1.0.2", reason="r")
    with pytest.raises(ValueError, match="reason"):
        act(fresh, "roll_back", version="1.0.0", reason=" ")
    act(fresh, "set_taken_down", taken_down=True, reason="r", message="m")
    with pytest.raises(TransitionRefused, match="taken down"):
        act(fresh, "roll_back", version="1.0.0", reason="r")
    assert moves(fresh) == [*before, ("takedown", None, None)]
    with fresh.engine.connect() as conn:
        assert plugin_status(conn, fresh.id).approved_digest == "d3"


def test_roll_back_rule_by_state() -> None:
    facts = Facts(
        current_digest="d2",
        target_version="1.0.0",
        target_digest="d1",
        target_approved_before=True,
        ever_ran=True,
    )
    for state in (State.PENDING, State.APPROVED, State.FAILING):
        assert next_state(state, Trigger.ROLL_BACK, facts) == Move(
            State.APPROVED, RunTrigger.APPROVAL
        )
    assert next_state(State.PAUSED, Trigger.ROLL_BACK, facts) == Move(State.PAUSED)
    with pytest.raises(TransitionRefused, match="restore"):
        next_state(State.REMOVED, Trigger.ROLL_BACK, facts)


def test_an_approval_tells_a_stale_page_from_a_digest_never_the_plugins() -> None:
    facts = Facts(current_digest="d2", kept_digests=frozenset({"d1", "d2"}))
    with pytest.raises(DigestChanged, match="changed since the page was shown") as stale:
        next_state(State.PENDING, Trigger.APPROVE, replace(facts, digest_shown="d1"))
    assert "d1" in str(stale.value) and "d2" in str(stale.value)
    with pytest.raises(DigestNotCurrent, match="not the current version's") as never:
        next_state(State.PENDING, Trigger.APPROVE, replace(facts, digest_shown="d9"))
    assert "d9" in str(never.value) and "d2" in str(never.value)
    assert "changed since" not in str(never.value)
