"""Bearer tokens: made (shown once), listed, revoked."""

from __future__ import annotations

from datetime import datetime

from pydantic import BaseModel, ConfigDict, Field

from almanac.platform.accounts.tokens import NewToken


class TokenIn(BaseModel):
    name: str = Field(min_length=1, max_length=100)


class TokenOut(BaseModel):
    model_config = ConfigDict(from_attributes=True)

    id: int
    name: str
    created_at: datetime
    last_used_at: datetime | None
    revoked_at: datetime | None


class TokenCreatedOut(TokenOut):
    token: str = Field(description="The token itself: shown only in this response.")

    @classmethod
    def of(cls, new: NewToken) -> TokenCreatedOut:
        """The new token, with its secret this once."""
        return cls(**dict(TokenOut.model_validate(new.token)), token=new.secret)
