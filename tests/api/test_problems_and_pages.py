from html import escape

import httpx

from almanac.platform.contract.problems import CATALOG
from tests.api.conftest import assert_problem
from tests.conftest import REPO


def test_openapi_is_served_under_api_v1(api):
    spec = api.client().get("/api/v1/openapi.json")
    assert spec.status_code == 200
    paths = spec.json()["paths"]
    for path in (
        "/api/v1/auth/signup",
        "/api/v1/auth/signin",
        "/api/v1/tokens",
        "/api/v1/organizations/{organization_id}/members",
        "/api/v1/staff/roles",
        "/api/developers/invitations",
        "/api/v1/developers/invitations",
    ):
        assert path in paths, path


def test_unknown_addresses_and_methods_are_problems(api):
    client = api.client()
    assert_problem(client.get("/api/v1/nothing-here"), 404, "NOT-FOUND")
    assert_problem(client.delete("/api/v1/auth/me"), 405, "METHOD-NOT-ALLOWED")


def test_a_body_that_is_not_json_is_malformed(api):
    response = api.client().post(
        "/api/v1/auth/signup", content=b"{not json", headers={"content-type": "application/json"}
    )
    assert_problem(response, 400, "REQUEST-MALFORMED")


def test_a_validation_error_never_echoes_the_input(api):
    secret = "hunter2-but-longer-" * 2
    response = api.client().post("/api/v1/auth/signin", json={"password": secret, "email": ["x"]})
    body = assert_problem(response, 422, "REQUEST-INVALID")
    assert secret not in response.text and "input" not in response.text
    assert [f["path"] for f in body["findings"]] == ["body.email"]
    assert body["findings"][0]["docs"] == body["type"]


def test_an_oversized_body_is_refused_before_it_is_read(api):
    client = api.client()
    big = {"email": "ada@example.org", "password": "x" * (70 * 1024)}
    assert_problem(client.post("/api/v1/auth/signup", json=big), 413, "REQUEST-TOO-LARGE")

    def chunks():
        for _ in range(70):
            yield b"x" * 1024

    streamed = client.post(
        "/api/v1/auth/signup", content=chunks(), headers={"content-type": "application/json"}
    )
    assert_problem(streamed, 413, "REQUEST-TOO-LARGE")


def test_every_problem_code_has_a_page(api):
    client = api.client()
    page = client.get("/docs/problems/AUTH-REQUIRED")
    assert page.status_code == 200 and page.headers["content-type"].startswith("text/html")
    assert "AUTH-REQUIRED" in page.text and escape(CATALOG["AUTH-REQUIRED"].fix) in page.text
    plugin = client.get("/docs/problems/PLG-MANIFEST-ID")
    assert CATALOG["PLG-MANIFEST-ID"].title in plugin.text
    assert_problem(client.get("/docs/problems/NO-SUCH-CODE"), 404, "NOT-FOUND")
    escaped = client.get("/docs/problems/%3Cscript%3E")
    assert escaped.status_code == 404 and "<script>" not in escaped.text


def test_the_problem_type_link_opens_its_page(api):
    body = assert_problem(api.client().get("/api/v1/auth/me"), 401, "AUTH-REQUIRED")
    page = httpx.get(body["type"])
    assert page.status_code == 200 and "<code>AUTH-REQUIRED</code>" in page.text


def test_the_tool_is_served_from_the_repository(api):
    response = api.client().get("/tool/almanac-plugin.mjs")
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("text/javascript")
    assert response.content == (REPO / "tool" / "almanac-plugin.mjs").read_bytes()


def test_health_answers_with_the_database(api):
    response = api.client().get("/health")
    assert response.status_code == 200 and response.json() == {"status": "ok", "database": "ok"}
