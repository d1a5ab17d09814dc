"""The plug-ins a reader's days and feeds draw: only those it may show are read, whatever else
it may read (a store of thousands of public plug-ins; issue 33)."""

from __future__ import annotations

from sqlalchemy import Engine
from sqlalchemy.orm import Session

from almanac.platform import accounts
from almanac.platform.accounts import Argon2Parameters, Passwords
from almanac.platform.audience import set_shown, shown_plugins, visible_plugins
from almanac.platform.audience.preferences import may_show
from tests.audience.helpers import T0, example_plugin, fresh_id


def test_a_reader_reads_only_the_plugins_it_may_show(engine: Engine) -> None:
    on, off, never = (example_plugin(engine, "uk-bank-holidays", T0) for _ in range(3))
    with Session(engine, expire_on_commit=False) as db:
        made = accounts.sign_up(
            db, f"{fresh_id()}@example.org", "correct horse battery",
            Passwords(Argon2Parameters.fast()), T0,
        )  # fmt: skip
        accounts.verify_email(db, made.verification_token, T0)
        reader = made.account
        set_shown(
            db, reader, {f"plugins.{on.id}.shown": True, f"plugins.{off.id}.shown": False}, T0
        )
        db.commit()
        readable = {p.id for p in visible_plugins(db, reader)}
        assert {on.id, off.id, never.id} <= readable
        assert on.id in may_show(db, reader)
        assert not {off.id, never.id} & may_show(db, reader)
        assert [p.id for p in visible_plugins(db, reader, among=may_show(db, reader))] == [on.id]
        assert visible_plugins(db, reader, among=set()) == []
        assert [p.id for p in shown_plugins(db, reader)] == [on.id]
