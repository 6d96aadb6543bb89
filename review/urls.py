from django.urls import path
from django.views.generic import RedirectView

from review import views

urlpatterns = [
    path("", views.queue, name="review"),
    path("count/", views.pending_badge, name="review-count"),
    path("bulk/", views.decide_many, name="review-bulk"),
    path("bulk/matching/", views.decide_matching, name="review-bulk-matching"),
    path("conflicts/", views.conflicts, name="review-conflicts"),
    path("stats/", views.stats, name="review-stats"),
    # The trust policy decides which memories skip the queue: the memory app owns it now.
    path("policy/", RedirectView.as_view(pattern_name="trust-policy"), name="review-policy"),
    path("claims/<int:claim_id>/<str:action>/", views.claim_decide, name="review-claim-decide"),
    path("<int:item_id>/similar/", views.similar, name="review-similar"),
    path("<int:item_id>/<str:action>/", views.decide, name="review-decide"),
]
