from django.urls import path

from core import views

urlpatterns = [
    path("", views.root, name="root"),
    path("w/<slug:slug>/", views.home, name="home"),
    path("w/<slug:slug>/audit/", views.audit_log, name="audit"),
    path("w/<slug:slug>/keys/", views.api_keys, name="api-keys"),
    path("w/<slug:slug>/keys/create/", views.api_key_create, name="api-key-create"),
    path("w/<slug:slug>/keys/<int:key_id>/", views.api_key_detail, name="api-key"),
    path("w/<slug:slug>/keys/<int:key_id>/revoke/", views.api_key_revoke, name="api-key-revoke"),
    path("w/<slug:slug>/keys/<int:key_id>/agent/", views.api_key_bind, name="api-key-bind"),
]
