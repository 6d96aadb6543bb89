from django.urls import path

from core import views

urlpatterns = [
    path("", views.root, name="root"),
    path("w/<slug:slug>/", views.home, name="home"),
]
