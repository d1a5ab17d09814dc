"""Schemathesis against the real app's OpenAPI document, over HTTP on the live loopback uvicorn
and real PostgreSQL, signed in as an operator, with a real plug-in (an example, its fixture
records), an organization with a member and a token in the store. Every operation gets its
examples, coverage cases and a bounded, seeded number of generated cases; about half of the
generated path parameters are the real ids, so the found-and-allowed branches are reached too.

Checked for every response: no 5xx (`not_a_server_error`), and every error answer is an RFC 9457
problem (`application/problem+json`)."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pytest
import schemathesis
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from schemathesis.checks import not_a_server_error
from sqlalchemy import create_engine
from sqlalchemy.orm import Session

from almanac.api.app import create_app
from almanac.api.deps import SESSION_COOKIE
from almanac.api.problems import PROBLEM_JSON
from almanac.platform import accounts
from almanac.platform.mail import OutboxMailer
from tests.api.conftest import settings_for
from tests.api.test_host import empty_plugin_tables
from tests.audience.helpers import T0, example_plugin, example_records

OP = "fuzz-operator@example.org"
MEMBER = "fuzz-member@example.org"
EXAMPLE = "uk-bank-holidays"
SIGN_OUT = "/api/v1/auth/signout"
# Generated cases per operation (fuzzing phase); the examples and coverage phases add their own
# fixed cases. With the seed below the run is the same on every machine.
MAX_EXAMPLES = 15
SEED = 20260701


@dataclass
class FuzzTarget:
    cookie: str
    fresh_cookie: Any  # () -> str: a new operator session, for the sign-out operation


# The device grant's two endpoints answer as OAuth does (RFC 6749 section 5.2; RFC 8628
# section 3.5): 400 with `{error, error_description}` in application/json.
OAUTH_PATHS = frozenset({"/api/v1/device/code", "/api/v1/device/token"})
OAUTH_ERRORS = frozenset(
    {
        "invalid_request",
        "invalid_client",
        "invalid_grant",
        "unsupported_grant_type",
        "authorization_pending",
        "slow_down",
        "access_denied",
        "expired_token",
    }
)


def error_is_problem_json(ctx: Any, response: Any, case: Any) -> None:
    """Every 4xx and 5xx answer is an RFC 9457 problem; the device grant's 400 an OAuth error."""
    if response.status_code < 400:
        return
    types = response.headers.get("content-type", [])
    oauth = case.path in OAUTH_PATHS and response.status_code == 400
    if oauth and types and types[0].startswith("application/json"):
        assert response.json()["error"] in OAUTH_ERRORS, response.text
        return
    types = response.headers.get("content-type", [])
    content_type = types[0] if types else ""
    assert content_type.startswith(PROBLEM_JSON), (
        f"{response.status_code} answered as {content_type or 'no content type'}, "
        f"not {PROBLEM_JSON}"
    )
    if case.method.upper() != "HEAD":
        body = response.json()
        assert body["status"] == response.status_code and body["code"], body


@pytest.fixture
def fuzz_target(api) -> Iterator[FuzzTarget]:
    empty_plugin_tables(api.engine)
    operator = api.signed_in(OP, operator=True)
    api.signed_in(MEMBER)
    plugin = example_plugin(api.engine, EXAMPLE, T0)
    records, today = example_records(EXAMPLE)
    plugin.write(records, today)

    made = operator.post("/api/v1/organizations", json={"name": "Fuzz"})
    assert made.status_code == 201, made.text
    organization_id = made.json()["id"]
    added = operator.post(
        f"/api/v1/organizations/{organization_id}/members",
        json={"email": MEMBER, "role": "member"},
    )
    assert added.status_code == 201, added.text
    token = operator.post("/api/v1/tokens", json={"name": "fuzz"})
    assert token.status_code == 201, token.text

    def fresh_cookie() -> str:
        with Session(api.engine, expire_on_commit=False) as db:
            account = accounts.find_account(db, OP)
            assert account is not None
            cookie = accounts.start_session(db, account, api.clock())
            db.commit()
        return cookie

    REAL_IDS.update(
        plugin_id=plugin.id,
        version_id=plugin.version_id,
        organization_id=organization_id,
        # The member, never the operator: revoking or removing must not end the run's rights.
        account_id=added.json()["account_id"],
        token_id=token.json()["id"],
        role="reviewer",
        code="NOT-FOUND",
    )
    try:
        yield FuzzTarget(cookie=operator.cookies[SESSION_COOKIE], fresh_cookie=fresh_cookie)
    finally:
        REAL_IDS.clear()
        empty_plugin_tables(api.engine)


def served_document() -> dict[str, Any]:
    """The OpenAPI document of the real app, made by `create_app` at collection time (no
    database is reached for it); `test_the_fuzzed_document_is_the_served_one` checks it is the
    one the live server serves. The schema is made at collection rather than loaded from a
    fixture because `schemathesis.pytest.from_fixture` (4.32) sets `Node._nodeid`, which
    pytest 9.2 no longer has."""
    url = "postgresql+psycopg://almanac@127.0.0.1:1/never-connected"
    engine = create_engine(url)
    app = create_app(
        settings_for(url, "http://127.0.0.1"),
        clock=lambda: T0,
        mailer=OutboxMailer(engine),
        engine=engine,
    )
    return app.openapi()


DOCUMENT = served_document()
schema = schemathesis.openapi.from_dict(
    DOCUMENT,
    config=schemathesis.Config.from_dict(
        {
            "seed": SEED,
            "generation": {"max-examples": MAX_EXAMPLES, "database": "none"},
            "phases": {"stateful": {"enabled": False}},
        }
    ),
)
# A pack is sent as the raw body: generated bytes, for the pack reader to refuse.
schemathesis.serializer.alias("application/zip", "application/octet-stream")
# Filled by `fuzz_target` for the running test; read when a case is drawn.
REAL_IDS: dict[str, Any] = {}


@schema.hook
def flatmap_path_parameters(context: Any, path_parameters: dict[str, Any] | None) -> Any:
    """Half the generated path parameters are the real ids of the store's rows."""
    real = {k: v for k, v in REAL_IDS.items() if k in (path_parameters or {})}
    if not real:
        return st.just(path_parameters)
    return st.sampled_from([path_parameters, {**path_parameters, **real}])


def test_the_fuzzed_document_is_the_served_one(api) -> None:
    served = api.client().get("/api/v1/openapi.json")
    assert served.status_code == 200
    assert served.json() == DOCUMENT


@schema.parametrize()
# The app and its data are set up once per operation, not per case: cases only read them or
# make changes the next case may meet, as any client's would.
@settings(suppress_health_check=[HealthCheck.function_scoped_fixture])
def test_no_server_error_and_every_error_is_a_problem(case, api, fuzz_target: FuzzTarget) -> None:
    # Signing out ends the session it is sent with: give it one of its own.
    cookie = fuzz_target.fresh_cookie() if case.path == SIGN_OUT else fuzz_target.cookie
    case.call_and_validate(
        base_url=api.base_url,
        headers={"Cookie": f"{SESSION_COOKIE}={cookie}"},
        checks=[not_a_server_error, error_is_problem_json],
        timeout=30,
    )
