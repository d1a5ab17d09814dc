from almanac.api.deps import Reviewer
from almanac.cli import main
from tests.api.conftest import assert_problem


def test_the_first_operator_is_granted_from_the_command_line(api, monkeypatch, capsys):
    ada = api.signed_in("ada@example.org", verify=False)
    assert_problem(ada.get("/api/v1/staff/roles"), 403, "FORBIDDEN")

    monkeypatch.setenv("ALMANAC_DATABASE_URL", api.engine.url.render_as_string(hide_password=False))
    assert main(["staff", "grant", "ADA@example.org", "operator"]) == 0
    assert "ada@example.org is operator" in capsys.readouterr().out
    assert main(["staff", "grant", "nobody@example.org", "operator"]) == 1
    assert "sign up first" in capsys.readouterr().err

    roles = ada.get("/api/v1/staff/roles")
    assert roles.status_code == 200
    assert [(r["email"], r["role"]) for r in roles.json()] == [("ada@example.org", "operator")]
    assert ada.get("/api/v1/auth/me").json()["staff_roles"] == ["operator"]

    assert main(["staff", "revoke", "ada@example.org", "operator"]) == 0
    assert_problem(ada.get("/api/v1/staff/roles"), 403, "FORBIDDEN")


def test_an_operator_grants_and_revokes_roles(api):
    op = api.signed_in("op@example.org", operator=True)
    api.signed_in("rev@example.org")
    granted = op.post("/api/v1/staff/roles", json={"email": "rev@example.org", "role": "reviewer"})
    assert granted.status_code == 201 and granted.json()["role"] == "reviewer"
    account_id = granted.json()["account_id"]
    assert {(r["email"], r["role"]) for r in op.get("/api/v1/staff/roles").json()} == {
        ("op@example.org", "operator"),
        ("rev@example.org", "reviewer"),
    }
    assert op.delete(f"/api/v1/staff/roles/{account_id}/reviewer").status_code == 204
    assert_problem(op.delete(f"/api/v1/staff/roles/{account_id}/reviewer"), 404, "NOT-FOUND")
    bad = op.post("/api/v1/staff/roles", json={"email": "rev@example.org", "role": "king"})
    assert_problem(bad, 422, "REQUEST-INVALID")


def test_only_operators_touch_staff_roles(api):
    rev = api.signed_in("rev@example.org")
    op = api.signed_in("op@example.org", operator=True)
    op.post("/api/v1/staff/roles", json={"email": "rev@example.org", "role": "reviewer"})
    for client in (rev, api.signed_in("mem@example.org")):
        grant = client.post(
            "/api/v1/staff/roles", json={"email": "mem@example.org", "role": "operator"}
        )
        assert_problem(grant, 403, "FORBIDDEN")
        assert_problem(client.get("/api/v1/staff/outbox"), 403, "FORBIDDEN")
        assert_problem(client.get("/api/v1/staff/invitations"), 403, "FORBIDDEN")
    assert_problem(api.client().get("/api/v1/staff/roles"), 401, "AUTH-REQUIRED")
    assert "mem@example.org" not in op.get("/api/v1/staff/roles").text


def test_require_reviewer_admits_reviewers_only(api):
    @api.app.get("/api/v1/test-review-desk")
    def desk(account: Reviewer) -> dict:
        return {"reviewer": account.email}

    op = api.signed_in("op@example.org", operator=True)
    api.signed_in("rev@example.org")
    op.post("/api/v1/staff/roles", json={"email": "rev@example.org", "role": "reviewer"})
    rev = api.client()
    rev.post(
        "/api/v1/auth/signin",
        json={"email": "rev@example.org", "password": "correct horse battery staple"},
    )
    assert rev.get("/api/v1/test-review-desk").json() == {"reviewer": "rev@example.org"}
    assert_problem(op.get("/api/v1/test-review-desk"), 403, "FORBIDDEN")
    assert_problem(api.client().get("/api/v1/test-review-desk"), 401, "AUTH-REQUIRED")


def test_the_outbox_is_shown_to_operators(api):
    op = api.signed_in("op@example.org", operator=True)
    api.sign_up(api.client(), "new@example.org", verify=False)
    mail = op.get("/api/v1/staff/outbox").json()
    assert mail[0]["to_address"] == "new@example.org"
    assert "/api/v1/auth/verify?token=" in mail[0]["body"]
    assert [m["to_address"] for m in op.get("/api/v1/staff/outbox?limit=1").json()] == [
        "new@example.org"
    ]
