from django.apps import AppConfig


class MemoryConfig(AppConfig):
    default_auto_field = "django.db.models.BigAutoField"
    name = "memory"

    def ready(self) -> None:
        from conversations.services import register_processor
        from core import registry
        from entities.services import register_eraser, register_merge_mover
        from memory import selectors
        from memory.services import interactions_extract_memories, memories_erase, memories_move, memories_restore

        # After the entities processor (INSTALLED_APPS order): entity candidates first, so
        # graduation signal 4 can see what the entity extractor proposed.
        register_processor("memories", interactions_extract_memories)
        from memory.review import register as register_review_kinds

        register_review_kinds()
        register_merge_mover("memories", memories_move, memories_restore)
        register_eraser("memories", memories_erase)
        registry.register_pending("memories to embed", selectors.memory_pending_count)
        registry.register_pending("episode tails", selectors.episode_tails_count)
        registry.register_count("Memory candidates", selectors.memory_candidate_count)
