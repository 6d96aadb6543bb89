def review_pending(request):
    """The pending count in the navigation (refreshed by the `review-changed` event)."""
    workspace = getattr(request, "workspace", None)
    if workspace is None:
        return {}
    from review.selectors import pending_count

    return {"review_pending": pending_count(workspace)}
