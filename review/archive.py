"""The review queue's rows in a workspace archive (core.archive): claims and every item,
pending or decided (people's decisions travel). An item's target is re-keyed through the
table that declares its kind (`Table.review_kinds`)."""

from core.archive.tables import ByColumn, Table
from review.models import Claim, ReviewItem

TABLES = (
    Table("review_claims", Claim),
    Table("review_items", ReviewItem, refs={"target_id": ByColumn("kind", review_kind=True)}),
)
