from django.utils.functional import SimpleLazyObject


def review_pending(request):
    """The pending count in the navigation (refreshed by the `review-changed` event). Lazy:
    counted only when a template shows it, and not at all when the view gave it already
    (the queue page's paginator counts the same claims, issue 21)."""
    workspace = getattr(request, "workspace", None)
    if workspace is None:
        return {}
    from review.selectors import pending_count

    return {"review_pending": SimpleLazyObject(lambda: pending_count(workspace))}
