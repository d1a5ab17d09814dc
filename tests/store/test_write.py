"""The write: every row of "Stored-record behaviour" and "Event record", failures, backfill
runs, refusals, and a crash that leaves nothing partial."""

from __future__ import annotations

from datetime import date

import pytest

from almanac.platform.lifecycle import RunTrigger
from almanac.platform.store import moves
from almanac.platform.store.engine import write_transaction
from almanac.platform.store.plugins import plugin_status
from almanac.platform.store.reading import (
    find_record,
    last_runs,
    record_state,
    records_between,
    revision_history,
    series_state,
)
from almanac.platform.store.run_requests import open_run_requests
from almanac.platform.store.write import WriteRefused, short_reason

from .conftest import TODAY, Plug, event, item, value

D1, D2 = date(2026, 11, 1), date(2026, 11, 2)


def stored(plug: Plug, first: date = date(2026, 1, 1), last: date = date(2027, 12, 31)):
    with plug.engine.connect() as conn:
        return records_between(conn, [plug.id], first, last)


def history(plug: Plug, series: str, day: date, disc: str = ""):
    with plug.engine.connect() as conn:
        return revision_history(conn, find_record(conn, plug.id, series, day, disc))


def test_new_key_is_a_new_record(plug: Plug) -> None:
    result = plug.write([value("2026-11-01", 1.5), item("2026-11-01", "a")])
    assert result.counts.new == 2
    rows = stored(plug)
    assert [(r.series, r.date, r.content) for r in rows] == [
        ("news", D1, {"title": "t", "url": "https://example.org/a"}),
        ("rate", D1, {"fields": {"rate": 1.5}, "revises": None}),
    ]
    assert {r.run_id for r in rows} == {result.run_id}
    assert {(r.version_id, r.digest) for r in rows} == {(plug.version_id, "d1")}


def test_same_content_changes_nothing(plug: Plug) -> None:
    first = plug.write([value("2026-11-01", 1.5)])
    second = plug.write([value("2026-11-01", 1.50)])
    assert (second.counts.new, second.counts.revised, second.counts.unchanged) == (0, 0, 1)
    (row,) = stored(plug)
    assert row.run_id == first.run_id
    assert len(history(plug, "rate", D1)) == 1


def test_integral_float_is_the_same_content(plug: Plug) -> None:
    plug.write([value("2026-11-01", 2)])
    assert plug.write([value("2026-11-01", 2.0)]).counts.unchanged == 1


def test_different_content_is_a_revision_with_old_content_kept(plug: Plug) -> None:
    first = plug.write([value("2026-11-01", 1.5)])
    second = plug.write([value("2026-11-01", 1.6)])
    assert second.counts.revised == 1
    (row,) = stored(plug)
    assert row.content["fields"] == {"rate": 1.6} and row.run_id == second.run_id
    old, new = history(plug, "rate", D1)
    assert old.content["fields"] == {"rate": 1.5} and old.run_id == first.run_id
    assert old.valid_to == new.valid_from and new.valid_to is None


def test_as_of_reads_records_as_they_stood(plug: Plug) -> None:
    plug.write([value("2026-11-01", 1.5)])
    between = plug.now()
    plug.write([value("2026-11-01", 1.6), value("2026-11-02", 9)])
    with plug.engine.connect() as conn:
        then = records_between(conn, [plug.id], D1, D2, as_of=between)
        before = records_between(conn, [plug.id], D1, D2, as_of=between.replace(year=2020))
    assert [(r.date, r.content["fields"]["rate"]) for r in then] == [(D1, 1.5)]
    assert before == []
    assert [r.content["fields"]["rate"] for r in stored(plug)] == [1.6, 9]


def test_revises_and_period_are_content_and_key(engine) -> None:
    from .conftest import series_of

    pub = series_of("cpi", "value")
    pub = type(pub)(**{**{f: getattr(pub, f) for f in pub.__slots__}, "dates": "publication"})
    p = Plug(engine, [pub]).ready()
    p.write([value("2026-11-01", 1, series="cpi", period="2026-10")])
    result = p.write(
        [
            value("2026-11-01", 1, series="cpi", period="2026-10", revises="2026-10-01"),
            value("2026-11-01", 2, series="cpi", period="2026-09"),
        ]
    )
    assert (result.counts.revised, result.counts.new) == (1, 1)


def test_event_moved_marks_old_date(plug: Plug) -> None:
    plug.write([event("2026-11-05", "meet", title="Meeting")], today=TODAY)
    result = plug.write([event("2026-11-09", "meet", title="Meeting")])
    assert (result.counts.moved, result.counts.new) == (1, 1)
    rows = {r.date: r for r in stored(plug)}
    assert rows[date(2026, 11, 5)].moved_to == date(2026, 11, 9)
    assert rows[date(2026, 11, 9)].moved_to is None
    # Printing the moved state again changes nothing more.
    assert plug.write([event("2026-11-09", "meet", title="Meeting")]).counts.moved == 0
    # Moving back: the old date carries the event again (a revision), the other is marked.
    back = plug.write([event("2026-11-05", "meet", title="Meeting")])
    assert (back.counts.revised, back.counts.moved) == (1, 1)
    rows = {r.date: r for r in stored(plug)}
    assert rows[date(2026, 11, 5)].moved_to is None
    assert rows[date(2026, 11, 9)].moved_to == date(2026, 11, 5)


@pytest.mark.parametrize("state", ["happened", "cancelled"])
def test_event_scheduled_then_happened_or_cancelled(plug: Plug, state: str) -> None:
    plug.write([event("2026-11-02", "vote", title="Vote")])
    result = plug.write([event("2026-11-02", "vote", state=state, title="Vote", value=4.5)])
    assert result.counts.revised == 1
    (row,) = stored(plug)
    assert row.content == {"state": state, "value": 4.5, "title": "Vote"}


def test_item_id_on_another_date_is_another_record(plug: Plug) -> None:
    plug.write([item("2026-11-01", "a")])
    result = plug.write([item("2026-11-02", "a")])
    assert (result.counts.new, result.counts.moved) == (1, 0)
    assert [r.moved_to for r in stored(plug)] == [None, None]


def test_empty_batch_is_a_success(plug: Plug) -> None:
    plug.write([value("2026-11-01", 1)])
    result = plug.write([])
    assert result.counts.new == 0 and result.state == "approved"
    assert len(stored(plug)) == 1  # no window: nothing counted missing


def test_failed_run_writes_only_its_row_and_moves_to_failing(plug: Plug) -> None:
    plug.write([value("2026-11-01", 1)])
    run_id = plug.fail("x" * 400)
    assert plug.state() == "failing"
    with plug.engine.connect() as conn:
        runs = last_runs(conn, plug.id)
        retries = open_run_requests(conn, plug.now().replace(year=2027))
    assert runs[0].id == run_id and runs[0].outcome == "failure"
    assert len(runs[0].reason) == 300
    assert [r.trigger for r in retries][-1] == "retry"
    assert len(stored(plug)) == 1
    assert plug.write([value("2026-11-01", 1)]).state == "approved"


def test_reason_is_kept_whole_when_short() -> None:
    assert short_reason("could not download rates: status 404") == (
        "could not download rates: status 404"
    )


def test_last_five_runs_with_counts(plug: Plug) -> None:
    for n in range(7):
        plug.write([value("2026-11-01", n)])
    with plug.engine.connect() as conn:
        runs = last_runs(conn, plug.id)
    assert len(runs) == 5
    assert runs[0].id > runs[-1].id
    assert runs[0].revised == 1 and runs[0].trigger == "schedule"


def test_series_state_for_the_run_context(plug: Plug) -> None:
    plug.write([value("2026-10-30", 1), value("2026-11-02", 2), event("2026-11-20", "x")])
    with plug.engine.connect() as conn:
        state = series_state(conn, plug.id, ["rate", "ev", "news"], TODAY)
    assert state["rate"].as_context() == {"last": "2026-11-02", "count": 2}
    assert state["ev"].as_context() == {"last": None, "count": 1}
    assert state["news"].as_context() == {"last": None, "count": 0}


def test_backfill_run_adds_and_revises_but_keeps_state(plug: Plug) -> None:
    plug.write([value("2026-11-01", 1)])
    plug.fail()
    result = plug.write(
        [value("2026-11-01", 2), value("2026-10-01", 3)],
        today=date(2026, 10, 1),
        trigger=RunTrigger.BACKFILL,
    )
    assert (result.counts.revised, result.counts.new) == (1, 1)
    assert plug.state() == "failing"
    plug.fail(trigger=RunTrigger.BACKFILL)
    plug.write([value("2026-11-01", 2)])
    plug.fail(trigger=RunTrigger.BACKFILL)
    assert plug.state() == "approved"


def test_taken_down_plugin_write_is_refused(plug: Plug) -> None:
    with write_transaction(plug.engine) as conn:
        moves.set_taken_down(conn, plug.id, True, by="host", now=plug.now())
    with pytest.raises(WriteRefused, match="taken down"):
        plug.write([value("2026-11-01", 1)])
    with plug.engine.connect() as conn:
        assert last_runs(conn, plug.id) == []


def test_takedown_hides_records_and_keeps_them(plug: Plug) -> None:
    plug.write([value("2026-11-01", 1)])
    with write_transaction(plug.engine) as conn:
        moves.set_taken_down(conn, plug.id, True, by="host", now=plug.now())
    assert stored(plug) == []
    with write_transaction(plug.engine) as conn:
        moves.set_taken_down(conn, plug.id, False, by="host", now=plug.now())
    assert len(stored(plug)) == 1


def test_only_the_approved_version_writes(plug: Plug) -> None:
    plug.register("d2", "1.0.1")
    with plug.engine.connect() as conn:
        new_version = plugin_status(conn, plug.id).current_version_id
    plug.version_id, approved = new_version, plug.version_id
    with pytest.raises(WriteRefused, match="not the approved version"):
        plug.write([value("2026-11-01", 1)])
    plug.version_id = approved
    assert plug.write([value("2026-11-01", 1)]).counts.new == 1


@pytest.mark.parametrize("step", ["locked", "run", "read", "inserted", "revisions", "updated"])
def test_a_crash_between_statements_leaves_nothing(plug: Plug, step: str) -> None:
    plug.write([value("2026-11-01", 1), event("2026-11-05", "m")])
    before = stored(plug)

    def crash(at: str) -> None:
        if at == step:
            raise RuntimeError(f"crash after {at}")

    with pytest.raises(RuntimeError, match="crash"):
        plug.write(
            [value("2026-11-01", 2), value("2026-11-02", 3), event("2026-11-06", "m")],
            fault=crash,
        )
    assert stored(plug) == before
    with plug.engine.connect() as conn:
        assert len(last_runs(conn, plug.id)) == 1
        assert len(history(plug, "rate", D1)) == 1
    assert record_state_of(plug, "rate", D1).misses == 0


def record_state_of(plug: Plug, series: str, day: date, disc: str = ""):
    with plug.engine.connect() as conn:
        return record_state(conn, find_record(conn, plug.id, series, day, disc))


def test_backfill_run_marks_no_move(plug: Plug) -> None:
    plug.write([event("2026-11-09", "meet")])
    result = plug.write([event("2026-11-05", "meet")], trigger=RunTrigger.BACKFILL)
    assert (result.counts.new, result.counts.moved) == (1, 0)
    assert [r.moved_to for r in stored(plug)] == [None, None]


def test_two_writes_of_one_plugin_never_interleave(plug: Plug) -> None:
    import threading

    order: list[str] = []
    inside, release = threading.Event(), threading.Event()

    def first_hook(step: str) -> None:
        order.append(f"A {step}")
        if step == "read":
            inside.set()
            release.wait(30)

    def second_hook(step: str) -> None:
        order.append(f"B {step}")

    first = threading.Thread(
        target=plug.write, args=([value("2026-11-01", 1)],), kwargs={"fault": first_hook}
    )
    first.start()
    assert inside.wait(30)
    second = threading.Thread(
        target=plug.write, args=([value("2026-11-01", 2)],), kwargs={"fault": second_hook}
    )
    second.start()
    second.join(0.5)
    assert not any(step.startswith("B") for step in order)  # waiting for the plug-in lock
    release.set()
    first.join(30)
    second.join(30)
    assert order.index("A state") < order.index("B locked")
    assert [r.content["fields"]["rate"] for r in stored(plug)] == [2]
