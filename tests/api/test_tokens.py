from tests.api.conftest import assert_problem


def bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


def test_a_token_is_shown_once_then_listed_without_its_value(api):
    client = api.signed_in("ada@example.org")
    made = client.post("/api/v1/tokens", json={"name": "laptop"})
    assert made.status_code == 201
    token = made.json()["token"]
    assert token.startswith("alm_")

    listed = client.get("/api/v1/tokens")
    assert listed.status_code == 200
    assert [t["name"] for t in listed.json()] == ["laptop"]
    assert token not in listed.text and "token" not in listed.json()[0]
    assert listed.json()[0]["last_used_at"] is None


def test_a_program_acts_with_the_token_and_its_use_is_recorded(api):
    client = api.signed_in("ada@example.org")
    token = client.post("/api/v1/tokens", json={"name": "ci"}).json()["token"]
    program = api.client()
    me = program.get("/api/v1/auth/me", headers=bearer(token))
    assert me.status_code == 200 and me.json()["email"] == "ada@example.org"
    assert client.get("/api/v1/tokens").json()[0]["last_used_at"] is not None


def test_a_revoked_token_is_refused(api):
    client = api.signed_in("ada@example.org")
    made = client.post("/api/v1/tokens", json={"name": "ci"}).json()
    program = api.client()
    assert program.get("/api/v1/auth/me", headers=bearer(made["token"])).status_code == 200
    assert client.delete(f"/api/v1/tokens/{made['id']}").status_code == 204
    assert_problem(
        program.get("/api/v1/auth/me", headers=bearer(made["token"])), 401, "AUTH-REQUIRED"
    )
    assert client.get("/api/v1/tokens").json()[0]["revoked_at"] is not None


def test_tokens_are_refused_when_unknown_or_malformed(api):
    program = api.client()
    assert_problem(program.get("/api/v1/auth/me", headers=bearer("alm_nope")), 401, "AUTH-REQUIRED")
    for header in ("Basic YWRhOnB3", "Bearer", "Token alm_x"):
        response = program.get("/api/v1/auth/me", headers={"Authorization": header})
        assert_problem(response, 401, "AUTH-REQUIRED")


def test_tokens_need_a_sign_in_a_password_and_a_verified_address(api):
    assert_problem(api.client().post("/api/v1/tokens", json={"name": "x"}), 401, "AUTH-REQUIRED")
    assert_problem(api.client().get("/api/v1/tokens"), 401, "AUTH-REQUIRED")

    unverified = api.signed_in("eve@example.org", verify=False)
    assert_problem(unverified.post("/api/v1/tokens", json={"name": "x"}), 403, "EMAIL-UNVERIFIED")

    client = api.signed_in("ada@example.org")
    token = client.post("/api/v1/tokens", json={"name": "ci"}).json()["token"]
    by_token = api.client().post("/api/v1/tokens", json={"name": "more"}, headers=bearer(token))
    assert_problem(by_token, 403, "FORBIDDEN")
    assert len(client.get("/api/v1/tokens").json()) == 1


def test_nobody_revokes_another_account_s_token(api):
    ada = api.signed_in("ada@example.org")
    made = ada.post("/api/v1/tokens", json={"name": "ci"}).json()
    bob = api.signed_in("bob@example.org")
    assert_problem(bob.delete(f"/api/v1/tokens/{made['id']}"), 404, "NOT-FOUND")
    assert bob.get("/api/v1/tokens").json() == []
    assert api.client().get("/api/v1/auth/me", headers=bearer(made["token"])).status_code == 200
