from django.urls import path

from entities import views, views_decisions

urlpatterns = [
    path("", views.entity_list, name="entities"),
    path("pick/", views.entity_pick, name="entity-pick"),
    path("decisions/", views_decisions.decision_list, name="decisions"),
    path("<int:entity_id>/", views.entity_detail, name="entity"),
    path("<int:entity_id>/identities/", views.identity_add, name="entity-identity-add"),
    path("<int:entity_id>/identities/<int:identity_id>/unlink/", views.identity_remove, name="entity-identity-unlink"),
    path("<int:entity_id>/identities/<int:identity_id>/verify/", views.identity_confirm, name="entity-identity-verify"),
    path("<int:entity_id>/merge/", views.merge, name="entity-merge"),
    path("<int:entity_id>/profile/<int:value_id>/<str:decision>/", views.profile_decide, name="entity-profile-decide"),
    path("<int:entity_id>/erase/", views.erase, name="entity-erase"),
    path("merges/<int:merge_id>/split/", views.split, name="entity-split"),
    path("suggestions/<int:suggestion_id>/<str:decision>/", views.suggestion_decide, name="entity-suggestion"),
]
