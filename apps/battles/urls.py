from django.urls import path

from apps.battles import spectator_views, views

urlpatterns = [
    path("<int:pk>/", views.battle_detail, name="battle"),
    path("<int:pk>/form/", views.battle_form, name="battle_form"),
    path("<int:pk>/card/<str:sid>/", views.battle_card, name="battle_card"),
    path("<int:pk>/log/", views.battle_log, name="battle_log"),
    path("<int:pk>/resolve/", views.battle_resolve, name="battle_resolve"),
    path("<int:pk>/undo/", views.battle_undo, name="battle_undo"),
    path("<int:pk>/turn/", views.battle_turn, name="battle_turn"),
    path("<int:pk>/poll/", views.battle_poll, name="battle_poll"),
    # Spectator links: read-only, no account (issue 6)
    path("spectate/<str:token>/", spectator_views.spectator, name="spectator"),
    path("<int:pk>/spectate/poll/", spectator_views.spectator_poll, name="spectator_poll"),
    path("<int:pk>/spectator-links/", spectator_views.link_new, name="spectator_link_new"),
    path("spectator-links/<int:pk>/revoke/", spectator_views.link_revoke, name="spectator_link_revoke"),
]
