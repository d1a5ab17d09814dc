"""Tables of publishing: domain claims and checks, invitations, agreement, id bindings,
portal uploads and their static and room checks, review information and decisions, and the
portal's notices (a published plug-in's store listing is the store's: `store/models.py`)."""

from __future__ import annotations

from datetime import date, datetime
from enum import StrEnum
from typing import Any

from sqlalchemy import (
    JSON,
    Boolean,
    CheckConstraint,
    Date,
    Float,
    ForeignKey,
    Index,
    Integer,
    LargeBinary,
    String,
    Text,
    UniqueConstraint,
    text,
)
from sqlalchemy.orm import Mapped, mapped_column

from almanac.platform.store.base import Base
from almanac.platform.store.models import BigId
from almanac.platform.store.types import UTCDateTime


class DomainState(StrEnum):
    """ "States and transitions", Organization domain."""

    UNVERIFIED = "unverified"
    VERIFIED = "verified"
    GRACE = "grace"
    LAPSED = "lapsed"


class ProofWay(StrEnum):
    DNS = "dns"
    FILE = "file"


class CheckKind(StrEnum):
    MANUAL = "manual"  # "Check now" by an owner or admin
    PERIODIC = "periodic"  # the re-check every 30 days (daily during the grace)


class Decision(StrEnum):
    INVITED = "invited"
    DECLINED = "declined"


class BindingKind(StrEnum):
    UPLOAD = "upload"
    RESERVATION = "reservation"
    HOST = "host"  # registered at the host; kept here once the id is retired


def _in(column: str, values: type[StrEnum]) -> str:
    return f"{column} IN ({', '.join(repr(v.value) for v in values)})"


class DomainClaim(Base):
    """An organization's domain and its proof state. Naming another domain ends the claim
    (`ended_at`) and starts a new one; one claim per organization is current."""

    __tablename__ = "domain_claims"
    __table_args__ = (
        CheckConstraint(_in("state", DomainState), name="state"),
        CheckConstraint(f"proved_by IS NULL OR {_in('proved_by', ProofWay)}", name="proved_by"),
        Index(
            "uq_domain_claims_current",
            "organization_id",
            unique=True,
            postgresql_where=text("ended_at IS NULL"),
            sqlite_where=text("ended_at IS NULL"),
        ),
        # A domain is verified (its grace included) by one organization at a time.
        Index(
            "uq_domain_claims_verified_domain",
            "domain",
            unique=True,
            postgresql_where=text("ended_at IS NULL AND state IN ('verified', 'grace')"),
            sqlite_where=text("ended_at IS NULL AND state IN ('verified', 'grace')"),
        ),
        Index("ix_domain_claims_due", "next_check_at"),
    )

    id: Mapped[int] = mapped_column(primary_key=True)
    organization_id: Mapped[int] = mapped_column(ForeignKey("organizations.id", ondelete="CASCADE"))
    domain: Mapped[str] = mapped_column(String(253))
    token: Mapped[str] = mapped_column(String(64))
    state: Mapped[str] = mapped_column(String(16))
    named_by: Mapped[int] = mapped_column(ForeignKey("accounts.id"))
    named_at: Mapped[datetime] = mapped_column(UTCDateTime())
    proved_by: Mapped[str | None] = mapped_column(String(8))
    verified_at: Mapped[datetime | None] = mapped_column(UTCDateTime())
    last_proved_at: Mapped[datetime | None] = mapped_column(UTCDateTime())
    next_check_at: Mapped[datetime | None] = mapped_column(UTCDateTime())
    grace_started_at: Mapped[datetime | None] = mapped_column(UTCDateTime())
    grace_ends_at: Mapped[datetime | None] = mapped_column(UTCDateTime())
    lapsed_at: Mapped[datetime | None] = mapped_column(UTCDateTime())
    ended_at: Mapped[datetime | None] = mapped_column(UTCDateTime())

    def __repr__(self) -> str:
        return f"DomainClaim(id={self.id!r}, state={self.state!r})"


class DomainCheck(Base):
    """One try of both proofs of a claim, by hand or periodic, with what each way found."""

    __tablename__ = "domain_checks"
    __table_args__ = (
        CheckConstraint(_in("kind", CheckKind), name="kind"),
        Index("ix_domain_checks_claim_id_at", "claim_id", "at"),
    )

    id: Mapped[int] = mapped_column(primary_key=True)
    claim_id: Mapped[int] = mapped_column(ForeignKey("domain_claims.id", ondelete="CASCADE"))
    at: Mapped[datetime] = mapped_column(UTCDateTime())
    kind: Mapped[str] = mapped_column(String(16))
    by_account_id: Mapped[int | None] = mapped_column(ForeignKey("accounts.id"))
    dns_proved: Mapped[bool] = mapped_column(Boolean)
    dns_detail: Mapped[str] = mapped_column(Text)
    file_proved: Mapped[bool] = mapped_column(Boolean)
    file_detail: Mapped[str] = mapped_column(Text)
    state_after: Mapped[str] = mapped_column(String(16))


class InvitationDecision(Base):
    """Staff's answer to an invitation request. An invitation belongs to the request's domain."""

    __tablename__ = "invitation_decisions"
    __table_args__ = (
        CheckConstraint(_in("decision", Decision), name="decision"),
        Index("ix_invitation_decisions_domain", "domain"),
    )

    id: Mapped[int] = mapped_column(primary_key=True)
    request_id: Mapped[int] = mapped_column(ForeignKey("invitation_requests.id"), unique=True)
    domain: Mapped[str] = mapped_column(String(253))
    decision: Mapped[str] = mapped_column(String(16))
    decided_by: Mapped[int] = mapped_column(ForeignKey("accounts.id"))
    decided_at: Mapped[datetime] = mapped_column(UTCDateTime())


class PostedAgreementVersion(Base):
    """A Developer Agreement version posted by staff (version 1 ships with the service)."""

    __tablename__ = "agreement_versions"

    version: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=False)
    effective_on: Mapped[date] = mapped_column(Date)
    changes: Mapped[str] = mapped_column(Text)
    text: Mapped[str] = mapped_column(Text)
    posted_by: Mapped[int] = mapped_column(ForeignKey("accounts.id"))
    posted_at: Mapped[datetime] = mapped_column(UTCDateTime())


class AgreementAcceptance(Base):
    """An organization's acceptance of one agreement version: who and when."""

    __tablename__ = "agreement_acceptances"
    __table_args__ = (UniqueConstraint("organization_id", "version"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    organization_id: Mapped[int] = mapped_column(ForeignKey("organizations.id", ondelete="CASCADE"))
    version: Mapped[int] = mapped_column(Integer)
    accepted_by: Mapped[int] = mapped_column(ForeignKey("accounts.id"))
    accepted_at: Mapped[datetime] = mapped_column(UTCDateTime())


class PluginIdBinding(Base):
    """A plug-in id bound for good to the organization that first uploaded or reserved it;
    `organization_id` None is the service itself. Ids registered at the host are bound by
    their `plugins` row and get a row here only when retired."""

    __tablename__ = "plugin_id_bindings"
    __table_args__ = (CheckConstraint(_in("kind", BindingKind), name="kind"),)

    plugin_id: Mapped[str] = mapped_column(String(48), primary_key=True)
    organization_id: Mapped[int | None] = mapped_column(ForeignKey("organizations.id"), index=True)
    kind: Mapped[str] = mapped_column(String(16))
    bound_by: Mapped[str] = mapped_column(String(320))
    bound_at: Mapped[datetime] = mapped_column(UTCDateTime())
    retired_at: Mapped[datetime | None] = mapped_column(UTCDateTime())


class UploadState(StrEnum):
    """ "States and transitions", Version in the portal."""

    CHECKING = "checking"  # a check is queued or running
    CHECKED = "checked"  # every check reached its final state
    IN_REVIEW = "in_review"
    APPROVED = "approved"  # a reviewer approved exactly its reviewed content
    CHANGES_REQUESTED = "changes_requested"
    REJECTED = "rejected"
    PUBLISHED = "published"  # the plug-in's published version, running
    SUPERSEDED = "superseded"  # published once; a later version took its place
    WITHDRAWN = "withdrawn"


PREPARING = frozenset({UploadState.CHECKING, UploadState.CHECKED, UploadState.CHANGES_REQUESTED})
"""Upload states whose review information and attestations may still change."""


class Verdict(StrEnum):
    """A reviewer's decision on a version in review ("Version in the portal", in review)."""

    APPROVE = "approve"
    REQUEST_CHANGES = "request-changes"
    REJECT = "reject"


class CheckStatus(StrEnum):
    """The named status of one check of an uploaded version; passed and failed are final.
    `could_not_run`: the service's own network was down (`publishing.uploads.network`), which
    says nothing of the version; the check runs again by itself once the network is back."""

    QUEUED = "queued"
    RUNNING = "running"
    PASSED = "passed"
    FAILED = "failed"
    COULD_NOT_RUN = "could_not_run"


class PortalUpload(Base):
    """A version uploaded in the portal: the archive as sent, its code digest, who sent it.
    `code_upload_id` names the first upload of the same code when this one is listing-only."""

    __tablename__ = "portal_uploads"
    __table_args__ = (
        CheckConstraint(_in("state", UploadState), name="state"),
        Index("ix_portal_uploads_organization_id_uploaded_at", "organization_id", "uploaded_at"),
        Index("ix_portal_uploads_plugin_id", "plugin_id"),
    )

    id: Mapped[int] = mapped_column(primary_key=True)
    organization_id: Mapped[int] = mapped_column(ForeignKey("organizations.id"))
    plugin_id: Mapped[str] = mapped_column(String(48))
    version: Mapped[str] = mapped_column(String(32))
    digest: Mapped[str] = mapped_column(String(80))
    content_hash: Mapped[str] = mapped_column(String(64))
    code_upload_id: Mapped[int | None] = mapped_column(ForeignKey("portal_uploads.id"))
    code_published: Mapped[bool] = mapped_column(Boolean)
    manifest: Mapped[dict[str, Any]] = mapped_column(JSON)
    archive: Mapped[bytes] = mapped_column(LargeBinary)
    state: Mapped[str] = mapped_column(String(24))
    uploaded_by: Mapped[str] = mapped_column(String(320))
    agent_name: Mapped[str | None] = mapped_column(String(200))
    uploaded_at: Mapped[datetime] = mapped_column(UTCDateTime())
    withdrawn_by: Mapped[str | None] = mapped_column(String(320))
    withdrawn_at: Mapped[datetime | None] = mapped_column(UTCDateTime())
    record_diff: Mapped[dict[str, Any] | None] = mapped_column(JSON)
    submitted_by: Mapped[str | None] = mapped_column(String(320))
    submitted_at: Mapped[datetime | None] = mapped_column(UTCDateTime())
    agreement_version: Mapped[int | None] = mapped_column(Integer)
    replaced_by: Mapped[int | None] = mapped_column(Integer)
    """The upload that took this one's place in review (withdraw-and-submit in one step)."""
    publish_on_approval: Mapped[bool] = mapped_column(
        Boolean, default=False, server_default=text("false")
    )
    """Chosen when submitting: the version is published the moment a reviewer approves it."""
    published_by: Mapped[str | None] = mapped_column(String(320))
    published_at: Mapped[datetime | None] = mapped_column(UTCDateTime())


class UploadCheck(Base):
    """One named check of an uploaded version, or of a version registered at the host
    (`version_id`), its status, deadline and findings (a list of {code, message, path, line})."""

    __tablename__ = "portal_upload_checks"
    __table_args__ = (
        CheckConstraint(_in("status", CheckStatus), name="status"),
        CheckConstraint("(upload_id IS NULL) <> (version_id IS NULL)", name="one_subject"),
        Index("ix_portal_upload_checks_upload_id", "upload_id"),
        Index("ix_portal_upload_checks_version_id", "version_id"),
    )

    id: Mapped[int] = mapped_column(primary_key=True)
    upload_id: Mapped[int | None] = mapped_column(
        ForeignKey("portal_uploads.id", ondelete="CASCADE")
    )
    version_id: Mapped[int | None] = mapped_column(
        BigId, ForeignKey("plugin_versions.id", ondelete="CASCADE")
    )
    name: Mapped[str] = mapped_column(String(32))
    status: Mapped[str] = mapped_column(String(16))
    findings: Mapped[list[dict[str, Any]]] = mapped_column(JSON)
    queued_at: Mapped[datetime] = mapped_column(UTCDateTime())
    started_at: Mapped[datetime | None] = mapped_column(UTCDateTime())
    finished_at: Mapped[datetime | None] = mapped_column(UTCDateTime())
    deadline_at: Mapped[datetime] = mapped_column(UTCDateTime())


class VersionCheckInput(Base):
    """The whole pack of a version an operator registered (fixtures and listing included,
    which the version's covered files leave out), kept for its locked-room checks."""

    __tablename__ = "version_check_inputs"

    version_id: Mapped[int] = mapped_column(
        BigId, ForeignKey("plugin_versions.id", ondelete="CASCADE"), primary_key=True
    )
    archive: Mapped[bytes] = mapped_column(LargeBinary)


class Attestation(StrEnum):
    """ "Review information": the five attestations made in the organization's name with each
    version, in the spec's words."""

    MAY_PUBLISH = "may-publish-the-data"
    HOLDERS_OWN = "sources-are-holders-own-publication"
    NO_PRIVATE_PERSON = "no-record-names-a-private-person"
    NO_NETWORK = "fetcher-never-tries-the-network"
    INFORMS = "words-inform-without-selling"


class ReviewInformation(Base):
    """Review information sent separately for an upload (outside the digest): it takes the
    place of the upload's review.json."""

    __tablename__ = "portal_review_information"

    upload_id: Mapped[int] = mapped_column(
        ForeignKey("portal_uploads.id", ondelete="CASCADE"), primary_key=True
    )
    document: Mapped[dict[str, Any]] = mapped_column(JSON)
    sent_by: Mapped[str] = mapped_column(String(320))
    sent_at: Mapped[datetime] = mapped_column(UTCDateTime())


class UploadAttestation(Base):
    """One attestation made for an upload's version in the organization's name: who (a person,
    or an agent by its name) and when."""

    __tablename__ = "portal_attestations"
    __table_args__ = (
        CheckConstraint(_in("attestation", Attestation), name="attestation"),
        UniqueConstraint("upload_id", "attestation"),
    )

    id: Mapped[int] = mapped_column(primary_key=True)
    upload_id: Mapped[int] = mapped_column(ForeignKey("portal_uploads.id", ondelete="CASCADE"))
    organization_id: Mapped[int] = mapped_column(ForeignKey("organizations.id"))
    attestation: Mapped[str] = mapped_column(String(48))
    made_by: Mapped[str] = mapped_column(String(320))
    agent_name: Mapped[str | None] = mapped_column(String(200))
    made_at: Mapped[datetime] = mapped_column(UTCDateTime())


class ReviewDecision(Base):
    """A reviewer's decision on an upload in review, with its reason and note. `reviewed` is the
    reviewed-content digest the reviewer was shown: an approval binds exactly that content."""

    __tablename__ = "portal_review_decisions"
    __table_args__ = (
        CheckConstraint(_in("decision", Verdict), name="decision"),
        Index("ix_portal_review_decisions_upload_id", "upload_id"),
    )

    id: Mapped[int] = mapped_column(primary_key=True)
    upload_id: Mapped[int] = mapped_column(ForeignKey("portal_uploads.id", ondelete="CASCADE"))
    decision: Mapped[str] = mapped_column(String(16))
    reason: Mapped[str] = mapped_column(String(200))
    note: Mapped[str] = mapped_column(Text)
    reviewer_id: Mapped[int] = mapped_column(ForeignKey("accounts.id"))
    reviewer: Mapped[str] = mapped_column(String(320))
    reviewed: Mapped[str] = mapped_column(String(80))
    decided_at: Mapped[datetime] = mapped_column(UTCDateTime())


class PortalNotice(Base):
    """What the portal tells an organization (a reviewer's decision, a retirement), the same
    words its owners and admins are mailed."""

    __tablename__ = "portal_notices"
    __table_args__ = (Index("ix_portal_notices_organization_id_at", "organization_id", "at"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    organization_id: Mapped[int] = mapped_column(ForeignKey("organizations.id", ondelete="CASCADE"))
    plugin_id: Mapped[str] = mapped_column(String(48))
    upload_id: Mapped[int | None] = mapped_column(ForeignKey("portal_uploads.id"))
    kind: Mapped[str] = mapped_column(String(32))
    subject: Mapped[str] = mapped_column(String(200))
    body: Mapped[str] = mapped_column(Text)
    at: Mapped[datetime] = mapped_column(UTCDateTime())


class RolloutState(StrEnum):
    """The rollout of a published update with a shadow period (README, Rollouts)."""

    SHADOWING = "shadowing"  # the current version runs; the new one runs beside it, unwritten
    PROMOTED = "promoted"  # the new version became current
    HELD = "held"  # a shadow run failed or would withdraw too much: stopped by itself
    STOPPED = "stopped"  # the publisher stopped it, or a retire, takedown, shelf or newer publish
    ROLLED_BACK = "rolled_back"  # promoted, then the publisher went back to the version before


class Rollout(Base):
    """An approved upload published with a shadow period of `shadow_runs` runs: it runs beside
    the current version (`from_version_id`) until promoted, held or stopped. `superseded_upload_id`
    is the published upload its promotion superseded (the publisher's roll back returns to it)."""

    __tablename__ = "plugin_rollouts"
    __table_args__ = (
        CheckConstraint(_in("state", RolloutState), name="state"),
        CheckConstraint("shadow_runs BETWEEN 1 AND 5", name="shadow_runs"),
        Index("ix_plugin_rollouts_plugin_id", "plugin_id"),
    )

    id: Mapped[int] = mapped_column(primary_key=True)
    organization_id: Mapped[int] = mapped_column(ForeignKey("organizations.id"))
    plugin_id: Mapped[str] = mapped_column(String(48))
    upload_id: Mapped[int] = mapped_column(ForeignKey("portal_uploads.id"))
    version: Mapped[str] = mapped_column(String(32))
    digest: Mapped[str] = mapped_column(String(80))
    from_version_id: Mapped[int] = mapped_column(
        BigId, ForeignKey("plugin_versions.id", ondelete="CASCADE")
    )
    superseded_upload_id: Mapped[int | None] = mapped_column(ForeignKey("portal_uploads.id"))
    shadow_runs: Mapped[int] = mapped_column(Integer)
    state: Mapped[str] = mapped_column(String(16))
    started_by: Mapped[str] = mapped_column(String(320))
    started_at: Mapped[datetime] = mapped_column(UTCDateTime())
    ended_by: Mapped[str | None] = mapped_column(String(320))
    ended_at: Mapped[datetime | None] = mapped_column(UTCDateTime())
    reason: Mapped[str | None] = mapped_column(Text)


class ShadowRun(Base):
    """One shadow run of a rollout: the new version on the downloads of the current version's
    run `run_id`; `passed` False with its `reason` when it failed or would withdraw too much;
    `diff` the record diff against what that run had just written."""

    __tablename__ = "plugin_shadow_runs"
    __table_args__ = (Index("ix_plugin_shadow_runs_rollout_id", "rollout_id"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    rollout_id: Mapped[int] = mapped_column(ForeignKey("plugin_rollouts.id", ondelete="CASCADE"))
    run_id: Mapped[int] = mapped_column(BigId, ForeignKey("runs.id", ondelete="CASCADE"))
    today: Mapped[date] = mapped_column(Date)
    passed: Mapped[bool] = mapped_column(Boolean)
    reason: Mapped[str | None] = mapped_column(Text)
    diff: Mapped[dict[str, Any] | None] = mapped_column(JSON)
    seconds: Mapped[float] = mapped_column(Float)
    at: Mapped[datetime] = mapped_column(UTCDateTime())
