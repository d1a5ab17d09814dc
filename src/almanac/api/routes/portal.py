"""The portal's publisher routes (DECISIONS 10): an organization's domain and its proof, the
Developer Agreement and its acceptance, plug-in id reservations, and the submission gate.

Naming and proving the domain and accepting the agreement are a person's moves, signed in with
a password ("Authentication" 5): a bearer token is refused for them."""

from __future__ import annotations

from fastapi import APIRouter, status

from almanac.api.deps import Context, CurrentAccount, Db, Now, SessionAccount
from almanac.api.schemas import RowIdPath
from almanac.api.schemas.portal import (
    AgreementAcceptanceOut,
    AgreementAcceptIn,
    AgreementInEffectOut,
    AgreementStandingOut,
    AgreementVersionOut,
    AgreementVersionPath,
    DomainCheckRecordOut,
    DomainIn,
    DomainOut,
    GateOut,
    GateReasonOut,
    PluginIdIn,
    PluginIdOut,
)
from almanac.platform.contract.problems import docs_link
from almanac.platform.publishing import agreement, domains, gate, ids
from almanac.platform.publishing.agreement import Acceptance, AgreementVersion
from almanac.platform.publishing.domains import DomainStatus
from almanac.platform.publishing.ids import IdBinding
from almanac.platform.publishing.roles import require_member

router = APIRouter(prefix="/portal", tags=["portal"])


def domain_out(found: DomainStatus) -> DomainOut:
    check = found.last_check
    return DomainOut(
        organization_id=found.organization_id,
        domain=found.domain,
        state=found.state.value,
        verified=found.verified,
        txt_name=found.txt_name,
        txt_value=found.txt_value,
        file_url=found.file_url,
        named_at=found.named_at,
        proved_by=found.proved_by.value if found.proved_by else None,
        verified_at=found.verified_at,
        next_check_at=found.next_check_at,
        grace_ends_at=found.grace_ends_at,
        lapsed_at=found.lapsed_at,
        last_check=None
        if check is None
        else DomainCheckRecordOut(
            at=check.at,
            kind=check.kind.value,
            dns_proved=check.dns_proved,
            dns_detail=check.dns_detail,
            file_proved=check.file_proved,
            file_detail=check.file_detail,
            state_after=check.state_after.value,
        ),
    )


def version_out(found: AgreementVersion) -> AgreementVersionOut:
    return AgreementVersionOut(
        version=found.version,
        effective_on=found.effective_on,
        changes=found.changes,
        text=found.text,
        posted_at=found.posted_at,
    )


def _acceptance(found: Acceptance) -> AgreementAcceptanceOut:
    return AgreementAcceptanceOut(
        organization_id=found.organization_id,
        version=found.version,
        accepted_by=found.accepted_by,
        accepted_by_email=found.accepted_by_email,
        accepted_at=found.accepted_at,
    )


def _id(found: IdBinding) -> PluginIdOut:
    return PluginIdOut(
        id=found.plugin_id,
        organization_id=found.organization_id,
        kind=found.kind.value,
        bound_at=found.bound_at,
        retired_at=found.retired_at,
    )


@router.get("/organizations/{organization_id}/domain", response_model=DomainOut)
def show_domain(organization_id: RowIdPath, account: CurrentAccount, db: Db) -> DomainOut:
    """The organization's domain, the TXT record and file that prove it, its state and the last
    check; NOT-FOUND before one is named."""
    return domain_out(domains.domain_status(db, organization_id, account))


@router.put("/organizations/{organization_id}/domain", response_model=DomainOut)
def name_domain(
    organization_id: RowIdPath, body: DomainIn, account: SessionAccount, db: Db, now: Now
) -> DomainOut:
    """Name the organization's domain (owners and admins) and get its proof: a TXT record
    `_almanac-verify.<domain>` or a file `https://<domain>/.well-known/almanac-verify.txt`,
    holding `almanac-verify=<token>`. Another domain than the current one starts over,
    unverified. Refused: an IP address, a name with no dot, a public suffix or shared-hosting
    domain, a domain another organization has verified."""
    found = domains.name_domain(db, organization_id, account, body.domain, now)
    db.commit()
    return domain_out(found)


@router.post("/organizations/{organization_id}/domain/check", response_model=DomainOut)
def check_domain(
    organization_id: RowIdPath, account: SessionAccount, db: Db, ctx: Context, now: Now
) -> DomainOut:
    """Check now (owners and admins): tries the TXT record and the file; the answer's
    `last_check` says what each held and `proved_by` which one proved the domain. Not proved
    yet is an answer, not an error."""
    found = domains.check_now(db, organization_id, account, ctx.domain_prover, now)
    db.commit()
    return domain_out(found)


@router.get("/agreement", response_model=AgreementInEffectOut)
def agreement_in_effect(db: Db, now: Now) -> AgreementInEffectOut:
    """The Developer Agreement version in effect now, with its text, and any version posted to
    take effect later. Needs no sign-in."""
    current = agreement.version_in_effect(db, now)
    later = [
        v for v in agreement.agreement_versions(db) if v.effective_on > agreement.today_of(now)
    ]
    return AgreementInEffectOut(
        in_effect=None if current is None else version_out(current),
        upcoming=[version_out(v) for v in later],
    )


@router.get("/agreement/versions", response_model=list[AgreementVersionOut])
def agreement_versions(db: Db) -> list[AgreementVersionOut]:
    """Every version of the Developer Agreement, oldest first. Needs no sign-in."""
    return [version_out(v) for v in agreement.agreement_versions(db)]


@router.get("/agreement/versions/{version}", response_model=AgreementVersionOut)
def agreement_version(version: AgreementVersionPath, db: Db) -> AgreementVersionOut:
    """One version of the Developer Agreement. Needs no sign-in."""
    return version_out(agreement.agreement_version(db, version))


@router.get("/organizations/{organization_id}/agreement", response_model=AgreementStandingOut)
def agreement_standing(
    organization_id: RowIdPath, account: CurrentAccount, db: Db, now: Now
) -> AgreementStandingOut:
    """Which versions the organization accepted, by whom and when, and whether the version in
    effect is among them."""
    accepted = agreement.organization_acceptances(db, organization_id, account)
    current = agreement.version_in_effect(db, now)
    return AgreementStandingOut(
        in_effect_version=None if current is None else current.version,
        accepted_in_effect=current is not None
        and any(a.version == current.version for a in accepted),
        acceptances=[_acceptance(a) for a in accepted],
    )


@router.post(
    "/organizations/{organization_id}/agreement",
    status_code=status.HTTP_201_CREATED,
    response_model=AgreementAcceptanceOut,
)
def accept_agreement(
    organization_id: RowIdPath,
    body: AgreementAcceptIn,
    account: SessionAccount,
    db: Db,
    now: Now,
) -> AgreementAcceptanceOut:
    """Accept the version in effect (owners and admins), naming the version read; who, when
    and which version are kept. Another version is AGREEMENT-NOT-IN-EFFECT."""
    found = agreement.accept(db, organization_id, account, body.version, now)
    db.commit()
    return _acceptance(found)


@router.get("/organizations/{organization_id}/ids", response_model=list[PluginIdOut])
def list_ids(organization_id: RowIdPath, account: CurrentAccount, db: Db) -> list[PluginIdOut]:
    """The plug-in ids bound to the organization, reserved or uploaded."""
    return [_id(b) for b in ids.organization_ids(db, organization_id, account)]


@router.post(
    "/organizations/{organization_id}/ids",
    status_code=status.HTTP_201_CREATED,
    response_model=PluginIdOut,
)
def reserve_id(
    organization_id: RowIdPath, body: PluginIdIn, account: CurrentAccount, db: Db, now: Now
) -> PluginIdOut:
    """Reserve an id before uploading (owners and admins of an organization with a verified
    domain): it is the organization's for good. Refused: PLG-MANIFEST-ID, PLG-ID-RESERVED,
    PLG-ID-TAKEN, PLG-ID-RETIRED, DOMAIN-NOT-VERIFIED."""
    found = ids.reserve_id(db, organization_id, account, body.id, now)
    db.commit()
    return _id(found)


@router.get("/organizations/{organization_id}/gate", response_model=GateOut)
def submission_gate(
    organization_id: RowIdPath, account: CurrentAccount, db: Db, ctx: Context, now: Now
) -> GateOut:
    """May the organization submit now? Every reason it may not, each with its catalog code:
    DOMAIN-NOT-VERIFIED, DOMAIN-LAPSED, DOMAIN-NOT-INVITED, AGREEMENT-NOT-ACCEPTED."""
    require_member(db, organization_id, account)
    answer = gate.submission_gate(db, organization_id, now)
    base_url = ctx.settings.base_url
    return GateOut(
        organization_id=organization_id,
        may_submit=answer.may_submit,
        reasons=[
            GateReasonOut(
                code=p.code, message=p.message, fix=p.fix, docs=docs_link(p.code, base_url)
            )
            for p in answer.reasons
        ],
    )
