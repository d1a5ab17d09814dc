import pytest

from tests.api.conftest import assert_problem


@pytest.fixture
def team(api):
    """Ada owns Example; Adm is admin, Mem member, Gue guest; Out is signed in, not a member."""
    clients = {n: api.signed_in(f"{n}@example.org") for n in ("ada", "adm", "mem", "gue", "out")}
    org = clients["ada"].post(
        "/api/v1/organizations", json={"name": "Example", "domain": "example.org"}
    )
    assert org.status_code == 201 and org.json()["role"] == "owner"
    org_id = org.json()["id"]
    ids = {}
    for name, role in (("adm", "admin"), ("mem", "member"), ("gue", "guest")):
        added = clients["ada"].post(
            f"/api/v1/organizations/{org_id}/members",
            json={"email": f"{name}@example.org", "role": role},
        )
        assert added.status_code == 201, added.text
        ids[name] = added.json()["account_id"]
    ids["ada"] = clients["ada"].get("/api/v1/auth/me").json()["id"]
    ids["out"] = clients["out"].get("/api/v1/auth/me").json()["id"]
    return org_id, clients, ids


def roles(client, org_id):
    response = client.get(f"/api/v1/organizations/{org_id}/members")
    assert response.status_code == 200
    return {m["email"]: m["role"] for m in response.json()}


def test_members_see_the_organization_and_its_members(team):
    org_id, c, _ = team
    assert roles(c["gue"], org_id) == {
        "ada@example.org": "owner",
        "adm@example.org": "admin",
        "mem@example.org": "member",
        "gue@example.org": "guest",
    }
    assert c["mem"].get(f"/api/v1/organizations/{org_id}").json()["role"] == "member"
    assert [o["id"] for o in c["gue"].get("/api/v1/organizations").json()] == [org_id]
    me = c["adm"].get("/api/v1/auth/me").json()
    assert me["organizations"] == [{"id": org_id, "name": "Example", "role": "admin"}]


def test_an_outsider_is_told_the_organization_does_not_exist(team):
    org_id, c, ids = team
    assert_problem(c["out"].get(f"/api/v1/organizations/{org_id}"), 404, "NOT-FOUND")
    assert_problem(c["out"].get(f"/api/v1/organizations/{org_id}/members"), 404, "NOT-FOUND")
    add = c["out"].post(
        f"/api/v1/organizations/{org_id}/members",
        json={"email": "out@example.org", "role": "owner"},
    )
    assert_problem(add, 404, "NOT-FOUND")
    assert_problem(
        c["out"].delete(f"/api/v1/organizations/{org_id}/members/{ids['mem']}"), 404, "NOT-FOUND"
    )
    assert c["out"].get("/api/v1/organizations").json() == []


def test_members_and_guests_may_not_manage(team):
    org_id, c, ids = team
    for who in ("mem", "gue"):
        add = c[who].post(
            f"/api/v1/organizations/{org_id}/members",
            json={"email": "out@example.org", "role": "member"},
        )
        assert_problem(add, 403, "FORBIDDEN")
        change = c[who].patch(
            f"/api/v1/organizations/{org_id}/members/{ids['mem']}", json={"role": "admin"}
        )
        assert_problem(change, 403, "FORBIDDEN")
    assert_problem(
        c["mem"].delete(f"/api/v1/organizations/{org_id}/members/{ids['gue']}"), 403, "FORBIDDEN"
    )
    assert "out@example.org" not in roles(c["ada"], org_id)


def test_admins_manage_but_only_owners_touch_owners(team):
    org_id, c, ids = team
    adm = c["adm"]
    made = adm.patch(f"/api/v1/organizations/{org_id}/members/{ids['mem']}", json={"role": "guest"})
    assert made.status_code == 200 and made.json()["role"] == "guest"
    assert_problem(
        adm.patch(f"/api/v1/organizations/{org_id}/members/{ids['mem']}", json={"role": "owner"}),
        403,
        "FORBIDDEN",
    )
    assert_problem(
        adm.delete(f"/api/v1/organizations/{org_id}/members/{ids['ada']}"), 403, "FORBIDDEN"
    )
    promoted = c["ada"].patch(
        f"/api/v1/organizations/{org_id}/members/{ids['adm']}", json={"role": "owner"}
    )
    assert promoted.json()["role"] == "owner"


def test_removal_keeps_the_former_member_out(team):
    org_id, c, ids = team
    assert (
        c["adm"].delete(f"/api/v1/organizations/{org_id}/members/{ids['mem']}").status_code == 204
    )
    assert "mem@example.org" not in roles(c["ada"], org_id)
    assert_problem(c["mem"].get(f"/api/v1/organizations/{org_id}"), 404, "NOT-FOUND")
    assert (
        c["gue"].delete(f"/api/v1/organizations/{org_id}/members/{ids['gue']}").status_code == 204
    )
    assert set(roles(c["ada"], org_id)) == {"ada@example.org", "adm@example.org"}


def test_the_last_owner_stays_and_members_are_not_added_twice(team):
    org_id, c, ids = team
    assert_problem(
        c["ada"].delete(f"/api/v1/organizations/{org_id}/members/{ids['ada']}"), 409, "LAST-OWNER"
    )
    assert_problem(
        c["ada"].patch(
            f"/api/v1/organizations/{org_id}/members/{ids['ada']}", json={"role": "member"}
        ),
        409,
        "LAST-OWNER",
    )
    again = c["ada"].post(
        f"/api/v1/organizations/{org_id}/members",
        json={"email": "MEM@example.org", "role": "guest"},
    )
    assert_problem(again, 409, "MEMBER-EXISTS")
    unknown = c["ada"].post(
        f"/api/v1/organizations/{org_id}/members", json={"email": "x@example.org", "role": "member"}
    )
    assert_problem(unknown, 404, "NOT-FOUND")
    bad_role = c["ada"].post(
        f"/api/v1/organizations/{org_id}/members", json={"email": "out@example.org", "role": "boss"}
    )
    assert_problem(bad_role, 422, "REQUEST-INVALID")


def test_creating_an_organization_needs_a_verified_address(api):
    eve = api.signed_in("eve@example.org", verify=False)
    assert_problem(
        eve.post("/api/v1/organizations", json={"name": "Eve Ltd"}), 403, "EMAIL-UNVERIFIED"
    )
    assert_problem(
        api.client().post("/api/v1/organizations", json={"name": "X"}), 401, "AUTH-REQUIRED"
    )
    assert eve.get("/api/v1/organizations").json() == []
