from django.urls import path

from gaps import views

urlpatterns = [
    path("", views.gap_list, name="gaps"),
    path("todo/", views.todo_list, name="gap-todos"),
    path("policy/", views.policy_set, name="gap-policy"),
    path("<int:gap_id>/", views.gap_detail, name="gap"),
    path("<int:gap_id>/<str:action>/", views.gap_act, name="gap-act"),
]
