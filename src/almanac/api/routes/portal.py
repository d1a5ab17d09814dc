"""The portal's publisher routes (DECISIONS 10): an organization's domain and its proof, the
Developer Agreement and its acceptance, plug-in id reservations, and the submission gate.

Naming and proving the domain and accepting the agreement are a person's moves, signed in with
a password ("Authentication" 5): a bearer token is refused for them (an agent's with
AGENT_FORBIDDEN). Each route names the move an agent's token would make (`acting`,
`person_only`); `agents.agent_may` decides, from its one table, whether an agent may.

Uploads ("Version in the portal"): the packed archive is the raw body with
`Content-Type: application/zip` (415 otherwise), as the host's pack route takes it; the static
checks answer at once; an organization's uploads are 404 to anyone outside it."""

from __future__ import annotations

import re
from typing import Annotated, Any

from fastapi import APIRouter, Body, Depends, Request, Response, status

from almanac.api.deps import Actor, Context, Db, Now, Reading, acting, person_only
from almanac.api.problems import ProblemError
from almanac.api.schemas import RowIdPath
from almanac.api.schemas.portal import (
    AgreementAcceptanceOut,
    AgreementAcceptIn,
    AgreementInEffectOut,
    AgreementStandingOut,
    AgreementVersionOut,
    AgreementVersionPath,
    AttestationOut,
    AttestationsIn,
    DomainIn,
    DomainOut,
    GateOut,
    PluginIdIn,
    PluginIdOut,
    ReviewInformationOut,
    SubmitIn,
    SubmittedOut,
    UploadOut,
)
from almanac.platform.accounts import Account
from almanac.platform.agents import AgentAction
from almanac.platform.contract.pack import MAX_ARCHIVE_BYTES
from almanac.platform.publishing.identity import agreement, domains, ids
from almanac.platform.publishing.identity.roles import require_member
from almanac.platform.publishing.review import gate, submission
from almanac.platform.publishing.uploads import uploads

router = APIRouter(prefix="/portal", tags=["portal"])

# Who may make each move: a person, or an agent's token where `agents.agent_may` allows the
# move named here ("Authentication" 4-5); person-only moves need a password sign-in.
Uploading = Annotated[Actor, acting(AgentAction.UPLOAD)]
Withdrawing = Annotated[Actor, acting(AgentAction.WITHDRAW)]
Rerunning = Annotated[Actor, acting(AgentAction.RERUN_CHECKS)]
SendingReview = Annotated[Actor, acting(AgentAction.SEND_REVIEW_INFORMATION)]
Attesting = Annotated[Actor, acting(AgentAction.ATTEST)]
Submitting = Annotated[Actor, acting(AgentAction.SUBMIT)]
Reserving = Annotated[Actor, acting(AgentAction.RESERVE_ID)]
NamingDomain = Annotated[Account, person_only(AgentAction.NAME_DOMAIN)]
VerifyingDomain = Annotated[Account, person_only(AgentAction.VERIFY_DOMAIN)]
AcceptingAgreement = Annotated[Account, person_only(AgentAction.ACCEPT_AGREEMENT)]


@router.get("/organizations/{organization_id}/domain", response_model=DomainOut)
def show_domain(organization_id: RowIdPath, actor: Reading, db: Db) -> DomainOut:
    """The organization's domain, the TXT record and file that prove it, its state and the last
    check; NOT-FOUND before one is named."""
    return DomainOut.of(domains.domain_status(db, organization_id, actor.account))


@router.put("/organizations/{organization_id}/domain", response_model=DomainOut)
def name_domain(
    organization_id: RowIdPath, body: DomainIn, account: NamingDomain, db: Db, now: Now
) -> DomainOut:
    """Name the organization's domain (owners and admins) and get its proof: a TXT record
    `_almanac-verify.<domain>` or a file `https://<domain>/.well-known/almanac-verify.txt`,
    holding `almanac-verify=<token>`. Another domain than the current one starts over,
    unverified. Refused: an IP address, a name with no dot, a public suffix or shared-hosting
    domain, a domain another organization has verified."""
    found = domains.name_domain(db, organization_id, account, body.domain, now)
    db.commit()
    return DomainOut.of(found)


@router.post(
    "/organizations/{organization_id}/domain/check",
    response_model=DomainOut,
    responses={429: {"description": "DOMAIN-CHECK-LIMITED: see Retry-After"}},
)
def check_domain(
    organization_id: RowIdPath, account: VerifyingDomain, db: Db, ctx: Context, now: Now
) -> DomainOut:
    """Check now (owners and admins): tries the TXT record and the file; the answer's
    `last_check` says what each held and `proved_by` which one proved the domain. Not proved
    yet is an answer, not an error. At most 10 an hour per organization: past it, 429 with
    `Retry-After` (DOMAIN-CHECK-LIMITED)."""
    found = domains.check_now(db, organization_id, account, ctx.domain_prover, now)
    db.commit()
    return DomainOut.of(found)


@router.get("/agreement", response_model=AgreementInEffectOut)
def agreement_in_effect(db: Db, now: Now) -> AgreementInEffectOut:
    """The Developer Agreement version in effect now, with its text, and any version posted to
    take effect later. Needs no sign-in."""
    current = agreement.version_in_effect(db, now)
    later = [
        v for v in agreement.agreement_versions(db) if v.effective_on > agreement.today_of(now)
    ]
    return AgreementInEffectOut.of(current, later)


@router.get("/agreement/versions", response_model=list[AgreementVersionOut])
def agreement_versions(db: Db) -> list[AgreementVersionOut]:
    """Every version of the Developer Agreement, oldest first. Needs no sign-in."""
    return [AgreementVersionOut.model_validate(v) for v in agreement.agreement_versions(db)]


@router.get("/agreement/versions/{version}", response_model=AgreementVersionOut)
def agreement_version(version: AgreementVersionPath, db: Db) -> AgreementVersionOut:
    """One version of the Developer Agreement. Needs no sign-in."""
    return AgreementVersionOut.model_validate(agreement.agreement_version(db, version))


@router.get("/organizations/{organization_id}/agreement", response_model=AgreementStandingOut)
def agreement_standing(
    organization_id: RowIdPath, actor: Reading, db: Db, now: Now
) -> AgreementStandingOut:
    """Which versions the organization accepted, by whom and when, and whether the version in
    effect is among them."""
    accepted = agreement.organization_acceptances(db, organization_id, actor.account)
    current = agreement.version_in_effect(db, now)
    return AgreementStandingOut.of(current, accepted)


@router.post(
    "/organizations/{organization_id}/agreement",
    status_code=status.HTTP_201_CREATED,
    response_model=AgreementAcceptanceOut,
)
def accept_agreement(
    organization_id: RowIdPath,
    body: AgreementAcceptIn,
    account: AcceptingAgreement,
    db: Db,
    now: Now,
) -> AgreementAcceptanceOut:
    """Accept the version in effect (owners and admins), naming the version read; who, when
    and which version are kept. Another version is AGREEMENT-NOT-IN-EFFECT."""
    found = agreement.accept(db, organization_id, account, body.version, now)
    db.commit()
    return AgreementAcceptanceOut.model_validate(found)


@router.get("/organizations/{organization_id}/ids", response_model=list[PluginIdOut])
def list_ids(organization_id: RowIdPath, actor: Reading, db: Db) -> list[PluginIdOut]:
    """The plug-in ids bound to the organization, reserved or uploaded."""
    return [PluginIdOut.of(b) for b in ids.organization_ids(db, organization_id, actor.account)]


@router.post(
    "/organizations/{organization_id}/ids",
    status_code=status.HTTP_201_CREATED,
    response_model=PluginIdOut,
)
def reserve_id(
    organization_id: RowIdPath, body: PluginIdIn, actor: Reserving, db: Db, now: Now
) -> PluginIdOut:
    """Reserve an id before uploading (owners and admins of an organization with a verified
    domain): it is the organization's for good. Refused: PLG-MANIFEST-ID, PLG-ID-RESERVED,
    PLG-ID-TAKEN, PLG-ID-RETIRED, DOMAIN-NOT-VERIFIED."""
    found = ids.reserve_id(db, organization_id, actor.account, body.id, now)
    db.commit()
    return PluginIdOut.of(found)


@router.get("/organizations/{organization_id}/gate", response_model=GateOut)
def submission_gate(
    organization_id: RowIdPath, actor: Reading, db: Db, ctx: Context, now: Now
) -> GateOut:
    """May the organization submit now? Every reason it may not, each with its catalog code:
    DOMAIN-NOT-VERIFIED, DOMAIN-LAPSED, DOMAIN-NOT-INVITED, AGREEMENT-NOT-ACCEPTED."""
    require_member(db, organization_id, actor.account)
    answer = gate.submission_gate(db, organization_id, now)
    return GateOut.of(answer, ctx.settings.base_url)


UPLOAD_PATH = re.compile(r"/api/v1/portal/organizations/[0-9]+/uploads")
UPLOAD_BODY_LIMIT = 2 * MAX_ARCHIVE_BYTES
"""Above the archive limit, so an archive just over it is answered PLG-ZIP-TOO-LARGE."""
PACK_MEDIA_TYPE = "application/zip"
UploadIdPath = RowIdPath


async def _archive(request: Request) -> bytes:
    """The raw body, only when sent as `Content-Type: application/zip` (else 415)."""
    media_type = request.headers.get("content-type", "").split(";", 1)[0].strip().lower()
    if media_type != PACK_MEDIA_TYPE:
        sent = f"Content-Type {media_type}" if media_type else "no Content-Type"
        raise ProblemError(
            415,
            "REQUEST-MEDIA-TYPE",
            f"the pack is sent as the raw archive with Content-Type {PACK_MEDIA_TYPE}, "
            f"not with {sent}",
        )
    return await request.body()


@router.post(
    "/organizations/{organization_id}/uploads",
    status_code=status.HTTP_201_CREATED,
    response_model=UploadOut,
    responses={200: {"model": UploadOut, "description": "the same bytes were uploaded before"}},
    openapi_extra={
        "requestBody": {
            "required": True,
            "content": {"application/zip": {"schema": {"type": "string", "format": "binary"}}},
        }
    },
)
def upload_version(
    archive: Annotated[bytes, Depends(_archive)],
    organization_id: RowIdPath,
    actor: Uploading,
    ctx: Context,
    db: Db,
    now: Now,
    response: Response,
) -> UploadOut:
    """Upload a packed plug-in (owners and admins; DECISIONS 5) as the raw body. Refused, and
    nothing stored: every PLG-ZIP-*, code file types and 1 MiB of covered code, the manifest
    (PLG-SCHEDULE-TOO-FREQUENT among its rules), the folder and imports, PLG-STORE-AUDIENCE,
    PLG-LICENCE-TERMS-MISSING, PLG-ID-TAKEN, PLG-ID-RETIRED, PLG-VERSION-REUSED,
    PLG-VERSION-NOT-GREATER, the update rules of "Versioning" 4, PLG-QUOTA-UPLOADS and
    PLG-QUOTA-CHECKING (429). The same bytes again answer that version (200); the same code
    with a new listing is a listing-only version. The answer holds the static checks."""
    # The body is read before the role check (the parameter order); the role check's
    # transaction ends before the archive checks, which must not hold the write lock of the
    # embedded default; the upload's own transaction follows.
    uploads.require_uploader(db, organization_id, actor.account)
    db.commit()
    examined = uploads.examine(archive, ctx.imports)
    answer = uploads.upload(
        db, organization_id, actor.account, examined, now, agent_name=actor.agent_name
    )
    db.commit()
    if not answer.created:
        response.status_code = status.HTTP_200_OK
    return UploadOut.of(answer.upload, ctx.settings.base_url)


@router.get("/organizations/{organization_id}/uploads", response_model=list[UploadOut])
def list_uploads(
    organization_id: RowIdPath, actor: Reading, ctx: Context, db: Db
) -> list[UploadOut]:
    """The organization's uploaded versions, newest first, with their checks (members)."""
    return [
        UploadOut.of(u, ctx.settings.base_url)
        for u in uploads.organization_uploads(db, organization_id, actor.account)
    ]


@router.get("/organizations/{organization_id}/uploads/{upload_id}", response_model=UploadOut)
def show_upload(
    organization_id: RowIdPath,
    upload_id: UploadIdPath,
    actor: Reading,
    ctx: Context,
    db: Db,
) -> UploadOut:
    """One uploaded version with its checks and findings (members; 404 to anyone else)."""
    found = uploads.show_upload(db, organization_id, actor.account, upload_id)
    return UploadOut.of(found, ctx.settings.base_url)


@router.post(
    "/organizations/{organization_id}/uploads/{upload_id}/withdraw", response_model=UploadOut
)
def withdraw_upload(
    organization_id: RowIdPath,
    upload_id: UploadIdPath,
    actor: Withdrawing,
    ctx: Context,
    db: Db,
    now: Now,
) -> UploadOut:
    """Withdraw an upload (owners and admins); withdrawn already is STATE-CONFLICT."""
    found = uploads.withdraw(db, organization_id, actor.account, upload_id, now)
    db.commit()
    return UploadOut.of(found, ctx.settings.base_url)


@router.post(
    "/organizations/{organization_id}/uploads/{upload_id}/checks", response_model=UploadOut
)
def rerun_checks(
    organization_id: RowIdPath,
    upload_id: UploadIdPath,
    actor: Rerunning,
    ctx: Context,
    db: Db,
    now: Now,
) -> UploadOut:
    """Re-run the checks of an upload (owners and admins; PLG-QUOTA-CHECKING applies)."""
    found = uploads.rerun_checks(db, organization_id, actor.account, upload_id, now)
    db.commit()
    return UploadOut.of(found, ctx.settings.base_url)


@router.get(
    "/organizations/{organization_id}/uploads/{upload_id}/review",
    response_model=ReviewInformationOut,
)
def show_review_information(
    organization_id: RowIdPath,
    upload_id: UploadIdPath,
    actor: Reading,
    ctx: Context,
    db: Db,
) -> ReviewInformationOut:
    """The upload's review information (sent separately, else its review.json) and every way
    it is not complete for submitting (members)."""
    found = submission.review_information(db, organization_id, actor.account, upload_id)
    return ReviewInformationOut.of(found, ctx.settings.base_url)


@router.put("/organizations/{organization_id}/uploads/{upload_id}/review", response_model=UploadOut)
def send_review_information(
    organization_id: RowIdPath,
    upload_id: UploadIdPath,
    document: Annotated[dict[str, Any], Body(description="review.json's object")],
    actor: SendingReview,
    ctx: Context,
    db: Db,
    now: Now,
) -> UploadOut:
    """Send review information separately (owners and admins): review.json's object, which
    takes the place of the upload's review.json; the checks run again (PLG-QUOTA-CHECKING
    applies). Refused: PLG-REVIEW-INVALID (422, every finding); STATE-CONFLICT for an upload
    withdrawn, in review or being checked."""
    found = submission.send_review_information(
        db, organization_id, actor.account, upload_id, document, now
    )
    db.commit()
    return UploadOut.of(found, ctx.settings.base_url)


@router.get(
    "/organizations/{organization_id}/uploads/{upload_id}/attestations",
    response_model=list[AttestationOut],
)
def list_attestations(
    organization_id: RowIdPath, upload_id: UploadIdPath, actor: Reading, db: Db
) -> list[AttestationOut]:
    """The attestations made for the upload's version, with who and when (members)."""
    return [
        AttestationOut.model_validate(a)
        for a in submission.attestations(db, organization_id, actor.account, upload_id)
    ]


@router.post(
    "/organizations/{organization_id}/uploads/{upload_id}/attestations",
    response_model=list[AttestationOut],
)
def make_attestations(
    organization_id: RowIdPath,
    upload_id: UploadIdPath,
    body: AttestationsIn,
    actor: Attesting,
    db: Db,
    now: Now,
) -> list[AttestationOut]:
    """Make attestations in the organization's name for the upload's version (owners and
    admins); each is kept once with who and when. Answers every attestation made so far."""
    made = submission.attest(
        db,
        organization_id,
        actor.account,
        upload_id,
        body.attestations,
        now,
        agent_name=actor.agent_name,
    )
    db.commit()
    return [AttestationOut.model_validate(a) for a in made]


@router.post(
    "/organizations/{organization_id}/uploads/{upload_id}/submit", response_model=SubmittedOut
)
def submit_upload(
    organization_id: RowIdPath,
    upload_id: UploadIdPath,
    actor: Submitting,
    ctx: Context,
    db: Db,
    now: Now,
    body: SubmitIn | None = None,
) -> SubmittedOut:
    """Submit the upload for review (owners and admins). Refused (409 SUBMIT-REFUSED) with
    every reason at once in `findings` until all hold: SUBMIT-CHECKS-NOT-PASSED,
    PLG-REVIEW-INVALID, PLG-REVIEW-INCOMPLETE, SUBMIT-ATTESTATION-MISSING,
    AGREEMENT-NOT-ACCEPTED, DOMAIN-NOT-VERIFIED, DOMAIN-LAPSED, DOMAIN-NOT-INVITED,
    PLG-QUOTA-REVIEW. The plug-in's upload in review, if any, is withdrawn in the same step
    (`replaced`). With `publish_on_approval` the version is published the moment a reviewer
    approves it."""
    chosen = body is not None and body.publish_on_approval
    done = submission.submit(
        db, organization_id, actor.account, upload_id, now, publish_on_approval=chosen
    )
    db.commit()
    return SubmittedOut.of(done, ctx.settings.base_url)


@router.get(
    "/organizations/{organization_id}/uploads/{upload_id}/manifest",
    response_model=dict[str, Any],
)
def show_upload_manifest(
    organization_id: RowIdPath, upload_id: UploadIdPath, actor: Reading, db: Db
) -> dict[str, Any]:
    """The upload's plugin.json as uploaded (members): what `check --against <version id>`
    compares a folder with (the update rules and the version number)."""
    return uploads.upload_manifest(db, organization_id, actor.account, upload_id)
