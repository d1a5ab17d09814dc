"""The submission gate: may this organization submit now, and every reason it may not."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from sqlalchemy.orm import Session

from almanac.platform.contract.problems import Problem
from almanac.platform.publishing.agreement import accepted_in_effect, version_in_effect
from almanac.platform.publishing.domains import current_domain
from almanac.platform.publishing.invitations import is_invited
from almanac.platform.publishing.models import DomainState


@dataclass(frozen=True, slots=True)
class GateAnswer:
    """`reasons` holds one problem per condition not met, with its catalog code."""

    organization_id: int
    reasons: tuple[Problem, ...]

    @property
    def may_submit(self) -> bool:
        return not self.reasons


def submission_gate(db: Session, organization_id: int, now: datetime) -> GateAnswer:
    """ "Authentication" 3: an organization may submit when its domain is verified (its grace
    included; not unverified, not lapsed), an invitation exists for that domain, and it
    accepted the Developer Agreement version in effect at `now`. Each condition not met is a
    reason: DOMAIN-NOT-VERIFIED, DOMAIN-LAPSED, DOMAIN-NOT-INVITED, AGREEMENT-NOT-ACCEPTED.
    (Checks, review information and attestations belong to the version submitted.)"""
    reasons: list[Problem] = []
    domain = current_domain(db, organization_id)
    if domain is None:
        reasons.append(
            Problem("DOMAIN-NOT-VERIFIED", "the organization has named no domain", "domain")
        )
    elif domain.state is DomainState.LAPSED:
        reasons.append(
            Problem(
                "DOMAIN-LAPSED",
                f"{domain.domain} lapsed: its proof was not restored within the 14 days of grace",
                "domain",
            )
        )
    elif not domain.verified:
        reasons.append(
            Problem("DOMAIN-NOT-VERIFIED", f"{domain.domain} is not verified yet", "domain")
        )
    if domain is None or not is_invited(db, domain.domain):
        named = "the organization's domain" if domain is None else domain.domain
        reasons.append(
            Problem("DOMAIN-NOT-INVITED", f"no invitation exists for {named}", "invitation")
        )
    if not accepted_in_effect(db, organization_id, now):
        current = version_in_effect(db, now)
        message = (
            "no Developer Agreement version is in effect yet"
            if current is None
            else f"the Developer Agreement version {current.version} in effect since "
            f"{current.effective_on} is not accepted"
        )
        reasons.append(Problem("AGREEMENT-NOT-ACCEPTED", message, "agreement"))
    return GateAnswer(organization_id, tuple(reasons))
