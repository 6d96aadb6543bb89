from django.apps import AppConfig


class ReviewConfig(AppConfig):
    default_auto_field = "django.db.models.BigAutoField"
    name = "review"

    def ready(self) -> None:
        from core import registry
        from entities.services import register_eraser, register_merge_mover
        from review import selectors
        from review.services import review_items_erase, review_items_move, review_items_restore

        registry.register_count("Pending review", selectors.pending_count)
        register_merge_mover("review_items", review_items_move, review_items_restore)
        # Last in INSTALLED_APPS, so it runs after the owners' erasers removed their rows.
        register_eraser("review_items", review_items_erase)
