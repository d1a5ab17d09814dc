"""Agent access: the device login grant (RFC 8628) and its approval, agent tokens, and the one
rule of what an agent's token may do ("Authentication" 4-5; "Agent login")."""

from almanac.platform.agents.access import AGENT_RULES as AGENT_RULES
from almanac.platform.agents.access import (
    AgentAction,
    AgentForbidden,
    AgentGrant,
    AgentMayNotPublish,
    Allowance,
    agent_may,
)
from almanac.platform.agents.device import (
    CLIENT_ID,
    GRANT_TYPE,
    DeviceAuthorization,
    DeviceGrantError,
    LoginView,
    approve,
    deny,
    login_code,
    login_request,
    poll,
    require_client,
    start_login,
)
from almanac.platform.agents.tokens import AGENT_TOKEN_PREFIX as AGENT_TOKEN_PREFIX
from almanac.platform.agents.tokens import (
    AgentView,
    NewAgentToken,
    grant_of,
    is_agent_secret,
    logout,
    organization_agents,
    revoke_agent,
    use_agent_token,
)

__all__ = [
    "CLIENT_ID",
    "GRANT_TYPE",
    "AgentAction",
    "AgentForbidden",
    "AgentGrant",
    "AgentMayNotPublish",
    "AgentView",
    "Allowance",
    "DeviceAuthorization",
    "DeviceGrantError",
    "LoginView",
    "NewAgentToken",
    "agent_may",
    "approve",
    "deny",
    "grant_of",
    "is_agent_secret",
    "login_code",
    "login_request",
    "logout",
    "organization_agents",
    "poll",
    "require_client",
    "revoke_agent",
    "start_login",
    "use_agent_token",
]
