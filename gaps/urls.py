from django.urls import path

from gaps import views

urlpatterns = [
    path("", views.gap_list, name="gaps"),
    path("todo/", views.todo_list, name="gap-todos"),
    path("policy/", views.policy_page, name="gap-policy"),
    path("policy/sink/", views.sink_save, name="gap-sink"),
    path("policy/deliveries/<int:delivery_id>/retry/", views.delivery_retry, name="gap-delivery-retry"),
    path("policy/sink/<str:action>/", views.sink_act, name="gap-sink-act"),
    path("censored/", views.censored_list, name="gap-censored"),
    path("<int:gap_id>/", views.gap_detail, name="gap"),
    path("<int:gap_id>/<str:action>/", views.gap_act, name="gap-act"),
]
