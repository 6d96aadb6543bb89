"""Entities (who and what), their identities across channels, versioned profiles,
relationships, decisions, and the records that make merges undoable."""

from entities.models.core import (
    Entity,
    EntityEvidence,
    EntityMerge,
    EntityStatus,
    Identity,
    IdentityConfidence,
    LinkSuggestion,
    SuggestionStatus,
)
from entities.models.decisions import DecisionOutcome, DecisionRecord, DecisionThought
from entities.models.profiles import ProfileStatus, ProfileValue
from entities.models.relationships import Relationship, RelationshipStatus

__all__ = [
    "DecisionOutcome",
    "DecisionRecord",
    "DecisionThought",
    "Entity",
    "EntityEvidence",
    "EntityMerge",
    "EntityStatus",
    "Identity",
    "IdentityConfidence",
    "LinkSuggestion",
    "ProfileStatus",
    "ProfileValue",
    "Relationship",
    "RelationshipStatus",
    "SuggestionStatus",
]
