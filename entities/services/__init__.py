"""Writes for entities: each use case is atomic and audited (HOUSE_STYLE.md). Split by
topic; import from here."""

from entities.services.embedding import entities_embed, entities_embed_all, entity_card, relationship_text
from entities.services.entities import entities_decide, entity_approve, entity_create, entity_propose, entity_reject, entity_update
from entities.services.erasure import entity_erase
from entities.services.identities import (
    identities_resolve,
    identity_link,
    identity_unlink,
    identity_verify,
    link_suggestion_accept,
    link_suggestion_reject,
    link_suggestions_scan,
)
from entities.services.merging import entity_merge, entity_split
from entities.services.profiles import (
    profile_candidate_add,
    profile_candidate_approve,
    profile_candidate_reject,
    profile_set,
)
from entities.services.relationships import relationship_add, relationship_set_status

__all__ = [
    "entities_embed",
    "entities_embed_all",
    "entity_card",
    "entity_create",
    "entity_erase",
    "entity_merge",
    "entities_decide",
    "entity_approve",
    "entity_propose",
    "entity_reject",
    "entity_split",
    "entity_update",
    "identities_resolve",
    "identity_link",
    "identity_unlink",
    "identity_verify",
    "link_suggestion_accept",
    "link_suggestion_reject",
    "link_suggestions_scan",
    "profile_candidate_add",
    "profile_candidate_approve",
    "profile_candidate_reject",
    "profile_set",
    "relationship_add",
    "relationship_set_status",
    "relationship_text",
]
