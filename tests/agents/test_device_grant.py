"""The device login grant's states (RFC 8628; "Agent login"), agent tokens and the one rule of
what an agent may do, on the store's functions (PostgreSQL and SQLite)."""

from __future__ import annotations

from datetime import timedelta

import pytest
from sqlalchemy import select
from sqlalchemy.orm import Session

from almanac.platform import accounts, agents
from almanac.platform.accounts.secret import secret_hash
from almanac.platform.agents import AgentAction, AgentGrant, Allowance, DeviceGrantError
from almanac.platform.agents.device import USER_CODE_ALPHABET, normalize_user_code
from almanac.platform.agents.models import AgentToken, DeviceCode
from tests.accounts.conftest import SteppedClock
from tests.accounts.helpers import person
from tests.publishing.helpers import Org, organization

MACHINE = "machine-0001"


@pytest.fixture
def org(db: Session, passwords, clock: SteppedClock) -> Org:
    return organization(db, passwords, clock())


def _error(db: Session, device_code: str, clock: SteppedClock) -> str:
    with pytest.raises(DeviceGrantError) as refused:
        agents.poll(db, device_code, clock())
    db.commit()
    return refused.value.error


def test_a_login_code_is_short_unambiguous_and_kept_only_as_a_hash(db, clock) -> None:
    started = agents.start_login(db, "Claude on laptop", MACHINE, clock())
    db.commit()
    assert started.expires_in == 600 and started.interval == 5
    first, dash, second = started.user_code.partition("-")
    assert dash == "-" and len(first) == len(second) == 4
    assert set(first + second) <= set(USER_CODE_ALPHABET)
    assert not set(first + second) & set("AEIOU01")
    row = db.scalar(select(DeviceCode))
    assert row is not None and row.device_code_hash == secret_hash(started.device_code)
    assert started.device_code not in repr(started)
    assert row.user_code == first + second
    # Typed in any case, with or without the hyphen; look-alikes are never a code.
    assert normalize_user_code(started.user_code.lower()) == first + second
    assert normalize_user_code(f" {first} {second} ") == first + second
    assert normalize_user_code("O0I1-ABCD") is None


def test_a_login_needs_a_name_and_a_machine(db, clock) -> None:
    for name, machine in (("", MACHINE), ("x" * 81, MACHINE), ("tab\there", MACHINE)):
        with pytest.raises(DeviceGrantError) as refused:
            agents.start_login(db, name, machine, clock())
        assert refused.value.error == "invalid_request"
    with pytest.raises(DeviceGrantError) as refused:
        agents.start_login(db, "agent", "short", clock())
    assert refused.value.error == "invalid_request"


def test_pending_then_slow_down_grows_the_interval_by_five(db, clock) -> None:
    started = agents.start_login(db, "agent", MACHINE, clock())
    db.commit()
    assert _error(db, started.device_code, clock) == "authorization_pending"
    assert _error(db, started.device_code, clock) == "slow_down"  # at once: too soon
    row = db.scalar(select(DeviceCode))
    assert row is not None and row.interval == 10
    clock.advance(timedelta(seconds=6))  # the old interval is no longer enough
    assert _error(db, started.device_code, clock) == "slow_down"
    db.refresh(row)
    assert row.interval == 15
    clock.advance(timedelta(seconds=15))
    assert _error(db, started.device_code, clock) == "authorization_pending"


def test_approved_the_token_is_handed_out_once(db, clock, org: Org) -> None:
    started = agents.start_login(db, "agent", MACHINE, clock())
    db.commit()
    seen = agents.login_code(db, started.user_code, org.admin, clock())
    assert (seen.agent_name, seen.state) == ("agent", "pending")
    agents.approve(db, started.user_code, org.admin, org.id, True, clock())
    db.commit()
    issued = agents.poll(db, started.device_code, clock())
    db.commit()
    assert issued.secret.startswith(agents.AGENT_TOKEN_PREFIX)
    token = db.scalar(select(AgentToken))
    assert token is not None and token.token_hash == secret_hash(issued.secret)
    assert (token.organization_id, token.approved_by, token.may_publish) == (
        org.id,
        org.admin.id,
        True,
    )
    assert (token.agent_name, token.machine_id) == ("agent", MACHINE)
    clock.advance(timedelta(seconds=5))
    assert _error(db, started.device_code, clock) == "invalid_grant"
    assert agents.login_code(db, started.user_code, org.admin, clock()).state == "issued"
    assert _error(db, "not-a-code", clock) == "invalid_grant"


def test_denied_ends_the_login(db, clock, org: Org) -> None:
    started = agents.start_login(db, "agent", MACHINE, clock())
    agents.deny(db, started.user_code, org.owner, clock())
    db.commit()
    assert _error(db, started.device_code, clock) == "access_denied"
    with pytest.raises(accounts.Conflict) as late:
        agents.approve(db, started.user_code, org.owner, org.id, False, clock())
    assert late.value.code == "STATE-CONFLICT"
    assert db.scalar(select(AgentToken)) is None


def test_ten_minutes_later_the_code_expired(db, clock, org: Org) -> None:
    started = agents.start_login(db, "agent", MACHINE, clock())
    db.commit()
    clock.advance(timedelta(minutes=10))
    assert _error(db, started.device_code, clock) == "expired_token"
    assert agents.login_code(db, started.user_code, org.owner, clock()).state == "expired"
    with pytest.raises(accounts.Conflict):
        agents.approve(db, started.user_code, org.owner, org.id, False, clock())
    # Approved just in time but fetched too late: expired as well, no token.
    again = agents.start_login(db, "agent", MACHINE, clock())
    agents.approve(db, again.user_code, org.owner, org.id, False, clock())
    db.commit()
    clock.advance(timedelta(minutes=10))
    assert _error(db, again.device_code, clock) == "expired_token"
    assert db.scalar(select(AgentToken)) is None


def test_only_owners_and_admins_of_the_organization_approve(db, clock, passwords, org) -> None:
    started = agents.start_login(db, "agent", MACHINE, clock())
    db.commit()
    with pytest.raises(accounts.Forbidden):
        agents.approve(db, started.user_code, org.member, org.id, False, clock())
    with pytest.raises(accounts.Forbidden):
        agents.login_code(db, started.user_code, org.member, clock())
    with pytest.raises(accounts.Forbidden):
        agents.deny(db, started.user_code, org.member, clock())
    other = organization(db, passwords, clock(), prefix="other")
    with pytest.raises(accounts.NotFound):  # not theirs to name
        agents.approve(db, started.user_code, other.owner, org.id, False, clock())
    with pytest.raises(accounts.NotFound):
        agents.login_code(db, "BCDF-GHJK", org.owner, clock())
    stranger = person(db, passwords, "stranger@example.org", clock())
    with pytest.raises(accounts.Forbidden):
        agents.login_code(db, started.user_code, stranger, clock())


def _login(db: Session, clock: SteppedClock, org: Org, machine: str = MACHINE) -> str:
    started = agents.start_login(db, "agent", machine, clock())
    agents.approve(db, started.user_code, org.admin, org.id, False, clock())
    secret = agents.poll(db, started.device_code, clock()).secret
    db.commit()
    return secret


def test_a_new_login_on_the_same_machine_revokes_the_earlier_token(db, clock, org) -> None:
    first = _login(db, clock, org)
    elsewhere = _login(db, clock, org, machine="machine-0002")
    second = _login(db, clock, org)
    with pytest.raises(accounts.NotAuthenticated):
        agents.use_agent_token(db, first, clock())
    assert agents.use_agent_token(db, second, clock()).machine_id == MACHINE
    assert agents.use_agent_token(db, elsewhere, clock()).machine_id == "machine-0002"
    reasons = {a.revoked_reason for a in agents.organization_agents(db, org.id, org.owner)}
    assert reasons == {"new-login", None}


def test_a_token_dies_when_its_approver_stops_being_owner_or_admin(db, clock, org) -> None:
    secret = _login(db, clock, org)
    used = agents.use_agent_token(db, secret, clock())
    assert used.last_used_at == clock()
    accounts.change_role(db, org.id, org.owner, org.admin.id, "member")
    db.commit()
    listed = agents.organization_agents(db, org.id, org.owner)
    assert [(a.active, a.revoked_reason) for a in listed] == [(False, "approver-left")]
    with pytest.raises(accounts.NotAuthenticated, match="no longer owner or admin"):
        agents.use_agent_token(db, secret, clock())
    db.commit()
    # Revoked for good: made admin again, the token stays dead.
    accounts.change_role(db, org.id, org.owner, org.admin.id, "admin")
    db.commit()
    with pytest.raises(accounts.NotAuthenticated):
        agents.use_agent_token(db, secret, clock())
    row = db.scalar(select(AgentToken))
    assert row is not None and row.revoked_reason == "approver-left"


def test_logout_and_revoke_in_the_portal(db, clock, org) -> None:
    first = _login(db, clock, org)
    token = agents.use_agent_token(db, first, clock())
    agents.logout(db, token.id, clock())
    db.commit()
    with pytest.raises(accounts.NotAuthenticated):
        agents.use_agent_token(db, first, clock())
    second = _login(db, clock, org, machine="machine-0002")
    row = agents.use_agent_token(db, second, clock())
    with pytest.raises(accounts.Forbidden):
        agents.revoke_agent(db, org.id, org.member, row.id, clock())
    revoked = agents.revoke_agent(db, org.id, org.owner, row.id, clock())
    db.commit()
    assert (revoked.active, revoked.revoked_reason, revoked.revoked_by) == (
        False,
        "portal",
        org.owner.email,
    )
    with pytest.raises(accounts.NotAuthenticated):
        agents.use_agent_token(db, second, clock())


GRANT = AgentGrant(token_id=1, organization_id=7, approved_by=1, may_publish=False, agent_name="a")


@pytest.mark.parametrize("action", list(AgentAction))
def test_the_one_rule_of_what_an_agent_may_do(action: AgentAction) -> None:
    allowed = AgentGrant(1, 7, 1, True, "a")
    rule = agents.AGENT_RULES[action]
    if rule is Allowance.NEVER:
        for grant in (GRANT, allowed):
            with pytest.raises(agents.AgentForbidden) as refused:
                agents.agent_may(action, grant, 7)
            assert refused.value.code == "AGENT_FORBIDDEN"
        return
    with pytest.raises(agents.AgentForbidden):  # another organization's
        agents.agent_may(action, allowed, 8)
    agents.agent_may(action, allowed, 7)
    if rule is Allowance.WITH_PUBLISHING:
        with pytest.raises(agents.AgentMayNotPublish) as refused:
            agents.agent_may(action, GRANT, 7)
        assert refused.value.code == "AGENT_MAY_NOT_PUBLISH"
    else:
        agents.agent_may(action, GRANT, 7)


def test_the_rule_names_the_spec_moves() -> None:
    """'Authentication' 4-5 as the table says it."""
    rules = agents.AGENT_RULES
    for action in ("upload", "withdraw", "rerun-checks", "send-review-information", "attest"):
        assert rules[AgentAction(action)] is Allowance.ALLOWED
    for action in ("publish", "unpublish", "relist"):
        assert rules[AgentAction(action)] is Allowance.WITH_PUBLISHING
    for action in (
        "verify-domain",
        "accept-agreement",
        "approve-agent",
        "retire",
        "name-domain",
        "ask-invitation",
        "revoke-agent",
    ):
        assert rules[AgentAction(action)] is Allowance.NEVER
