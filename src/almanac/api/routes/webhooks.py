"""The reader's webhook endpoints (issue 38): register for plug-ins they may read (the secret
shown once), list, pause, resume, rotate the secret, delete, the delivery log and a replay."""

from __future__ import annotations

from fastapi import APIRouter, Response, status

from almanac.api.deps import Context, CurrentAccount, Db, Now
from almanac.api.schemas import RowIdPath, RowIdQuery
from almanac.api.schemas.webhooks import DeliveryOut, EndpointIn, EndpointOut, EndpointSecretOut
from almanac.platform.webhooks import deliveries, endpoints

router = APIRouter(prefix="/reader/webhooks", tags=["reader"])


@router.post("", status_code=status.HTTP_201_CREATED, response_model=EndpointSecretOut)
def register(
    body: EndpointIn, account: CurrentAccount, db: Db, ctx: Context, now: Now
) -> EndpointSecretOut:
    """A new endpoint for plug-ins the reader may read (at most 20 a reader); its signing
    secret is in this answer only."""
    made = endpoints.register(
        db,
        account,
        url=body.url,
        plugin_ids=body.plugins,
        description=body.description,
        addresses=ctx.endpoint_addresses,
        now=now,
        organization_id=body.organization,
    )
    db.commit()
    return EndpointSecretOut.of(made)


@router.get("", response_model=list[EndpointOut])
def listed(account: CurrentAccount, db: Db, organization: RowIdQuery = None) -> list[EndpointOut]:
    """The reader's endpoints, or with `organization` that organization's (to its owners and
    admins), oldest first."""
    return [EndpointOut.of(v) for v in endpoints.account_endpoints(db, account, organization)]


@router.get("/{endpoint_id}", response_model=EndpointOut)
def one(endpoint_id: RowIdPath, account: CurrentAccount, db: Db) -> EndpointOut:
    return EndpointOut.of(endpoints.endpoint(db, account, endpoint_id))


@router.post("/{endpoint_id}/pause", response_model=EndpointOut)
def pause(endpoint_id: RowIdPath, account: CurrentAccount, db: Db, now: Now) -> EndpointOut:
    """No event is queued for the endpoint or sent to it until it is resumed."""
    view = endpoints.set_paused(db, account, endpoint_id, True, now)
    db.commit()
    return EndpointOut.of(view)


@router.post("/{endpoint_id}/resume", response_model=EndpointOut)
def resume(endpoint_id: RowIdPath, account: CurrentAccount, db: Db, now: Now) -> EndpointOut:
    """Deliveries start again (a disabled endpoint is enabled again)."""
    view = endpoints.set_paused(db, account, endpoint_id, False, now)
    db.commit()
    return EndpointOut.of(view)


@router.post("/{endpoint_id}/rotate-secret", response_model=EndpointSecretOut)
def rotate(endpoint_id: RowIdPath, account: CurrentAccount, db: Db, now: Now) -> EndpointSecretOut:
    """A new secret, in this answer only; the previous one signs beside it for 24 hours."""
    made = endpoints.rotate_secret(db, account, endpoint_id, now)
    db.commit()
    return EndpointSecretOut.of(made)


@router.delete("/{endpoint_id}", status_code=status.HTTP_204_NO_CONTENT)
def delete(endpoint_id: RowIdPath, account: CurrentAccount, db: Db) -> Response:
    endpoints.delete_endpoint(db, account, endpoint_id)
    db.commit()
    return Response(status_code=status.HTTP_204_NO_CONTENT)


@router.get("/{endpoint_id}/deliveries", response_model=list[DeliveryOut])
def log(endpoint_id: RowIdPath, account: CurrentAccount, db: Db) -> list[DeliveryOut]:
    """The endpoint's newest deliveries (at most 100), each with its attempts."""
    return [DeliveryOut.of(v) for v in deliveries.delivery_log(db, account, endpoint_id)]


@router.post("/{endpoint_id}/deliveries/{delivery_id}/replay", status_code=status.HTTP_202_ACCEPTED)
def replay(
    endpoint_id: RowIdPath,
    delivery_id: RowIdPath,
    account: CurrentAccount,
    db: Db,
    now: Now,
) -> Response:
    """Send the delivery again, with its own `webhook-id`, at the next tick."""
    deliveries.replay(db, account, endpoint_id, delivery_id, now)
    db.commit()
    return Response(status_code=status.HTTP_202_ACCEPTED)
