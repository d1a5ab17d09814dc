"""The periodic re-check of verified domains through real Dagster ticks with a frozen clock
("Organization domain"; "Limits": every 30 days, 14-day grace; "Events" 1): the 30-day re-check,
the grace and its mail to owners and admins over real SMTP, the proof restored, and the lapse
after 14 days. The DNS server, the HTTPS site, the SMTP server and PostgreSQL are real."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import dagster as dg
import pytest
from sqlalchemy import Engine, select
from sqlalchemy.orm import Session

from almanac.definitions import build_definitions
from almanac.platform.publishing.identity import domains
from almanac.platform.publishing.models import CheckKind, DomainCheck, DomainState, ProofWay
from almanac.platform.publishing.review.gate import submission_gate
from almanac.sandbox.smtp import MailSettings, SmtpMailer
from almanac.sensors.domains import GROUP, RECHECK_ASSET, RECHECK_JOB, RECHECK_SENSOR
from almanac.settings import Settings
from tests.accounts.conftest import SteppedClock
from tests.api.test_mail import Inbox
from tests.orchestration.conftest import fresh_postgres_engine
from tests.orchestration.harness import FrozenClock
from tests.publishing.dagster_ticks import Ticker
from tests.publishing.helpers import Org, organization
from tests.publishing.servers import ProofWorld

T0 = datetime(2026, 11, 2, 12, 0, tzinfo=UTC)
DOMAIN = "lapsing.example"
DAY = timedelta(days=1)


@pytest.fixture
def engine() -> Iterator[Engine]:
    with fresh_postgres_engine("publishing") as made:
        yield made


def _status(engine: Engine, org: Org) -> domains.DomainStatus:
    with Session(engine) as db:
        found = domains.current_domain(db, org.id)
    assert found is not None
    return found


def _periodic_checks(engine: Engine) -> list[tuple[bool, bool, str]]:
    with Session(engine) as db:
        rows = db.scalars(
            select(DomainCheck)
            .where(DomainCheck.kind == CheckKind.PERIODIC)
            .order_by(DomainCheck.id)
        )
        return [(r.dns_proved, r.file_proved, r.state_after) for r in rows]


def _mail(inbox: Inbox) -> list[tuple[str, str]]:
    return [(to[0], str(message["Subject"])) for to, message in inbox.messages]


def test_the_rechecks_are_in_their_own_group_in_the_service_definitions(
    engine: Engine, tmp_path: Path
) -> None:
    defs = build_definitions(
        settings=Settings(tmp_path, 0, 0, str(engine.url), "https://almanac.test"),
        engine=engine,
        catalog=[],
    )
    repository = defs.get_repository_def()
    assert repository.asset_graph.get(RECHECK_ASSET).group_name == GROUP
    assert RECHECK_JOB in repository.job_names
    assert RECHECK_SENSOR in {s.name for s in repository.sensor_defs}


def test_recheck_grace_restore_and_lapse_through_dagster_ticks(
    engine: Engine, passwords, world: ProofWorld, smtp: tuple[Inbox, int], tmp_path: Path
) -> None:
    inbox, port = smtp
    clock = FrozenClock(T0)
    mailer = SmtpMailer(MailSettings(smtp_host="127.0.0.1", smtp_port=port))
    prover = world.prover()

    with Session(engine, expire_on_commit=False) as db:
        org = organization(db, passwords, T0, "lapse")
        named = domains.name_domain(db, org.id, org.owner, DOMAIN, T0)
        db.commit()
        world.dns.publish(DOMAIN, named.txt_value)
        assert domains.check_now(db, org.id, org.owner, prover, T0).verified
        db.commit()

    def build() -> dg.Definitions:
        return build_definitions(
            settings=Settings(tmp_path, 0, 0, str(engine.url), "https://almanac.test"),
            engine=engine,
            catalog=[],
            clock=clock,
            domain_prover=lambda: prover,
            mailer=lambda: mailer,
        )

    with Ticker.open(tmp_path, clock, build) as dagster:
        # Nothing is due before 30 days: the sensor asks for no run.
        assert dagster.step(T0 + timedelta(hours=1)) == []
        assert dagster.step(T0 + 29 * DAY) == []
        assert "no domain is due" in dagster.sensor_skip_reasons(RECHECK_SENSOR)[0]

        # Day 30: the re-check runs and the proof stands.
        [run] = dagster.step(T0 + 30 * DAY)
        assert run.status == dg.DagsterRunStatus.SUCCESS
        assert run.job_name == RECHECK_JOB
        status = _status(engine, org)
        assert status.state is DomainState.VERIFIED
        assert status.next_check_at == T0 + 60 * DAY
        assert _periodic_checks(engine) == [(True, False, "verified")]
        assert inbox.messages == []

        # Day 60, the record gone: the grace begins and the owners and admins are told.
        world.dns.remove(DOMAIN)
        [run] = dagster.step(T0 + 60 * DAY)
        assert run.status == dg.DagsterRunStatus.SUCCESS
        status = _status(engine, org)
        assert status.state is DomainState.GRACE and status.verified
        assert status.grace_ends_at == T0 + 74 * DAY
        inbox.wait(2)
        mailed = _mail(inbox)
        assert sorted(to for to, _ in mailed) == sorted([org.owner.email, org.admin.email])
        assert all("14 days" in subject for _, subject in mailed)
        [_, message] = inbox.messages[0]
        body = message.get_payload(decode=True).decode()
        assert "_almanac-verify.lapsing.example" in body and named.txt_value in body
        assert f"{T0 + 74 * DAY:%Y-%m-%d}" in body

        # The grace is re-checked each day, and told only once.
        assert dagster.step(T0 + 60 * DAY + timedelta(hours=2)) == []
        [run] = dagster.step(T0 + 61 * DAY)
        assert _status(engine, org).state is DomainState.GRACE
        assert len(inbox.messages) == 2

        # Day 62, the proof restored (the file this time): verified again.
        world.site.serve_token(DOMAIN, named.token)
        [run] = dagster.step(T0 + 62 * DAY)
        status = _status(engine, org)
        assert status.state is DomainState.VERIFIED and status.proved_by is ProofWay.FILE
        assert status.grace_ends_at is None and status.next_check_at == T0 + 92 * DAY

        # Day 92, gone again: a new grace; day 106, 14 days on, it lapses.
        world.site.remove(DOMAIN)
        [run] = dagster.step(T0 + 92 * DAY)
        assert _status(engine, org).state is DomainState.GRACE
        inbox.wait(4)
        [run] = dagster.step(T0 + 99 * DAY)
        assert _status(engine, org).state is DomainState.GRACE
        [run] = dagster.step(T0 + 106 * DAY - timedelta(hours=1))
        assert _status(engine, org).state is DomainState.GRACE
        [run] = dagster.step(T0 + 106 * DAY)
        assert run.status == dg.DagsterRunStatus.SUCCESS
        status = _status(engine, org)
        assert status.state is DomainState.LAPSED and not status.verified
        assert status.lapsed_at == T0 + 106 * DAY and status.next_check_at is None
        inbox.wait(6)
        lapse_mail = _mail(inbox)[4:]
        assert sorted(to for to, _ in lapse_mail) == sorted([org.owner.email, org.admin.email])
        assert all("lapsed" in subject for _, subject in lapse_mail)
        assert org.member.email not in {to for to, _ in _mail(inbox)}

        # A lapsed domain is not re-checked by itself: it is verified again by hand.
        assert dagster.step(T0 + 140 * DAY) == []
        with Session(engine) as db:
            gate = submission_gate(db, org.id, T0 + 140 * DAY)
        assert "DOMAIN-LAPSED" in [p.code for p in gate.reasons]

    with Session(engine, expire_on_commit=False) as db:
        world.dns.publish(DOMAIN, named.txt_value)
        again = domains.check_now(db, org.id, org.admin, prover, T0 + 141 * DAY)
        db.commit()
    assert again.state is DomainState.VERIFIED
    assert again.next_check_at == T0 + 171 * DAY
    assert _periodic_checks(engine) == [
        (True, False, "verified"),
        (False, False, "grace"),
        (False, False, "grace"),
        (False, True, "verified"),
        (False, False, "grace"),
        (False, False, "grace"),
        (False, False, "grace"),
        (False, False, "lapsed"),
    ]


def test_a_recheck_failing_by_time_out_starts_the_grace_without_a_crash(
    engine: Engine, passwords, world: ProofWorld, tmp_path: Path
) -> None:
    from tests.publishing.servers import NO_ANSWER

    stepped = SteppedClock(T0)
    prover = world.prover(dns_timeout=0.5)
    with Session(engine, expire_on_commit=False) as db:
        org = organization(db, passwords, T0, "slow")
        named = domains.name_domain(db, org.id, org.owner, DOMAIN, T0)
        db.commit()
        world.dns.publish(DOMAIN, named.txt_value)
        domains.check_now(db, org.id, org.owner, prover, T0)
        db.commit()
    world.dns.behave(DOMAIN, NO_ANSWER)
    from sqlalchemy.orm import sessionmaker

    from almanac.platform.mail import OutboxMailer

    stepped.advance(30 * DAY)
    summary = domains.run_rechecks(
        sessionmaker(engine, expire_on_commit=False), prover, OutboxMailer(engine), stepped()
    )
    assert (summary.checked, summary.grace_started, summary.failed) == (1, 1, 0)
    status = _status(engine, org)
    assert status.state is DomainState.GRACE
    assert status.last_check is not None and "no DNS answer" in status.last_check.dns_detail
