"""Snapshot windows: every row of "Stored record in a snapshot window", and Held."""

from __future__ import annotations

from datetime import timedelta

import pytest
from sqlalchemy import Engine

from almanac.platform.lifecycle import RunTrigger
from almanac.platform.store.engine import write_transaction
from almanac.platform.store.held import NothingHeld, decide_held
from almanac.platform.store.plugins import plugin_status
from almanac.platform.store.reading import held_details, last_runs, records_between
from almanac.platform.store.write import compare_batch

from .conftest import TODAY, Plug, event, series_of, value
from .test_write import history, record_state_of, stored


@pytest.fixture
def snap(engine: Engine) -> Plug:
    """A value series `snap` with window [today - 10d, today + 5d] and an event series `ev`
    with window [today - 10d, today + 30d]."""
    return Plug(
        engine,
        [series_of("snap", "value", ("10d", "5d")), series_of("ev", "event", ("10d", "30d"))],
    ).ready()


def day(offset: int) -> str:
    return (TODAY + timedelta(days=offset)).isoformat()


def test_omitted_record_in_window_counts_misses_then_is_withdrawn(snap: Plug) -> None:
    snap.write([value(day(-1), 1, "snap"), value(day(-2), 2, "snap")])
    keep = [value(day(-2), 2, "snap")]
    assert snap.write(keep).counts.missed == 1
    assert record_state_of(snap, "snap", TODAY - timedelta(days=1)).misses == 1
    snap.fail()  # a failed run counts nothing
    assert record_state_of(snap, "snap", TODAY - timedelta(days=1)).misses == 1
    assert snap.write(keep).counts.missed == 1
    third = snap.write(keep)
    assert (third.counts.missed, third.counts.withdrawn) == (1, 1)
    gone = record_state_of(snap, "snap", TODAY - timedelta(days=1))
    assert gone.withdrawn and [r.date for r in stored(snap)] == [TODAY - timedelta(days=2)]
    assert len(history(snap, "snap", TODAY - timedelta(days=1))) == 2  # history kept
    back = snap.write([value(day(-1), 1, "snap"), *keep])
    assert back.counts.returned == 1
    assert len(stored(snap)) == 2
    assert record_state_of(snap, "snap", TODAY - timedelta(days=1)).misses == 0


def _ended_at(plug: Plug, run_id: int):  # type: ignore[no-untyped-def]
    with plug.engine.connect() as conn:
        (run,) = [r for r in last_runs(conn, plug.id, limit=100) if r.id == run_id]
    return run.ended_at


@pytest.mark.parametrize("returned_rate", [1.25, 1])
def test_a_withdrawn_key_printed_again_returns_as_a_revision(
    snap: Plug, returned_rate: float
) -> None:
    """The returned record keeps its whole history: the content it had, the withdrawn state
    (with the run that withdrew it), each valid over [valid_from, valid_to) without a gap,
    whether it comes back with other content or the same."""
    d = TODAY - timedelta(days=1)
    first = snap.write([value(day(-1), 1, "snap")])
    for _ in range(2):
        snap.write([])
    withdrawing = snap.write([])
    assert withdrawing.counts.withdrawn == 1
    back = snap.write([value(day(-1), returned_rate, "snap")])
    assert (back.counts.returned, back.counts.revised, back.counts.new) == (1, 0, 0)

    written, withdrawn, current = history(snap, "snap", d)
    assert written.content["fields"] == {"rate": 1} and not written.withdrawn
    assert written.run_id == first.run_id and written.moved_to is None
    assert written.valid_from == _ended_at(snap, first.run_id)
    assert written.valid_to == _ended_at(snap, withdrawing.run_id)

    assert withdrawn.content["fields"] == {"rate": 1} and withdrawn.withdrawn
    assert withdrawn.run_id == withdrawing.run_id
    assert withdrawn.valid_from == written.valid_to
    assert withdrawn.valid_to == _ended_at(snap, back.run_id)

    assert current.content["fields"] == {"rate": returned_rate} and not current.withdrawn
    assert current.run_id == back.run_id and current.version_id == snap.version_id
    assert current.valid_from == withdrawn.valid_to and current.valid_to is None
    state = record_state_of(snap, "snap", d)
    assert (state.withdrawn, state.misses, state.run_id) == (False, 0, back.run_id)

    # "As of" reads agree: visible before the withdrawal, hidden while withdrawn, back after.
    with snap.engine.connect() as conn:

        def seen(moment):  # type: ignore[no-untyped-def]
            found = records_between(conn, [snap.id], d, d, as_of=moment)
            return [r.content["fields"]["rate"] for r in found]

        assert seen(written.valid_to - timedelta(seconds=1)) == [1]
        assert seen(withdrawn.valid_from) == []
        assert seen(current.valid_from) == [returned_rate]


def test_printed_again_the_count_starts_over(snap: Plug) -> None:
    snap.write([value(day(-1), 1, "snap")])
    snap.write([])
    snap.write([])
    assert record_state_of(snap, "snap", TODAY - timedelta(days=1)).misses == 2
    assert snap.write([value(day(-1), 1, "snap")]).counts.unchanged == 1
    assert record_state_of(snap, "snap", TODAY - timedelta(days=1)).misses == 0
    snap.write([])
    snap.write([])
    assert snap.write([value(day(-1), 1, "snap")]).counts.withdrawn == 0


def test_empty_batch_means_every_record_in_the_window_has_gone(snap: Plug) -> None:
    snap.write([value(day(-1), 1, "snap"), value(day(-30), 1, "snap")])
    for _ in range(3):
        result = snap.write([])
    assert result.counts.withdrawn == 1
    assert [r.date for r in stored(snap)] == [TODAY - timedelta(days=30)]  # outside the window


def test_moved_event_is_not_missing_on_its_old_date(snap: Plug) -> None:
    snap.write([event(day(3), "m")])
    snap.write([event(day(6), "m")])
    for _ in range(3):
        result = snap.write([event(day(6), "m")])
        assert result.counts.missed == 0
    rows = {r.date: r for r in stored(snap)}
    assert rows[TODAY + timedelta(days=3)].moved_to == TODAY + timedelta(days=6)


def test_backfill_run_never_counts_misses(snap: Plug) -> None:
    snap.write([value(day(-1), 1, "snap")])
    for _ in range(3):
        result = snap.write([], trigger=RunTrigger.BACKFILL)
        assert result.counts.missed == 0
    assert record_state_of(snap, "snap", TODAY - timedelta(days=1)).misses == 0
    assert len(stored(snap)) == 1


def test_more_than_ten_withdrawals_are_held(snap: Plug) -> None:
    # 12 records in the window; all omitted three times -> 12 > 10: held, nothing withdrawn.
    records = [value(day(i), i, "snap") for i in range(-10, 2)]
    snap.write(records)
    fresh = value(day(-20), 7, "snap")
    for _ in range(3):
        result = snap.write([fresh])
    assert result.counts.withdrawn == 0 and len(result.held) == 1
    assert len(stored(snap)) == 13  # the rest was written
    with snap.engine.connect() as conn:
        (detail,) = held_details(conn, snap.id)
        assert plugin_status(conn, snap.id).held
    assert detail.series == "snap" and detail.count == 12
    assert detail.first_dates[0] == day(-10) and len(detail.first_dates) == 10
    with write_transaction(snap.engine) as conn:
        assert decide_held(conn, snap.id, accept=True, by="host", now=snap.now()) == 12
    assert [r.date for r in stored(snap)] == [TODAY - timedelta(days=20)]
    with snap.engine.connect() as conn:
        assert held_details(conn, snap.id) == []
        assert not plugin_status(conn, snap.id).held


def test_ten_withdrawals_in_a_small_window_are_not_held(snap: Plug) -> None:
    snap.write([value(day(i), i, "snap") for i in range(-10, 0)])
    for _ in range(3):
        result = snap.write([])
    assert (result.counts.withdrawn, result.held) == (10, [])


def test_keep_them_starts_the_count_over(snap: Plug) -> None:
    snap.write([value(day(i), i, "snap") for i in range(-10, 2)])
    for _ in range(3):
        snap.write([])
    with write_transaction(snap.engine) as conn:
        assert decide_held(conn, snap.id, accept=False, by="host", now=snap.now()) == 0
    assert len(stored(snap)) == 12
    assert record_state_of(snap, "snap", TODAY).misses == 0
    with write_transaction(snap.engine) as conn, pytest.raises(NothingHeld):
        decide_held(conn, snap.id, accept=False, by="host", now=snap.now())


def test_more_than_one_percent_of_a_window_of_100_is_held(engine: Engine) -> None:
    # A window holding 150 records (one series, fifteen per day): 2 withdrawals = 1.3% -> held;
    # 1 withdrawal = 0.7% -> withdrawn.
    p = Plug(engine, [series_of("snap", "event", ("9d", "0d"))]).ready()
    batch = [event(day(-d), f"e{d}-{n}", "happened", "snap") for d in range(10) for n in range(15)]
    p.write(batch)
    for _ in range(3):
        result = p.write(batch[2:])
    assert result.counts.withdrawn == 0
    assert [(h.count, h.window_count) for h in result.held] == [(2, 150)]
    with write_transaction(engine) as conn:
        decide_held(conn, p.id, accept=False, by="host", now=p.now())
    for _ in range(3):
        result = p.write(batch[1:])
    assert (result.counts.withdrawn, result.held) == (1, [])


def test_the_comparison_hands_on_only_what_a_stage_must_see(snap: Plug) -> None:
    """`compare_batch` (the write's and the record diff's): on PostgreSQL a record printed again
    unchanged, plain and outside every window is left in the database; the window's records
    (it counts them), the changed one and the new key come back. On SQLite every stored record
    comes back."""
    far = value(day(-40), 7, "snap")  # outside the window [today - 10d, today + 5d]
    near = value(day(-1), 1, "snap")
    changed = value(day(-30), 3, "snap")
    snap.write([far, near, changed])
    batch = [far, near, value(day(-30), 4, "snap"), value(day(-50), 5, "snap")]
    checked = [{**r, "fields": dict(r["fields"])} for r in batch]
    with snap.engine.begin() as conn:
        compared = compare_batch(conn, snap.id, checked, snap.manifest, TODAY)  # type: ignore[arg-type]
        returned = sorted(str(r[2]) for r in compared.stored)
        printed = list(compared.printed)
    assert len(printed) == 4
    if snap.engine.dialect.name == "postgresql":
        assert returned == sorted([day(-1), day(-30)])
        assert compared.new_keys == {("snap", TODAY - timedelta(days=50), "")}
    else:
        assert returned == sorted([day(-40), day(-1), day(-30)])
        assert compared.new_keys is None
    counts = snap.write(batch).counts
    assert (counts.new, counts.revised, counts.unchanged) == (1, 1, 2)
