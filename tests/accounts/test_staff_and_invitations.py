from datetime import timedelta

import pytest
from sqlalchemy import select

from almanac.platform import accounts
from almanac.platform.accounts import InvitationRequest, StaffRole
from tests.accounts.helpers import person


def test_staff_roles_are_granted_once_and_revoked(db, passwords, clock):
    ada = person(db, passwords, "ada@example.org", clock())
    first = accounts.grant_staff_role(db, "ADA@example.org", "operator", clock())
    again = accounts.grant_staff_role(db, "ada@example.org", "operator", clock(), granted_by=ada)
    db.commit()
    assert first.id == again.id and first.granted_by is None
    assert accounts.staff_roles(db, ada) == {StaffRole.OPERATOR}
    assert not accounts.has_staff_role(db, ada, StaffRole.REVIEWER)
    accounts.revoke_staff_role(db, ada.id, "operator", clock())
    db.commit()
    assert accounts.staff_roles(db, ada) == set()
    with pytest.raises(accounts.NotFound):
        accounts.revoke_staff_role(db, ada.id, "operator", clock())
    with pytest.raises(accounts.Invalid):
        accounts.grant_staff_role(db, "ada@example.org", "king", clock())
    with pytest.raises(accounts.NotFound):
        accounts.grant_staff_role(db, "nobody@example.org", "reviewer", clock())


def ask(db, clock, email="dev@example.org", domain="example.org"):
    row = accounts.request_invitation(
        db, email=email, organization="Example", domain=domain, note="rates", now=clock()
    )
    db.commit()
    return row


def test_one_request_per_domain_is_open(db, clock):
    first = ask(db, clock, domain="Example.ORG.")
    second = ask(db, clock, email="other@example.org", domain="example.org")
    assert (first.domain, first.status, second.status) == ("example.org", "open", "repeat")
    assert [r.id for r in accounts.open_requests(db)] == [first.id]
    assert ask(db, clock, domain="another.example").status == "open"


def test_at_most_5_requests_a_day_per_address(db, clock):
    for n in range(5):
        ask(db, clock, email="Dev@Example.org" if n % 2 else "dev@example.org", domain=f"d{n}.org")
        clock.advance(timedelta(hours=1))
    with pytest.raises(accounts.RateLimited):
        ask(db, clock, domain="d9.org")
    assert ask(db, clock, email="other@example.org", domain="d9.org").status == "open"
    clock.advance(timedelta(hours=20, seconds=1))  # the first request is now a day old
    assert ask(db, clock, domain="d10.org").status == "open"
    assert db.scalar(select(InvitationRequest).where(InvitationRequest.domain == "d9.org"))


@pytest.mark.parametrize(
    ("domain", "reason"),
    [
        ("192.0.2.1", "IP"),
        ("[::1]", "IP"),
        ("localhost", "dot"),
        ("exa mple.org", "dot"),
        ("-bad-.org", "dot"),
        ("example.123", "number"),
    ],
)
def test_a_request_needs_a_domain_name(db, clock, domain, reason):
    with pytest.raises(accounts.Invalid, match=reason):
        ask(db, clock, domain=domain)


def test_international_domains_are_kept_in_ascii(db, clock):
    assert ask(db, clock, domain="Bücher.example").domain == "xn--bcher-kva.example"
