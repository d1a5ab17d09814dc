from datetime import timedelta

import pytest
from sqlalchemy import select

from almanac.platform import accounts
from almanac.platform.accounts import Membership
from tests.accounts.helpers import person


@pytest.fixture
def team(db, passwords, clock):
    """An organization owned by Ada, with an admin, a member and a guest."""
    people = {
        name: person(db, passwords, f"{name}@example.org", clock())
        for name in ("ada", "adm", "mem", "gue", "out")
    }
    org = accounts.create_organization(db, people["ada"], "Example", clock(), domain="Example.ORG.")
    for name, role in (("adm", "admin"), ("mem", "member"), ("gue", "guest")):
        accounts.add_member(db, org.id, people["ada"], f"{name}@example.org", role, clock())
    db.commit()
    return org, people


def ids(rows):
    return sorted(a.id for a in rows)


def test_the_creator_owns_the_organization(db, passwords, clock):
    ada = person(db, passwords, "ada@example.org", clock())
    org = accounts.create_organization(db, ada, "  Example  ", clock(), domain="Example.ORG.")
    db.commit()
    assert (org.name, org.domain) == ("Example", "example.org")
    assert [(o.id, role) for o, role in accounts.organizations_of(db, ada)] == [(org.id, "owner")]


def test_an_unverified_person_creates_no_organization(db, passwords, clock):
    eve = person(db, passwords, "eve@example.org", clock(), verified=False)
    with pytest.raises(accounts.EmailUnverified):
        accounts.create_organization(db, eve, "Example", clock())


def test_active_members_are_never_guests_or_former_members(db, clock, team):
    org, p = team
    assert ids(accounts.active_members(db, org.id)) == ids([p["ada"], p["adm"], p["mem"]])
    accounts.remove_member(db, org.id, p["adm"], p["mem"].id, clock.advance(timedelta(hours=1)))
    db.commit()
    assert ids(accounts.active_members(db, org.id)) == ids([p["ada"], p["adm"]])
    former = db.scalar(select(Membership).where(Membership.account_id == p["mem"].id))
    assert former.left_at == clock()
    with pytest.raises(accounts.NotFound):
        accounts.visible_organization(db, org.id, p["mem"])

    back = accounts.add_member(db, org.id, p["ada"], "mem@example.org", "member", clock())
    db.commit()
    assert back.id != former.id
    assert ids(accounts.active_members(db, org.id)) == ids([p["ada"], p["adm"], p["mem"]])


def test_only_owners_and_admins_manage_members(db, clock, team):
    org, p = team
    for who in ("mem", "gue"):
        with pytest.raises(accounts.Forbidden):
            accounts.add_member(db, org.id, p[who], "out@example.org", "member", clock())
        with pytest.raises(accounts.Forbidden):
            accounts.change_role(db, org.id, p[who], p["mem"].id, "admin")
    with pytest.raises(accounts.NotFound):
        accounts.add_member(db, org.id, p["out"], "out@example.org", "member", clock())
    with pytest.raises(accounts.NotFound):
        accounts.remove_member(db, org.id, p["out"], p["mem"].id, clock())
    row = accounts.add_member(db, org.id, p["adm"], "out@example.org", "guest", clock())
    assert row.role == "guest"


def test_only_owners_make_or_unmake_owners(db, clock, team):
    org, p = team
    with pytest.raises(accounts.Forbidden):
        accounts.change_role(db, org.id, p["adm"], p["mem"].id, "owner")
    with pytest.raises(accounts.Forbidden):
        accounts.change_role(db, org.id, p["adm"], p["ada"].id, "member")
    with pytest.raises(accounts.Forbidden):
        accounts.remove_member(db, org.id, p["adm"], p["ada"].id, clock())
    assert accounts.change_role(db, org.id, p["ada"], p["mem"].id, "owner").role == "owner"


def test_the_last_owner_stays(db, clock, team):
    org, p = team
    with pytest.raises(accounts.Conflict) as refused:
        accounts.change_role(db, org.id, p["ada"], p["ada"].id, "admin")
    assert refused.value.code == "LAST-OWNER"
    with pytest.raises(accounts.Conflict):
        accounts.remove_member(db, org.id, p["ada"], p["ada"].id, clock())
    accounts.change_role(db, org.id, p["ada"], p["adm"].id, "owner")
    accounts.remove_member(db, org.id, p["ada"], p["ada"].id, clock())
    db.commit()
    assert [role for _, role in accounts.organizations_of(db, p["ada"])] == []


def test_a_present_member_is_not_added_twice(db, clock, team):
    org, p = team
    with pytest.raises(accounts.Conflict) as refused:
        accounts.add_member(db, org.id, p["ada"], "MEM@example.org", "admin", clock())
    assert refused.value.code == "MEMBER-EXISTS"


def test_owners_and_admins_need_a_verified_address(db, passwords, clock, team):
    org, p = team
    person(db, passwords, "new@example.org", clock(), verified=False)
    with pytest.raises(accounts.EmailUnverified):
        accounts.add_member(db, org.id, p["ada"], "new@example.org", "admin", clock())
    row = accounts.add_member(db, org.id, p["ada"], "new@example.org", "member", clock())
    with pytest.raises(accounts.EmailUnverified):
        accounts.change_role(db, org.id, p["ada"], row.account_id, "owner")


def test_unknown_roles_and_people_are_refused(db, clock, team):
    org, p = team
    with pytest.raises(accounts.Invalid, match="role"):
        accounts.add_member(db, org.id, p["ada"], "out@example.org", "boss", clock())
    with pytest.raises(accounts.NotFound, match="sign up"):
        accounts.add_member(db, org.id, p["ada"], "nobody@example.org", "member", clock())
