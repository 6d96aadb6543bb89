"""The gaps layer's rows in a workspace archive (core.archive): gaps with their evidence,
the TODO threshold and the refusals linked to censors. The tracker settings stay behind
(their token is a secret) and so does the delivery log (calls made from the source)."""

from core.archive.tables import Table
from gaps.models import CapabilityGap, CensoredRefusal, GapEvidence, GapPolicy
from gaps.services import REVIEW_KIND

TABLES = (
    Table("gaps", CapabilityGap, review_kinds=(REVIEW_KIND,)),
    Table("gap_evidence", GapEvidence, scope="gap__workspace"),
    Table("gap_policy", GapPolicy),
    Table("censored_refusals", CensoredRefusal),
)
