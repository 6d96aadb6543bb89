from django.urls import path

from core import views

urlpatterns = [
    path("", views.root, name="root"),
    path("w/<slug:slug>/", views.home, name="home"),
] + [
    path(f"w/<slug:slug>/{name}/", views.section, {"section": name}, name=name)
    for name in views.SECTIONS
]
