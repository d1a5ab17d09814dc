"""Naming and proving an organization's domain ("Authentication" 2; "Organization domain"), on
PostgreSQL and SQLite, with the real DNS server and HTTPS site on loopback."""

from __future__ import annotations

from datetime import timedelta

import pytest
from sqlalchemy import select
from sqlalchemy.orm import Session

from almanac.platform.accounts import Conflict, Refusal
from almanac.platform.publishing.identity import domains
from almanac.platform.publishing.identity.domain_names import claimable_domain
from almanac.platform.publishing.identity.proof import ProofResult, WayResult
from almanac.platform.publishing.models import CheckKind, DomainCheck, DomainState, ProofWay
from tests.accounts.conftest import SteppedClock
from tests.accounts.helpers import person
from tests.publishing.helpers import organization
from tests.publishing.servers import ProofWorld

REFUSED = [
    ("93.184.216.34", "DOMAIN-IP-ADDRESS"),
    ("[2606:2800:220:1::1]", "DOMAIN-IP-ADDRESS"),
    ("examplebank", "DOMAIN-NO-DOT"),
    ("localhost", "DOMAIN-NO-DOT"),
    ("example_bank.org", "DOMAIN-INVALID"),
    ("-bank.example.org", "DOMAIN-INVALID"),
    ("bank..org", "DOMAIN-INVALID"),
    ("example.123", "DOMAIN-INVALID"),
    ("co.uk", "DOMAIN-PUBLIC-SUFFIX"),
    ("github.io", "DOMAIN-PUBLIC-SUFFIX"),
    ("herokuapp.com", "DOMAIN-PUBLIC-SUFFIX"),
    ("org", "DOMAIN-NO-DOT"),
    ("com.au", "DOMAIN-PUBLIC-SUFFIX"),
    ("someone.github.io", "DOMAIN-SHARED-HOSTING"),
    ("my-app.herokuapp.com", "DOMAIN-SHARED-HOSTING"),
    ("a.b.blogspot.com", "DOMAIN-SHARED-HOSTING"),
]


@pytest.mark.parametrize(("domain", "code"), REFUSED)
def test_refused_domain_forms_name_their_rule(domain: str, code: str) -> None:
    with pytest.raises(Refusal) as refused:
        claimable_domain(domain)
    assert refused.value.code == code
    assert "domain" in refused.value.detail


@pytest.mark.parametrize(
    ("domain", "name"),
    [
        ("ExampleBank.ORG.", "examplebank.org"),
        ("examplebank.co.uk", "examplebank.co.uk"),
        ("rates.examplebank.org", "rates.examplebank.org"),
        ("bücher.example", "xn--bcher-kva.example"),
    ],
)
def test_own_domains_are_accepted_in_one_spelling(domain: str, name: str) -> None:
    assert claimable_domain(domain) == name


def test_naming_gives_a_token_and_naming_again_keeps_it(db: Session, passwords, clock) -> None:
    org = organization(db, passwords, clock())
    named = domains.name_domain(db, org.id, org.admin, "ExampleBank.org", clock())
    db.commit()
    assert named.state is DomainState.UNVERIFIED and not named.verified
    assert named.txt_name == "_almanac-verify.examplebank.org"
    assert named.txt_value == f"almanac-verify={named.token}" and len(named.token) >= 32
    assert named.file_url == "https://examplebank.org/.well-known/almanac-verify.txt"
    again = domains.name_domain(db, org.id, org.owner, "examplebank.org", clock())
    assert again.token == named.token
    other = domains.name_domain(db, org.id, org.owner, "rates.example.net", clock())
    db.commit()
    assert other.token != named.token and other.domain == "rates.example.net"
    assert domains.current_domain(db, org.id) == other


def test_only_owners_and_admins_with_verified_e_mail_name_and_check(
    db: Session, passwords, clock, world: ProofWorld
) -> None:
    org = organization(db, passwords, clock())
    with pytest.raises(Refusal) as refused:
        domains.name_domain(db, org.id, org.member, "examplebank.org", clock())
    assert refused.value.code == "FORBIDDEN"
    outsider = person(db, passwords, "outsider@example.org", clock())
    with pytest.raises(Refusal) as hidden:
        domains.name_domain(db, org.id, outsider, "examplebank.org", clock())
    assert hidden.value.code == "NOT-FOUND"
    domains.name_domain(db, org.id, org.owner, "examplebank.org", clock())
    db.commit()
    with pytest.raises(Refusal) as not_manager:
        domains.check_now(db, org.id, org.member, world.prover(), clock())
    assert not_manager.value.code == "FORBIDDEN"


def _check(db: Session, org, world: ProofWorld, clock: SteppedClock):
    found = domains.check_now(db, org.id, org.owner, world.prover(), clock())
    db.commit()
    return found


def test_check_now_by_dns_then_by_file_records_the_way(
    db: Session, passwords, clock, world: ProofWorld
) -> None:
    org = organization(db, passwords, clock())
    named = domains.name_domain(db, org.id, org.owner, "examplebank.org", clock())
    db.commit()

    first = _check(db, org, world, clock)
    assert first.state is DomainState.UNVERIFIED and first.last_check is not None
    assert not first.last_check.dns_proved and "NXDOMAIN" in first.last_check.dns_detail
    assert not first.last_check.file_proved and "404" in first.last_check.file_detail

    world.dns.publish("examplebank.org", named.txt_value)
    clock.advance(timedelta(minutes=5))
    proved = _check(db, org, world, clock)
    assert proved.state is DomainState.VERIFIED and proved.verified
    assert proved.proved_by is ProofWay.DNS and proved.verified_at == clock()
    assert proved.next_check_at == clock() + timedelta(days=30)
    assert proved.last_check is not None and proved.last_check.kind is CheckKind.MANUAL

    # The other way on another domain.
    other = domains.name_domain(db, org.id, org.owner, "rates.example.net", clock())
    db.commit()
    assert other.state is DomainState.UNVERIFIED  # a new claim starts over
    world.site.serve_token("rates.example.net", other.token)
    by_file = _check(db, org, world, clock)
    assert by_file.state is DomainState.VERIFIED and by_file.proved_by is ProofWay.FILE
    kept = db.scalars(select(DomainCheck).order_by(DomainCheck.id)).all()
    assert [(c.dns_proved, c.file_proved, c.state_after, c.by_account_id) for c in kept] == [
        (False, False, "unverified", org.owner.id),
        (True, False, "verified", org.owner.id),
        (False, True, "verified", org.owner.id),
    ]


def test_a_failed_check_now_takes_no_mark_away(
    db: Session, passwords, clock, world: ProofWorld
) -> None:
    org = organization(db, passwords, clock())
    named = domains.name_domain(db, org.id, org.owner, "examplebank.org", clock())
    db.commit()
    world.dns.publish("examplebank.org", named.txt_value)
    _check(db, org, world, clock)
    world.dns.remove("examplebank.org")
    after = _check(db, org, world, clock)
    assert after.state is DomainState.VERIFIED
    assert after.last_check is not None and not after.last_check.dns_proved


def test_a_domain_another_organization_verified_is_refused(
    db: Session, passwords, clock, world: ProofWorld
) -> None:
    first = organization(db, passwords, clock(), "first")
    second = organization(db, passwords, clock(), "second")
    # Both may name it while nobody has verified it ...
    mine = domains.name_domain(db, first.id, first.owner, "examplebank.org", clock())
    theirs = domains.name_domain(db, second.id, second.owner, "examplebank.org", clock())
    db.commit()
    world.dns.publish("examplebank.org", mine.txt_value, theirs.txt_value)
    assert _check(db, first, world, clock).verified
    # ... the second's proof is then refused, and so is naming it anew.
    with pytest.raises(Conflict) as proved_late:
        _check(db, second, world, clock)
    assert proved_late.value.code == "DOMAIN-TAKEN"
    db.rollback()
    third = organization(db, passwords, clock(), "third")
    with pytest.raises(Conflict) as named_late:
        domains.name_domain(db, third.id, third.owner, "ExampleBank.org", clock())
    assert named_late.value.code == "DOMAIN-TAKEN"
    db.rollback()
    assert domains.current_domain(db, second.id).state is DomainState.UNVERIFIED  # type: ignore[union-attr]


def _result(proved: bool) -> ProofResult:
    return ProofResult(
        dns=WayResult(ProofWay.DNS, proved, "dns"), file=WayResult(ProofWay.FILE, False, "file")
    )


@pytest.mark.parametrize(
    ("state", "proved", "kind", "days_into_grace", "after"),
    [
        (DomainState.UNVERIFIED, True, CheckKind.MANUAL, None, DomainState.VERIFIED),
        (DomainState.UNVERIFIED, False, CheckKind.MANUAL, None, DomainState.UNVERIFIED),
        (DomainState.VERIFIED, True, CheckKind.PERIODIC, None, DomainState.VERIFIED),
        (DomainState.VERIFIED, False, CheckKind.PERIODIC, None, DomainState.GRACE),
        (DomainState.VERIFIED, False, CheckKind.MANUAL, None, DomainState.VERIFIED),
        (DomainState.GRACE, True, CheckKind.PERIODIC, 3, DomainState.VERIFIED),
        (DomainState.GRACE, True, CheckKind.MANUAL, 3, DomainState.VERIFIED),
        (DomainState.GRACE, False, CheckKind.PERIODIC, 13, DomainState.GRACE),
        (DomainState.GRACE, False, CheckKind.PERIODIC, 14, DomainState.LAPSED),
        (DomainState.GRACE, False, CheckKind.MANUAL, 20, DomainState.GRACE),
        (DomainState.LAPSED, False, CheckKind.MANUAL, None, DomainState.LAPSED),
        (DomainState.LAPSED, True, CheckKind.MANUAL, None, DomainState.VERIFIED),
    ],
)
def test_the_organization_domain_state_table(clock, state, proved, kind, days_into_grace, after):
    now = clock()
    grace_ends = None
    if days_into_grace is not None:
        grace_ends = now - timedelta(days=days_into_grace) + domains.GRACE
    assert domains.next_domain_state(state, proved, kind, grace_ends, now) is after
