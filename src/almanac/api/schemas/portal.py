"""The shapes of the portal's publishing routes (domain, agreement, ids, submission gate) and
of the staff routes that answer invitation requests and post agreement versions."""

from __future__ import annotations

from datetime import date, datetime
from typing import Annotated, Any

from fastapi import Path
from pydantic import BaseModel, ConfigDict, Field

from almanac.api.schemas import INTEGER_ID_MAX
from almanac.api.schemas.host import FindingOut
from almanac.platform.contract.problems import docs_link
from almanac.platform.publishing.identity.agreement import Acceptance, AgreementVersion
from almanac.platform.publishing.identity.domains import CheckRecord, DomainStatus
from almanac.platform.publishing.identity.ids import IdBinding
from almanac.platform.publishing.identity.invitations import DecisionMade
from almanac.platform.publishing.models import Attestation, CheckStatus, Verdict
from almanac.platform.publishing.publication import rollouts
from almanac.platform.publishing.publication.listings import Retired
from almanac.platform.publishing.publication.publication import SHADOW_MOST
from almanac.platform.publishing.publication.rollouts import REASON_MAX
from almanac.platform.publishing.review import submission
from almanac.platform.publishing.review.gate import GateAnswer
from almanac.platform.publishing.uploads import uploads

AgreementVersionPath = Annotated[int, Path(ge=1, le=INTEGER_ID_MAX)]


class DomainIn(BaseModel):
    domain: str = Field(min_length=1, max_length=253, examples=["examplebank.org"])


class DomainCheckRecordOut(BaseModel):
    """One try of both ways: what the TXT record and the file held."""

    at: datetime
    kind: str = Field(description="manual (Check now) or periodic (the re-check)")
    dns_proved: bool
    dns_detail: str
    file_proved: bool
    file_detail: str
    state_after: str

    @classmethod
    def of(cls, check: CheckRecord) -> DomainCheckRecordOut:
        return cls(
            at=check.at,
            kind=check.kind.value,
            dns_proved=check.dns_proved,
            dns_detail=check.dns_detail,
            file_proved=check.file_proved,
            file_detail=check.file_detail,
            state_after=check.state_after.value,
        )


class DomainOut(BaseModel):
    """The organization's domain, how to prove it and where it stands."""

    organization_id: int
    domain: str
    state: str = Field(description="unverified, verified, grace or lapsed")
    verified: bool = Field(description="whether it carries the verified mark (grace included)")
    txt_name: str = Field(description="where the TXT record goes")
    txt_value: str = Field(description="what the TXT record and the file hold")
    file_url: str = Field(description="where the file goes")
    named_at: datetime
    proved_by: str | None = Field(description="dns or file: the way that last proved it")
    verified_at: datetime | None
    next_check_at: datetime | None
    grace_ends_at: datetime | None
    lapsed_at: datetime | None
    last_check: DomainCheckRecordOut | None

    @classmethod
    def of(cls, found: DomainStatus) -> DomainOut:
        check = found.last_check
        return cls(
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
            last_check=None if check is None else DomainCheckRecordOut.of(check),
        )


class AgreementVersionOut(BaseModel):
    model_config = ConfigDict(from_attributes=True)  # agreement.AgreementVersion, field for field

    version: int
    effective_on: date
    changes: str
    text: str
    posted_at: datetime | None = Field(description="None for version 1, shipped with Almanac")


class AgreementVersionIn(BaseModel):
    effective_on: date
    changes: str = Field(min_length=1, max_length=2000)
    text: str = Field(min_length=1, max_length=200_000)


class AgreementInEffectOut(BaseModel):
    """The version in effect now (None before 1 October 2026) and any posted after it."""

    in_effect: AgreementVersionOut | None
    upcoming: list[AgreementVersionOut]

    @classmethod
    def of(
        cls, current: AgreementVersion | None, later: list[AgreementVersion]
    ) -> AgreementInEffectOut:
        return cls(
            in_effect=None if current is None else AgreementVersionOut.model_validate(current),
            upcoming=[AgreementVersionOut.model_validate(v) for v in later],
        )


class AgreementAcceptIn(BaseModel):
    version: int = Field(ge=1, le=INTEGER_ID_MAX, description="the version in effect, as read")


class AgreementAcceptanceOut(BaseModel):
    model_config = ConfigDict(from_attributes=True)  # agreement.Acceptance, field for field

    organization_id: int
    version: int
    accepted_by: int
    accepted_by_email: str
    accepted_at: datetime


class AgreementStandingOut(BaseModel):
    """The organization's acceptances and whether the version in effect is among them."""

    in_effect_version: int | None
    accepted_in_effect: bool
    acceptances: list[AgreementAcceptanceOut]

    @classmethod
    def of(
        cls, current: AgreementVersion | None, accepted: list[Acceptance]
    ) -> AgreementStandingOut:
        """The organization's `accepted` versions against the version in effect, `current`."""
        return cls(
            in_effect_version=None if current is None else current.version,
            accepted_in_effect=current is not None
            and any(a.version == current.version for a in accepted),
            acceptances=[AgreementAcceptanceOut.model_validate(a) for a in accepted],
        )


class PluginIdIn(BaseModel):
    id: str = Field(min_length=1, max_length=100, examples=["examplebank-rates"])


class PluginIdOut(BaseModel):
    id: str
    organization_id: int | None
    kind: str = Field(description="reservation or upload")
    bound_at: datetime
    retired_at: datetime | None

    @classmethod
    def of(cls, found: IdBinding) -> PluginIdOut:
        return cls(
            id=found.plugin_id,
            organization_id=found.organization_id,
            kind=found.kind.value,
            bound_at=found.bound_at,
            retired_at=found.retired_at,
        )


class GateReasonOut(BaseModel):
    """One reason the organization may not submit, with its catalog code."""

    code: str
    message: str
    fix: str
    docs: str


class GateOut(BaseModel):
    organization_id: int
    may_submit: bool
    reasons: list[GateReasonOut]

    @classmethod
    def of(cls, answer: GateAnswer, base_url: str) -> GateOut:
        """The gate's answer, each reason with its docs link under `base_url`."""
        return cls(
            organization_id=answer.organization_id,
            may_submit=answer.may_submit,
            reasons=[
                GateReasonOut(
                    code=p.code, message=p.message, fix=p.fix, docs=docs_link(p.code, base_url)
                )
                for p in answer.reasons
            ],
        )


class InvitationDecisionOut(BaseModel):
    request_id: int
    domain: str
    decision: str
    decided_at: datetime
    mailed: bool = Field(description="whether the requester was mailed (only when invited)")

    @classmethod
    def of(cls, made: DecisionMade, *, mailed: bool) -> InvitationDecisionOut:
        return cls(
            request_id=made.request_id,
            domain=made.domain,
            decision=made.decision.value,
            decided_at=made.decided_at,
            mailed=mailed,
        )


class UploadCheckOut(BaseModel):
    """One named check of an uploaded version and its findings in the catalog's words."""

    name: str = Field(description="manifest, folder, imports, listing, review or updates")
    status: str = Field(
        description="queued, running, passed or failed (the last two final); could_not_run: "
        "the service could not reach the network (not final: it runs again by itself)"
    )
    findings: list[FindingOut]
    queued_at: datetime
    started_at: datetime | None
    finished_at: datetime | None
    deadline_at: datetime


class UploadDecisionOut(BaseModel):
    """The latest reviewer's decision on an upload, as its organization reads it (the reviewer
    is not named, as in the mail)."""

    decision: Verdict = Field(description="approve, request-changes or reject")
    reason: str
    note: str = Field(description="the reviewer's note; empty when none was written")
    decided_at: datetime


class UploadOut(BaseModel):
    """An uploaded version: who sent it, its state, whether it is listing-only, its checks."""

    id: int
    organization_id: int
    plugin_id: str
    version: str
    digest: str
    state: str = Field(
        description="checking, checked, in_review, approved, changes_requested, rejected, "
        "published, superseded or withdrawn"
    )
    submitted_by: str | None = Field(description="who submitted it for review")
    submitted_at: datetime | None
    agreement_version: int | None = Field(
        description="the Developer Agreement version the submission was made under"
    )
    replaced_by: int | None = Field(
        description="the newer upload that took this one's place in review"
    )
    listing_only: bool = Field(
        description="the same code as an earlier upload or a version at the host, with other "
        "files outside the digest (listing, review)"
    )
    code_upload_id: int | None = Field(description="the earlier upload of the same code")
    code_published: bool = Field(description="the code is a version registered at the host")
    code_approved: bool = Field(
        description="a person approved this code before (a reviewer, or the host by its "
        "digest): that code approval stands for this listing-only version"
    )
    uploaded_by: str
    agent_name: str | None
    uploaded_at: datetime
    withdrawn_by: str | None
    withdrawn_at: datetime | None
    checks_final: bool = Field(description="every check is passed or failed")
    checks_passed: bool = Field(description="every check passed")
    warnings: list[FindingOut] = Field(
        description="warnings of every check (update warnings among them), seen by the "
        "publisher and the reviewer"
    )
    checks: list[UploadCheckOut]
    publish_on_approval: bool = Field(
        description="published the moment a reviewer approves it (chosen when submitting)"
    )
    published_by: str | None
    published_at: datetime | None
    decision: UploadDecisionOut | None = Field(
        description="the latest reviewer's decision with its reason and note; None before one"
    )
    record_diff: dict[str, Any] | None = Field(
        description="for an update, what its run on today's real downloads would change in the "
        "stored records, per series: counts and the first new, revised (old and new content), "
        "moved and missing records (those a snapshot window would count missing), each content "
        "an object; and `removed_series`, each series the version no longer declares with the "
        "`records` kept of it; nothing is written"
    )

    @classmethod
    def of(cls, found: uploads.UploadView, base_url: str) -> UploadOut:
        final = (CheckStatus.PASSED, CheckStatus.FAILED)
        decision = found.decision
        return cls(
            id=found.id,
            organization_id=found.organization_id,
            plugin_id=found.plugin_id,
            version=found.version,
            digest=found.digest,
            state=found.state.value,
            submitted_by=found.submitted_by,
            submitted_at=found.submitted_at,
            agreement_version=found.agreement_version,
            replaced_by=found.replaced_by,
            listing_only=found.listing_only,
            code_upload_id=found.code_upload_id,
            code_published=found.code_published,
            code_approved=found.code_approved,
            uploaded_by=found.uploaded_by,
            agent_name=found.agent_name,
            uploaded_at=found.uploaded_at,
            withdrawn_by=found.withdrawn_by,
            withdrawn_at=found.withdrawn_at,
            publish_on_approval=found.publish_on_approval,
            published_by=found.published_by,
            published_at=found.published_at,
            checks_final=all(c.status in final for c in found.checks),
            checks_passed=all(c.status is CheckStatus.PASSED for c in found.checks),
            warnings=FindingOut.all_of(found.warnings, base_url),
            checks=[
                UploadCheckOut(
                    name=c.name,
                    status=c.status.value,
                    findings=FindingOut.all_of(c.findings, base_url),
                    queued_at=c.queued_at,
                    started_at=c.started_at,
                    finished_at=c.finished_at,
                    deadline_at=c.deadline_at,
                )
                for c in found.checks
            ],
            record_diff=None if found.record_diff is None else dict(found.record_diff),
            decision=None
            if decision is None
            else UploadDecisionOut(
                decision=decision.decision,
                reason=decision.reason,
                note=decision.note,
                decided_at=decision.decided_at,
            ),
        )


class ReviewInformationOut(BaseModel):
    """An upload's review information and why it is not complete for submitting."""

    upload_id: int
    source: str | None = Field(
        description="sent (sent separately), upload (its review.json) or None (none yet)"
    )
    document: Any = Field(description="the review information (review.json's object)")
    sent_by: str | None
    sent_at: datetime | None
    complete: bool
    problems: list[FindingOut] = Field(
        description="PLG-REVIEW-INVALID and PLG-REVIEW-INCOMPLETE findings; empty when complete"
    )

    @classmethod
    def of(cls, found: submission.ReviewInformationView, base_url: str) -> ReviewInformationOut:
        return cls(
            upload_id=found.upload_id,
            source=found.source,
            document=found.document,
            sent_by=found.sent_by,
            sent_at=found.sent_at,
            complete=not found.problems,
            problems=FindingOut.all_of(found.problems, base_url),
        )


class AttestationsIn(BaseModel):
    attestations: list[Attestation] = Field(min_length=1, max_length=5)


class AttestationOut(BaseModel):
    """One attestation made in the organization's name for a version: who and when."""

    model_config = ConfigDict(from_attributes=True)  # submission.AttestationMade, field for field

    attestation: Attestation
    words: str
    made_by: str
    agent_name: str | None
    made_at: datetime


class SubmittedOut(BaseModel):
    """The upload now in review, and the upload of the same plug-in it replaced there."""

    upload: UploadOut
    replaced: UploadOut | None

    @classmethod
    def of(cls, done: submission.Submitted, base_url: str) -> SubmittedOut:
        return cls(
            upload=UploadOut.of(done.upload, base_url),
            replaced=None if done.replaced is None else UploadOut.of(done.replaced, base_url),
        )


class SubmitIn(BaseModel):
    publish_on_approval: bool = Field(
        default=False, description="publish the version the moment a reviewer approves it"
    )


class ListingOut(BaseModel):
    """A published plug-in's listing and the service's shelf and takedown acting on it."""

    model_config = ConfigDict(from_attributes=True)  # listings.ListingView, field for field

    plugin_id: str
    organization_id: int
    upload_id: int = Field(description="the published upload")
    version: str
    state: str = Field(description="listed, unlisted, shelved, taken-down or retired")
    listed: bool
    shelved: bool
    taken_down: bool
    retired: bool
    in_store: bool = Field(description="readers find it in the store and may newly install it")
    published_at: datetime
    retired_at: datetime | None
    takedown_message: str | None


class RetireIn(BaseModel):
    confirm: str = Field(max_length=48, description="the plug-in id, typed to confirm")


class RetiredOut(BaseModel):
    """The retired listing and the uploads withdrawn with it."""

    listing: ListingOut
    withdrawn: list[int]

    @classmethod
    def of(cls, done: Retired) -> RetiredOut:
        return cls(listing=ListingOut.model_validate(done.listing), withdrawn=list(done.withdrawn))


class ListingMoveOut(BaseModel):
    """One move of a plug-in's listing, with who made it and when."""

    model_config = ConfigDict(from_attributes=True)  # read off the history.RecordedMove

    action: str
    by: str
    at: datetime
    detail: dict[str, Any] | None


class NoticeOut(BaseModel):
    """What the portal told the organization (also mailed to its owners and admins)."""

    model_config = ConfigDict(from_attributes=True)  # notices.Notice, field for field

    id: int
    plugin_id: str
    upload_id: int | None
    kind: str
    subject: str
    body: str
    at: datetime


class PublishIn(BaseModel):
    """How to publish an approved version: at once (`shadow` 0, the default), or after a
    shadow period of 1 to 5 runs of an update of a live plug-in (README, Rollouts)."""

    shadow: int = Field(default=0, ge=0, le=SHADOW_MOST)


class RolloutMoveIn(BaseModel):
    """Promote early, stop, or roll back: with why."""

    reason: str = Field(min_length=1, max_length=REASON_MAX)


class ShadowRunOut(BaseModel):
    """One shadow run: the run it shadowed, its outcome, its time, the diff's counts per series
    and a link to the full diff."""

    model_config = ConfigDict(from_attributes=True)  # rollouts.ShadowRunView, field for field

    id: int
    run_id: int
    today: date
    passed: bool
    reason: str | None
    seconds: float
    at: datetime
    summary: dict[str, dict[str, int]]
    removed_series: dict[str, int]


class RolloutOut(BaseModel):
    """A rollout: its state, shadow runs done of its period, each shadow run."""

    id: int
    organization_id: int
    plugin_id: str
    upload_id: int
    version: str
    from_version: str
    state: str
    shadow_runs: int
    runs_done: int
    started_by: str
    started_at: datetime
    ended_by: str | None
    ended_at: datetime | None
    reason: str | None
    shadows: list[ShadowRunOut]
    diff_links: list[str]

    @classmethod
    def of(cls, found: rollouts.RolloutView, base_url: str) -> RolloutOut:
        base = (
            f"{base_url}/api/v1/portal/organizations/{found.organization_id}/plugins/"
            f"{found.plugin_id}/shadow-runs"
        )
        fields = {f: getattr(found, f) for f in cls.model_fields if f not in ("diff_links",)}
        return cls.model_validate(
            {
                **fields,
                "state": str(found.state),
                "shadows": [ShadowRunOut.model_validate(s) for s in found.shadows],
                "diff_links": [f"{base}/{s.id}/diff" for s in found.shadows],
            }
        )
