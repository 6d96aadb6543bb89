"""Writes for memories: each use case is atomic and audited (HOUSE_STYLE.md). Split by
topic; import from here."""

from memory.services.extracting import episodes_cut, episodes_flush, interactions_extract_memories
from memory.services.graduation import graduation_accept, graduation_propose, graduation_reject, memory_graduate
from memory.services.memories import (
    DEFAULT_POLICY,
    Draft,
    Evidence,
    Stored,
    memories_embed,
    memories_touch,
    memory_approve,
    memory_edit,
    memory_invalidate,
    memory_reinforce,
    memory_reject,
    memory_store,
    trust_policy_for,
    trust_policy_set,
)
from memory.services.privacy import memories_erase, memories_move, memories_restore
from memory.services.procedures import (
    censor_create,
    censor_false_positive,
    censors_check,
    procedure_create,
    procedure_outcome,
    procedures_match,
)
from memory.services.working import (
    FocusItem,
    scratchpad_checkpoint,
    scratchpad_put,
    scratchpad_restore,
    trusted_state_set,
    working_memory_put,
)

__all__ = [
    "DEFAULT_POLICY",
    "Draft",
    "Evidence",
    "FocusItem",
    "Stored",
    "censor_create",
    "censor_false_positive",
    "censors_check",
    "episodes_cut",
    "episodes_flush",
    "graduation_accept",
    "graduation_propose",
    "graduation_reject",
    "interactions_extract_memories",
    "memories_embed",
    "memories_erase",
    "memories_move",
    "memories_restore",
    "memories_touch",
    "memory_approve",
    "memory_edit",
    "memory_graduate",
    "memory_invalidate",
    "memory_reinforce",
    "memory_reject",
    "memory_store",
    "procedure_create",
    "procedure_outcome",
    "procedures_match",
    "scratchpad_checkpoint",
    "scratchpad_put",
    "scratchpad_restore",
    "trust_policy_for",
    "trust_policy_set",
    "trusted_state_set",
    "working_memory_put",
]
