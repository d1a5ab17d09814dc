"""Bearer tokens for programs: create (shown once), list without secrets, revoke."""

from __future__ import annotations

from fastapi import APIRouter, Response, status

from almanac.api.deps import CurrentAccount, Db, Now, SessionAccount
from almanac.api.schemas import RowIdPath
from almanac.api.schemas.tokens import TokenCreatedOut, TokenIn, TokenOut
from almanac.platform import accounts
from almanac.platform.accounts import Account

router = APIRouter(prefix="/tokens", tags=["tokens"])


def _verified(account: Account) -> None:
    if not account.verified:
        raise accounts.EmailUnverified("verify your e-mail address before you create tokens")


@router.post("", status_code=status.HTTP_201_CREATED, response_model=TokenCreatedOut)
def create(body: TokenIn, account: SessionAccount, db: Db, now: Now) -> TokenCreatedOut:
    """A new named token; its value is in this response only. Needs a password sign-in and
    a verified e-mail address."""
    _verified(account)
    new = accounts.create_token(db, account, body.name, now)
    db.commit()
    return TokenCreatedOut.of(new)


@router.get("", response_model=list[TokenOut])
def list_(account: CurrentAccount, db: Db) -> list[TokenOut]:
    """The account's tokens without their values."""
    return [TokenOut.model_validate(t) for t in accounts.list_tokens(db, account)]


@router.delete("/{token_id}", status_code=status.HTTP_204_NO_CONTENT)
def revoke(token_id: RowIdPath, account: CurrentAccount, db: Db, now: Now) -> Response:
    """Revoke one of the account's tokens; it stops working at once."""
    accounts.revoke_token(db, account, token_id, now)
    db.commit()
    return Response(status_code=status.HTTP_204_NO_CONTENT)
