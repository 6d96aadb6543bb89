from django.urls import path

from webhooks import views

urlpatterns = [
    path("", views.webhooks_page, name="webhooks"),
    path("add/", views.webhook_add, name="webhook-add"),
    path("<int:webhook_id>/<str:action>/", views.webhook_act, name="webhook-act"),
    path("deliveries/<int:delivery_id>/replay/", views.delivery_replay, name="webhook-replay"),
]
