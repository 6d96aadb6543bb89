from django.urls import path

from context import views

urlpatterns = [
    path("", views.inspector, name="inspector"),
    path("packs/", views.pack_list, name="packs"),
    path("packs/<uuid:pack_id>/", views.pack_detail, name="pack"),
]
