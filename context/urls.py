from django.urls import path

from context import views

urlpatterns = [path("", views.inspector, name="inspector")]
