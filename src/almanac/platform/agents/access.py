"""What an agent's token may do ("Authentication" 4-5): the one table of agent actions and the
one function, `agent_may`, that answers for it. Every route an agent's token can reach names
its action; whatever names none is refused (the API's `acting` dependency)."""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum, StrEnum

from almanac.platform.errors import Forbidden


class AgentForbidden(Forbidden):
    """A move only a person makes ("Authentication" 5)."""

    code = "AGENT_FORBIDDEN"


class AgentMayNotPublish(Forbidden):
    """A publishing move by an agent its approver did not allow to publish."""

    code = "AGENT_MAY_NOT_PUBLISH"


class AgentAction(StrEnum):
    """Every move in the portal an agent's token might be sent to make."""

    # Reading the organization's portal: uploads, checks, reports, review information,
    # attestations, the submission gate, the domain's and the agreement's standing, ids.
    READ = "read"
    UPLOAD = "upload"
    WITHDRAW = "withdraw"
    RERUN_CHECKS = "rerun-checks"
    SEND_REVIEW_INFORMATION = "send-review-information"
    ATTEST = "attest"
    SUBMIT = "submit"
    LOGOUT = "logout"
    PUBLISH = "publish"
    UNPUBLISH = "unpublish"
    RELIST = "relist"
    PROMOTE = "promote"
    STOP_ROLLOUT = "stop-rollout"
    ROLL_BACK = "roll-back"
    NAME_DOMAIN = "name-domain"
    VERIFY_DOMAIN = "verify-domain"
    ACCEPT_AGREEMENT = "accept-agreement"
    RESERVE_ID = "reserve-id"
    APPROVE_AGENT = "approve-agent"
    LIST_AGENTS = "list-agents"
    REVOKE_AGENT = "revoke-agent"
    RETIRE = "retire"
    ASK_INVITATION = "ask-invitation"
    OTHER = "other"
    """Anything outside the organization's portal routes (reader, host, staff, tokens, ...)."""


class Allowance(Enum):
    ALLOWED = "allowed"
    WITH_PUBLISHING = "with-publishing"  # only when the approver allowed publishing
    NEVER = "never"  # a person's move only


AGENT_RULES: dict[AgentAction, Allowance] = {
    AgentAction.READ: Allowance.ALLOWED,
    AgentAction.UPLOAD: Allowance.ALLOWED,
    AgentAction.WITHDRAW: Allowance.ALLOWED,
    AgentAction.RERUN_CHECKS: Allowance.ALLOWED,
    AgentAction.SEND_REVIEW_INFORMATION: Allowance.ALLOWED,
    AgentAction.ATTEST: Allowance.ALLOWED,
    AgentAction.SUBMIT: Allowance.ALLOWED,
    AgentAction.LOGOUT: Allowance.ALLOWED,
    AgentAction.PUBLISH: Allowance.WITH_PUBLISHING,
    AgentAction.UNPUBLISH: Allowance.WITH_PUBLISHING,
    AgentAction.RELIST: Allowance.WITH_PUBLISHING,
    # A rollout's moves change which version readers get, as publishing does (README, Rollouts).
    AgentAction.PROMOTE: Allowance.WITH_PUBLISHING,
    AgentAction.STOP_ROLLOUT: Allowance.WITH_PUBLISHING,
    AgentAction.ROLL_BACK: Allowance.WITH_PUBLISHING,
    AgentAction.NAME_DOMAIN: Allowance.NEVER,
    AgentAction.VERIFY_DOMAIN: Allowance.NEVER,
    AgentAction.ACCEPT_AGREEMENT: Allowance.NEVER,
    # Not among the moves "Authentication" 4 gives an agent: reserving commits an id for good.
    AgentAction.RESERVE_ID: Allowance.NEVER,
    AgentAction.APPROVE_AGENT: Allowance.NEVER,
    AgentAction.LIST_AGENTS: Allowance.NEVER,
    AgentAction.REVOKE_AGENT: Allowance.NEVER,
    AgentAction.RETIRE: Allowance.NEVER,
    AgentAction.ASK_INVITATION: Allowance.NEVER,
    AgentAction.OTHER: Allowance.NEVER,
}
"""The whole rule of "Authentication" 4 and 5, one line an action."""

_WHY: dict[AgentAction, str] = {
    AgentAction.NAME_DOMAIN: "naming the organization's domain",
    AgentAction.VERIFY_DOMAIN: "verifying the organization's domain",
    AgentAction.ACCEPT_AGREEMENT: "accepting the Developer Agreement",
    AgentAction.RESERVE_ID: "reserving a plug-in id",
    AgentAction.APPROVE_AGENT: "approving an agent",
    AgentAction.LIST_AGENTS: "managing the organization's agents",
    AgentAction.REVOKE_AGENT: "revoking an agent",
    AgentAction.RETIRE: "retiring a plug-in (a person retires it in the portal, typing its id)",
    AgentAction.ASK_INVITATION: "asking to be invited",
    AgentAction.OTHER: "anything outside its organization's portal",
}


@dataclass(frozen=True, slots=True)
class AgentGrant:
    """What an agent's token was approved for: one organization, by whom, publishing or not."""

    token_id: int
    organization_id: int
    approved_by: int
    may_publish: bool
    agent_name: str


def agent_may(action: AgentAction, grant: AgentGrant, organization_id: int | None = None) -> None:
    """Nothing when the agent of `grant` may make `action` (in `organization_id`, when the move
    is in an organization); else AGENT_FORBIDDEN, or AGENT_MAY_NOT_PUBLISH for a publishing move
    its approver did not allow."""
    allowance = AGENT_RULES[action]
    if allowance is Allowance.NEVER:
        raise AgentForbidden(f"an agent may not make this move: {_WHY[action]} is a person's")
    if organization_id is not None and organization_id != grant.organization_id:
        raise AgentForbidden(
            f"this agent acts for organization {grant.organization_id} only, not for "
            f"organization {organization_id}"
        )
    if allowance is Allowance.WITH_PUBLISHING and not grant.may_publish:
        raise AgentMayNotPublish(
            f"agent {grant.agent_name!r} was approved without publishing: it may not "
            f"{action.value}; an owner or admin does it, or approves an agent allowed to publish"
        )
