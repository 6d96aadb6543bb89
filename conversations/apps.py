from django.apps import AppConfig


class ConversationsConfig(AppConfig):
    default_auto_field = "django.db.models.BigAutoField"
    name = "conversations"

    def ready(self) -> None:
        from conversations import selectors
        from core import registry

        registry.register_pending("interactions", selectors.interactions_unprocessed_count)
        registry.register_pending("conversation summaries", selectors.summaries_due_count)
        registry.register_count("Interactions", selectors.interaction_count)
        registry.register_count("Conversations", selectors.conversation_count)
