"""Organizations: create (the creator becomes owner), members and their roles."""

from __future__ import annotations

from fastapi import APIRouter, Response, status

from almanac.api.deps import CurrentAccount, Db, Now
from almanac.api.schemas import RowIdPath
from almanac.api.schemas.organizations import (
    MemberIn,
    MemberOut,
    OrganizationIn,
    OrganizationOut,
    RoleIn,
)
from almanac.platform import accounts

router = APIRouter(prefix="/organizations", tags=["organizations"])


@router.post("", status_code=status.HTTP_201_CREATED, response_model=OrganizationOut)
def create(body: OrganizationIn, account: CurrentAccount, db: Db, now: Now) -> OrganizationOut:
    """A new organization owned by its creator (who needs a verified e-mail address)."""
    org = accounts.create_organization(db, account, body.name, now, domain=body.domain)
    db.commit()
    return OrganizationOut.of(org, "owner")


@router.get("", response_model=list[OrganizationOut])
def mine(account: CurrentAccount, db: Db) -> list[OrganizationOut]:
    """The organizations the account is a member of now."""
    return [OrganizationOut.of(org, role) for org, role in accounts.organizations_of(db, account)]


@router.get("/{organization_id}", response_model=OrganizationOut)
def show(organization_id: RowIdPath, account: CurrentAccount, db: Db) -> OrganizationOut:
    """One organization; NOT-FOUND to anyone who is not a member."""
    org = accounts.visible_organization(db, organization_id, account)
    mine = accounts.organizations.current_membership(db, organization_id, account.id)
    assert mine is not None
    return OrganizationOut.of(org, mine.role)


@router.get("/{organization_id}/members", response_model=list[MemberOut])
def list_members(organization_id: RowIdPath, account: CurrentAccount, db: Db) -> list[MemberOut]:
    """The present members with their roles."""
    accounts.visible_organization(db, organization_id, account)
    return [MemberOut.of(m) for m in accounts.members(db, organization_id)]


@router.post(
    "/{organization_id}/members", status_code=status.HTTP_201_CREATED, response_model=MemberOut
)
def add(
    organization_id: RowIdPath, body: MemberIn, account: CurrentAccount, db: Db, now: Now
) -> MemberOut:
    """Add a person who has an account (owners and admins only)."""
    row = accounts.add_member(db, organization_id, account, body.email, body.role, now)
    db.commit()
    return MemberOut.of(row)


@router.patch("/{organization_id}/members/{account_id}", response_model=MemberOut)
def change(
    organization_id: RowIdPath, account_id: RowIdPath, body: RoleIn, account: CurrentAccount, db: Db
) -> MemberOut:
    """Change a member's role (owners and admins; owners only by owners)."""
    row = accounts.change_role(db, organization_id, account, account_id, body.role)
    db.commit()
    return MemberOut.of(row)


@router.delete("/{organization_id}/members/{account_id}", status_code=status.HTTP_204_NO_CONTENT)
def remove(
    organization_id: RowIdPath, account_id: RowIdPath, account: CurrentAccount, db: Db, now: Now
) -> Response:
    """End a membership: a member may leave; owners and admins remove others."""
    accounts.remove_member(db, organization_id, account, account_id, now)
    db.commit()
    return Response(status_code=status.HTTP_204_NO_CONTENT)
