from django.apps import AppConfig


class ContextConfig(AppConfig):
    default_auto_field = "django.db.models.BigAutoField"
    name = "context"

    def ready(self) -> None:
        from context.services import context_erase, interactions_link_concepts
        from conversations.services import register_processor
        from entities.services import register_eraser

        register_processor("concepts", interactions_link_concepts)
        register_eraser("packs_and_concept_links", context_erase)
