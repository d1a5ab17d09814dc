"""The shapes the API takes and gives, one module per area (`auth`, `tokens`, `organizations`,
`staff`, `invitations`, `host`, `reader`, `portal`, `agents`, `feeds`, `review`, `store`,
`alerts`); every name is unique across the OpenAPI document. Shared here: the row ids a request
names. Passwords are SecretStr, so no repr or log shows them.

Each answer is filled from its domain view here, once, for every route and page that sends it:
`Model.of(view, ...)`, `Model.read(conn, ...)` where the answer is a read of the store, or
`Model.model_validate(view)` where the model's `from_attributes` reads the view field for field
(as the FastAPI template's `ItemPublic.model_validate(item)`). No route or page builds an
answer field by field (tests/api/test_route_imports.py)."""

from __future__ import annotations

from typing import Annotated

from fastapi import Path, Query
from pydantic import Field

# A row id the request names. Accounts, organizations and tokens have PostgreSQL INTEGER ids,
# plug-in versions BIGINT ones: a number outside the column's range names no row, and must be
# refused here (422) rather than reach the database, which fails the statement (a 500).
INTEGER_ID_MAX = 2**31 - 1
BIGINT_ID_MAX = 2**63 - 1
RowId = Annotated[int, Field(ge=1, le=INTEGER_ID_MAX)]
RowIdPath = Annotated[int, Path(ge=1, le=INTEGER_ID_MAX)]
RowIdQuery = Annotated[int | None, Query(ge=1, le=INTEGER_ID_MAX)]
VersionIdPath = Annotated[int, Path(ge=1, le=BIGINT_ID_MAX)]

__all__ = [
    "BIGINT_ID_MAX",
    "INTEGER_ID_MAX",
    "RowId",
    "RowIdPath",
    "RowIdQuery",
    "VersionIdPath",
]
