from django.urls import path

from memory import views

urlpatterns = [
    path("", views.memory_list, name="memories"),
    path("<int:memory_id>/", views.memory_detail, name="memory"),
    path("about/<int:entity_id>/", views.memories_about, name="memories-about"),
    path("<int:memory_id>/edit/", views.memory_edit, name="memory-edit"),
    path("<int:memory_id>/<str:decision>/", views.memory_decide, name="memory-decide"),
    path("graduations/<int:graduation_id>/<str:decision>/", views.graduation_decide, name="graduation-decide"),
    path("trusted/", views.trusted_state, name="trusted-state"),
    path("trusted/set/", views.trusted_state_set, name="trusted-state-set"),
    path("policy/", views.trust_policy, name="trust-policy"),
    path("policy/set/", views.trust_policy_set, name="trust-policy-set"),
    path("policy/consolidation/", views.consolidation_policy_set, name="consolidation-policy-set"),
]
