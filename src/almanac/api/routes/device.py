"""`/api/v1/device` (DECISIONS 10): the OAuth 2.0 device authorization grant (RFC 8628) the
tool's `login` uses, and the agent's `logout`.

The two grant endpoints speak OAuth, not problem details: form-encoded requests
(`application/x-www-form-urlencoded`), JSON answers, errors as RFC 6749 section 5.2 objects
`{error, error_description}` with status 400 (the error names of RFC 8628 section 3.5), and
`Cache-Control: no-store` on every answer. See `almanac.platform.agents.device` for why the
grant is written here rather than taken from Authlib."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Depends, FastAPI, Request, Response, status
from fastapi.responses import JSONResponse

from almanac.api.deps import ClientAddress, Context, CurrentPrincipal, Db, Now
from almanac.api.schemas.agents import DeviceAuthorizationOut, DeviceTokenOut, OAuthErrorOut
from almanac.platform import accounts, agents, limits
from almanac.platform.agents import AgentAction, DeviceGrantError

router = APIRouter(prefix="/device", tags=["device"])

FORM = "application/x-www-form-urlencoded"
NO_STORE = {"Cache-Control": "no-store", "Pragma": "no-cache"}
APPROVAL_PATH = "/portal/device"
"""The approval address (the grant's verification URI): the portal's agent approval page."""


def install_oauth_errors(app: FastAPI) -> None:
    """Answer a DeviceGrantError as RFC 6749 section 5.2 says: 400 and `{error, ...}`."""

    @app.exception_handler(DeviceGrantError)
    async def _oauth(request: Request, exc: DeviceGrantError) -> JSONResponse:
        body: dict[str, Any] = {"error": exc.error, "error_description": exc.description}
        if exc.interval is not None:
            body["interval"] = exc.interval
        return JSONResponse(body, status_code=400, headers=NO_STORE)


def _form_body(*fields: str) -> dict[str, Any]:
    return {
        "requestBody": {
            "required": True,
            "content": {
                FORM: {
                    "schema": {
                        "type": "object",
                        "properties": {name: {"type": "string"} for name in fields},
                        "required": list(fields),
                    }
                }
            },
        }
    }


async def _oauth_form(request: Request) -> dict[str, str]:
    """The form-encoded parameters (RFC 6749 appendix B); another body, or a parameter sent
    twice, is `invalid_request`."""
    media_type = request.headers.get("content-type", "").split(";", 1)[0].strip().lower()
    if media_type != FORM:
        raise DeviceGrantError("invalid_request", f"send the parameters as {FORM}")
    try:
        form = await request.form()
    except Exception:  # a body Starlette cannot read as a form
        raise DeviceGrantError("invalid_request", "the form could not be read") from None
    found: dict[str, str] = {}
    for name, value in form.multi_items():
        if not isinstance(value, str):
            raise DeviceGrantError("invalid_request", f"{name}: a text parameter is expected")
        if name in found:
            raise DeviceGrantError("invalid_request", f"{name}: sent more than once")
        found[name] = value
    return found


OAuthForm = Annotated[dict[str, str], Depends(_oauth_form)]
OAUTH_ERRORS: dict[int | str, dict[str, Any]] = {
    400: {"model": OAuthErrorOut, "description": "an RFC 6749 / RFC 8628 error"}
}


def _required(form: dict[str, str], name: str) -> str:
    value = form.get(name, "")
    if not value:
        raise DeviceGrantError("invalid_request", f"{name}: missing")
    return value


@router.post(
    "/code",
    response_model=DeviceAuthorizationOut,
    responses={
        **OAUTH_ERRORS,
        429: {"description": "DEVICE-CODE-LIMITED, a problem: see Retry-After"},
    },
    openapi_extra=_form_body("client_id", "agent_name", "machine_id"),
)
def device_authorization(
    form: OAuthForm,
    ctx: Context,
    db: Db,
    now: Now,
    response: Response,
    client_address: ClientAddress,
) -> DeviceAuthorizationOut:
    """The device authorization request (RFC 8628 section 3.1) of `login`: `client_id`
    `almanac-plugin`, `agent_name` (shown to the approver) and `machine_id` (a new login on the
    same machine revokes its earlier token). The user code is valid 10 minutes at
    `verification_uri`; poll `/api/v1/device/token` every `interval` seconds. At most 10 codes
    an hour per client address: past it, 429 with `Retry-After` and the problem
    DEVICE-CODE-LIMITED (RFC 8628 names no error for it; every other refusal is the OAuth
    error it was)."""
    agents.require_client(form.get("client_id"))
    agent_name, machine_id = _required(form, "agent_name"), _required(form, "machine_id")
    agents.login_request(agent_name, machine_id)
    limits.count_attempt(
        db, [(limits.DEVICE_CODES_PER_ADDRESS, limits.address_subject(client_address))], now
    )
    started = agents.start_login(
        db, agent_name, machine_id, now, interval=ctx.settings.device_poll_interval
    )
    db.commit()
    response.headers.update(NO_STORE)
    approval = f"{ctx.settings.base_url.rstrip('/')}{APPROVAL_PATH}"
    return DeviceAuthorizationOut.of(started, approval)


@router.post(
    "/token",
    response_model=DeviceTokenOut,
    responses=OAUTH_ERRORS,
    openapi_extra=_form_body("grant_type", "device_code", "client_id"),
)
def device_token(form: OAuthForm, db: Db, now: Now, response: Response) -> DeviceTokenOut:
    """The device access token request (RFC 8628 section 3.4): `grant_type`
    `urn:ietf:params:oauth:grant-type:device_code`, `device_code`, `client_id`. Until an owner
    or admin decides: `authorization_pending`; polled sooner than the interval: `slow_down`
    (the interval grows by 5 seconds); denied: `access_denied`; 10 minutes passed:
    `expired_token`. Approved: the agent's token, once."""
    agents.require_client(form.get("client_id"))
    if form.get("grant_type") != agents.GRANT_TYPE:
        raise DeviceGrantError(
            "unsupported_grant_type", f"grant_type: this endpoint takes {agents.GRANT_TYPE}"
        )
    try:
        issued = agents.poll(db, _required(form, "device_code"), now)
    except DeviceGrantError:
        db.commit()  # the poll's moment and a grown interval are kept
        raise
    db.commit()
    response.headers.update(NO_STORE)
    return DeviceTokenOut.of(issued)


@router.post("/logout", status_code=status.HTTP_204_NO_CONTENT)
def logout(principal: CurrentPrincipal, db: Db, now: Now) -> Response:
    """The tool's `logout`: the agent's own token (Authorization: Bearer) is revoked at once.
    Any other credential is FORBIDDEN: a person revokes agents in the portal."""
    if principal.agent is None:
        raise accounts.Forbidden("only an agent's token logs out here")
    agents.agent_may(AgentAction.LOGOUT, principal.agent)
    agents.logout(db, principal.agent.token_id, now)
    db.commit()
    return Response(status_code=status.HTTP_204_NO_CONTENT)
