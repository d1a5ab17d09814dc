"""The catalog's fingerprint, which `almanac up`'s watch reloads Dagster's code server on
(issue 30): it changes with what the definitions are built from (an approval, a new approved
version, pause, removal, takedown, retirement), and not with a run's outcome, which would
reload the code location after every failing run."""

from __future__ import annotations

from sqlalchemy import Engine

from almanac.code_server import CatalogWatch
from almanac.orchestration.catalog import catalog_fingerprint
from almanac.platform.store import moves
from almanac.platform.store.engine import write_transaction

from .conftest import Plug, series_of, value


def _fingerprint(engine: Engine) -> str:
    with engine.connect() as conn:
        return catalog_fingerprint(conn)


def test_the_fingerprint_follows_approvals_and_lifecycle_not_run_outcomes(engine: Engine) -> None:
    empty = _fingerprint(engine)
    plug = Plug(engine, [series_of("rate", "value")])
    plug.register("d1")
    assert _fingerprint(engine) == empty, "a pending plug-in is in no definitions"
    plug.approve()
    approved = _fingerprint(engine)
    assert approved != empty

    plug.fail()
    assert plug.state() == "failing"
    assert _fingerprint(engine) == approved
    plug.write([value("2026-11-02", 1.5)])
    assert plug.state() == "approved"
    assert _fingerprint(engine) == approved

    plug.register("d2", version="1.0.1")
    assert plug.state() == "pending", "a changed code stops the runs until it is approved"
    waiting = _fingerprint(engine)
    plug.approve()
    updated = _fingerprint(engine)
    assert len({approved, waiting, updated}) == 3

    before = updated
    for move in (moves.pause, moves.resume, moves.remove, moves.retire):
        with write_transaction(engine) as conn:
            move(conn, plug.id, by="host@example.org", now=plug.now())
        now = _fingerprint(engine)
        assert now != before, move.__name__
        before = now


def test_the_watch_reloads_once_per_change_and_again_after_a_failed_reload() -> None:
    prints = iter(["a", "a", "b", "b", "c", "c", "c"])
    reloads: list[str] = []
    failing = [True]

    def reload() -> None:
        if failing.pop() if failing else False:
            raise OSError("the code server is restarting")
        reloads.append("reload")

    watch = CatalogWatch(lambda: next(prints), reload, interval=3600)
    watch.start()  # "a", read before the first load
    assert watch.check() is False  # "a"
    assert watch.check() is False and reloads == []  # "b": the reload failed
    assert watch.check() is True and reloads == ["reload"]  # "b" again: reloaded now
    assert watch.check() is True and len(reloads) == 2  # "c"
    assert watch.check() is False and len(reloads) == 2  # "c"
    watch.stop()
