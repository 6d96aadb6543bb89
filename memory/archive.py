"""The memory layer's rows in a workspace archive (core.archive): memories with their
evidence, procedures, censors, graduations, the trust policy, trusted state, working
memory and scratchpads, the episode cursors (so episodes are not cut again), the
consolidation policy and the dedup scan's pairs (a pair people called "not duplicates" is
not proposed again). The dedup scan's cursor is per deployment and stays behind."""

from core.archive.tables import Table
from memory.models import (
    Censor,
    ConsolidationPolicy,
    DuplicatePair,
    EpisodeCursor,
    Graduation,
    Memory,
    MemoryEvidence,
    Procedure,
    Scratchpad,
    ScratchpadCheckpoint,
    TrustedState,
    TrustPolicy,
    WorkingMemoryItem,
    WorkingSession,
)

TABLES = (
    Table("memories", Memory, review_kinds=("memory", "conflict")),
    Table("memory_evidence", MemoryEvidence, scope="memory__workspace"),
    Table("procedures", Procedure, scope="memory__workspace", review_kinds=("low_effectiveness",)),
    Table("censors", Censor, scope="memory__workspace"),
    Table("graduations", Graduation, review_kinds=("graduation",)),
    Table("trust_policy", TrustPolicy),
    # The seed cursor names a memory id of the source: an import starts its scan afresh.
    Table("consolidation_policy", ConsolidationPolicy, omit=("seed_cursor",)),
    # People's "not duplicates" travel, so the scan never proposes those pairs again.
    Table("duplicate_pairs", DuplicatePair, review_kinds=("duplicate",)),
    Table("trusted_state", TrustedState),
    Table("working_sessions", WorkingSession),
    Table("working_memory_items", WorkingMemoryItem, scope="session__workspace"),
    Table("scratchpads", Scratchpad),
    Table("scratchpad_checkpoints", ScratchpadCheckpoint, scope="scratchpad__workspace"),
    Table("episode_cursors", EpisodeCursor, scope="conversation__workspace",
          refs={"last_interaction_id": "conversations.interaction"}),
)
