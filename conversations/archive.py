"""The log layer's rows in a workspace archive (core.archive): conversations, the
interactions (insert-only: the import only inserts them, complete), their embeddings and
the summaries (insert-only too)."""

from django.db import transaction

from conversations.tasks import index_missing
from conversations.models import (Conversation, ConversationSummary, Interaction, InteractionBacklog, InteractionIndex,
                                  InteractionKinds)
from core.archive.tables import Table


def _index_imported(workspace_id: int, carried_vectors: bool, interaction_ids: list) -> None:
    """The import's insert queued every interaction for processing (the backlog trigger);
    the ones the source had processed (they have an index row in the archive) must not be
    derived again: their memories, entities and gaps came with the archive. Without their
    vectors (another embedding model) they are embedded again, and only embedded."""
    for start in range(0, len(interaction_ids), 10_000):
        InteractionBacklog.objects.filter(interaction_id__in=interaction_ids[start:start + 10_000]).delete()
    if not carried_vectors and interaction_ids:
        transaction.on_commit(lambda: index_missing.delay(workspace_id))


TABLES = (
    Table("conversations", Conversation, refs={"last_interaction_pk": "conversations.interaction"}),
    Table("interactions", Interaction),
    Table("interaction_embeddings", InteractionIndex, after_import=_index_imported),
    Table("interaction_kinds", InteractionKinds),
    Table("conversation_summaries", ConversationSummary),
)
