"""The entities layer's rows in a workspace archive (core.archive). Merge records are left
out: what they moved is a list of ids per table (JSON), which an import cannot re-key."""

from core.archive.tables import Table
from entities.models import (
    DecisionRecord,
    DecisionThought,
    Entity,
    EntityEvidence,
    Identity,
    LinkSuggestion,
    ProfileValue,
    Relationship,
)

TABLES = (
    Table("entities", Entity, review_kinds=("entity",)),
    Table("entity_evidence", EntityEvidence, scope="entity__workspace"),
    Table("identities", Identity),
    Table("link_suggestions", LinkSuggestion, review_kinds=("identity_link",)),
    Table("profile_values", ProfileValue, review_kinds=("profile_value",)),
    Table("relationships", Relationship, review_kinds=("relationship",)),
    # The description's embedding is not null: from another model it is embedded again.
    Table("decisions", DecisionRecord, vector_text={"embedding": "description"}),
    Table("decision_thoughts", DecisionThought, scope="decision__workspace"),
)
