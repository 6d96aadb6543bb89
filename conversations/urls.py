from django.urls import path

from conversations import views

urlpatterns = [
    path("", views.conversation_list, name="conversations"),
    path("<int:conversation_id>/", views.conversation_detail, name="conversation"),
    path("from/<int:entity_id>/", views.entity_interactions, name="entity-interactions"),
]
