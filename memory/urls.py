from django.urls import path

from memory import views, views_procedures, views_working

urlpatterns = [
    path("", views.memory_list, name="memories"),
    path("<int:memory_id>/", views.memory_detail, name="memory"),
    path("procedures/", views_procedures.procedure_list, name="procedures"),
    path("procedures/<int:memory_id>/", views_procedures.procedure_detail, name="procedure"),
    path("procedures/<int:memory_id>/<str:action>/", views_procedures.procedure_change, name="procedure-change"),
    path("censors/", views_procedures.censor_list, name="censors"),
    path("censors/<int:memory_id>/", views_procedures.censor_detail, name="censor"),
    path("censors/<int:memory_id>/<str:action>/", views_procedures.censor_change, name="censor-change"),
    path("working/", views_working.working_list, name="working-sessions"),
    path("working/<int:session_id>/", views_working.working_detail, name="working-session"),
    path("scratchpads/", views_working.scratchpad_list, name="scratchpads"),
    path("scratchpads/<int:scratchpad_id>/", views_working.scratchpad_detail, name="scratchpad"),
    path("scratchpads/<int:scratchpad_id>/restore/<int:checkpoint_id>/", views_working.scratchpad_restore,
         name="scratchpad-restore"),
    path("about/<int:entity_id>/", views.memories_about, name="memories-about"),
    path("<int:memory_id>/edit/", views.memory_edit, name="memory-edit"),
    path("<int:memory_id>/<str:decision>/", views.memory_decide, name="memory-decide"),
    path("graduations/<int:graduation_id>/<str:decision>/", views.graduation_decide, name="graduation-decide"),
    path("trusted/", views.trusted_state, name="trusted-state"),
    path("trusted/set/", views.trusted_state_set, name="trusted-state-set"),
    path("policy/", views.trust_policy, name="trust-policy"),
    path("policy/set/", views.trust_policy_set, name="trust-policy-set"),
    path("policy/consolidation/", views.consolidation_policy_set, name="consolidation-policy-set"),
]
