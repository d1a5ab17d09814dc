import json
import os
import subprocess
from html import escape
from html.parser import HTMLParser

import httpx
import pytest

from almanac.api.routes.public import served_tool
from almanac.platform.contract.problems import CATALOG, PAGES
from tests.api.conftest import assert_problem
from tests.conftest import REPO

NOW = "2026-06-10T15:00:00Z"


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


class PageText(HTMLParser):
    """A catalog page as a reader sees it: the text of its rule, why and fix paragraphs and of
    each example block, by class."""

    def __init__(self) -> None:
        super().__init__()
        self.parts: dict[str, list[str]] = {}
        self._open: list[str | None] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        classes = (dict(attrs).get("class") or "").split()
        named = next((c for c in classes if c in {"rule", "why", "fix", "fails", "passes"}), None)
        self._open.append(named or (self._open[-1] if self._open else None))
        if tag == "pre" and self._open[-1] in {"fails", "passes"}:
            self._open[-1] = f"{self._open[-1]}-pre"

    def handle_endtag(self, tag: str) -> None:
        self._open.pop()

    def handle_data(self, data: str) -> None:
        if self._open and self._open[-1]:
            self.parts.setdefault(self._open[-1], []).append(data)

    def text(self, name: str) -> str:
        return "".join(self.parts.get(name, []))


def test_every_problem_code_has_a_page_with_the_rule_why_examples_and_fix(api):
    assert set(PAGES) == set(CATALOG), "each catalog code needs its page in problem_pages.json"
    client = api.client()
    for code, entry in CATALOG.items():
        page = PAGES[code]
        assert len(page.rule) >= 20 and len(page.why) >= 20, code  # sentences, not stubs
        for part in (page.failing.where, page.passing.where, page.failing.text, page.passing.text):
            assert part.strip(), code
        assert page.failing.text != page.passing.text, code
        response = client.get(f"/docs/problems/{code}")
        assert response.status_code == 200 and response.headers["content-type"].startswith(
            "text/html"
        )
        assert f"<h1><code>{code}</code></h1>" in response.text
        assert escape(entry.title) in response.text
        drawn = PageText()
        drawn.feed(response.text)
        assert drawn.text("rule") == page.rule.replace("`", ""), code
        assert drawn.text("why") == page.why.replace("`", ""), code
        assert drawn.text("fix") == entry.fix, code
        assert drawn.text("fails-pre") == page.failing.text, code
        assert drawn.text("passes-pre") == page.passing.text, code
        assert page.failing.where in drawn.text("fails"), code
    warning = client.get("/docs/problems/PLG-UPDATE-SERIES-REMOVED").text
    assert "Warned:" in warning and "Not warned:" in warning
    rule = client.get("/docs/problems/PLG-MANIFEST-CONTRACT").text
    assert "<code>contract</code>" in rule, "code spans of the rule are set as code"
    assert_problem(client.get("/docs/problems/NO-SUCH-CODE"), 404, "NOT-FOUND")
    escaped = client.get("/docs/problems/%3Cscript%3E")
    assert escaped.status_code == 404 and "<script>" not in escaped.text


def test_the_problem_type_link_opens_its_page(api):
    body = assert_problem(api.client().get("/api/v1/auth/me"), 401, "AUTH-REQUIRED")
    page = httpx.get(body["type"])
    assert page.status_code == 200 and "<code>AUTH-REQUIRED</code>" in page.text


def test_the_served_tool_links_to_this_services_docs(api, node, tmp_path):
    response = api.client().get("/tool/almanac-plugin.mjs")
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("text/javascript")
    repository = (REPO / "tool" / "almanac-plugin.mjs").read_text(encoding="utf-8")
    default = 'export const DEFAULT_BASE_URL = "http://127.0.0.1:8000";'
    assert repository.count(default) == 1
    stamped = f"export const DEFAULT_BASE_URL = {json.dumps(api.base_url)};"
    assert response.text == repository.replace(default, stamped), "only the address differs"

    # A developer with no setting of their own runs the downloaded copy: its docs links open
    # this service's pages.
    served = tmp_path / "almanac-plugin.mjs"
    served.write_bytes(response.content)
    home = {"PATH": os.environ["PATH"], "HOME": str(tmp_path), "ALMANAC_PLUGIN_NOW": NOW}
    made = subprocess.run(
        [str(node), str(served), "init", "docs-rates", "--timezone", "UTC"],
        cwd=tmp_path, env=home, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert made.returncode == 0, made.stderr
    manifest = tmp_path / "docs-rates" / "plugin.json"
    manifest.write_text(manifest.read_text().replace('"contract": 1', '"contract": 2'))
    checked = subprocess.run(
        [str(node), str(served), "check", "docs-rates", "--json"],
        cwd=tmp_path, env=home, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert checked.returncode == 1, checked.stderr
    [finding] = json.loads(checked.stdout)["findings"]
    assert finding["docs"] == f"{api.base_url}/docs/problems/PLG-MANIFEST-CONTRACT"
    page = httpx.get(finding["docs"])
    assert page.status_code == 200 and "<code>PLG-MANIFEST-CONTRACT</code>" in page.text


def test_a_tool_without_the_default_line_is_not_served_half_stamped():
    with pytest.raises(ValueError):
        served_tool("export const OTHER = 1;\n", "https://almanac.example")


def test_health_answers_with_the_database(api):
    response = api.client().get("/health")
    assert response.status_code == 200 and response.json() == {"status": "ok", "database": "ok"}
