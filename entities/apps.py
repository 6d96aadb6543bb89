from django.apps import AppConfig


class EntitiesConfig(AppConfig):
    default_auto_field = "django.db.models.BigAutoField"
    name = "entities"

    def ready(self) -> None:
        from conversations.services import register_processor
        from core import registry
        from entities.models import Entity, LinkSuggestion
        from entities import selectors
        from entities.services.embedding import interactions_embed_entities
        from entities.services.extracting import interactions_extract

        register_processor("entities", interactions_extract)
        # After extraction, in the same claiming transaction: what it found is searchable
        # by meaning as soon as the interaction counts as processed.
        register_processor("entity embeddings", interactions_embed_entities)
        registry.register_pending("entities to embed", selectors.embedding_pending_count)
        from entities.review import register as register_review_kinds

        register_review_kinds()
        registry.register_count("Entities", lambda ws: Entity.objects.filter(workspace=ws, merged_into__isnull=True).count())
        registry.register_count("Link suggestions", lambda ws: LinkSuggestion.objects.filter(workspace=ws, status="pending").count())
