from django.urls import path

from apps.campaigns import club_views as cv
from apps.campaigns import scenario_views as sv
from apps.campaigns import session_views as sess
from apps.campaigns import views

urlpatterns = [
    path("", views.home, name="home"),
    path("campaigns/<int:pk>/", views.campaign_detail, name="campaign"),
    # Campaigns as a sequence of sessions, and the whole-campaign file (issue 6)
    path("campaigns/import/", sess.campaign_import, name="campaign_import"),
    path("campaigns/<int:pk>/sessions/start/", sess.session_start, name="campaign_session_start"),
    path("campaigns/<int:pk>/sessions/reopen/", sess.session_reopen, name="campaign_session_reopen"),
    path("campaigns/<int:pk>/sessions/discard/", sess.session_discard, name="campaign_session_discard"),
    path("campaigns/<int:pk>/settings/", sess.campaign_settings, name="campaign_settings"),
    path("campaigns/<int:pk>/commander/", sess.campaign_commander, name="campaign_commander"),
    path("campaigns/<int:pk>/export/", sess.campaign_export, name="campaign_export"),
    path("battles/<int:pk>/finish/", sess.battle_finish, name="battle_finish"),
    path("battles/<int:pk>/commander/", sess.battle_commander, name="battle_commander"),
    # Clubs: members, roles, invitations (issue 6)
    path("clubs/", cv.club_list, name="club_list"),
    path("clubs/new/", cv.club_new, name="club_new"),
    path("clubs/<slug:slug>/", cv.club_detail, name="club"),
    path("clubs/<slug:slug>/invites/", cv.invite_new, name="club_invite_new"),
    path("clubs/<slug:slug>/invites/<int:pk>/revoke/", cv.invite_revoke, name="club_invite_revoke"),
    path("clubs/<slug:slug>/members/<int:pk>/role/", cv.member_role, name="club_member_role"),
    path("clubs/<slug:slug>/members/<int:pk>/remove/", cv.member_remove, name="club_member_remove"),
    path("clubs/<slug:slug>/leave/", cv.club_leave, name="club_leave"),
    path("join/", cv.join, name="join"),
    path("join/<str:code>/", cv.join_code, name="join_code"),
    # The scenario builder (issue 7)
    path("scenarios/", sv.scenario_list, name="scenario_list"),
    path("scenarios/new/", sv.scenario_new, name="scenario_new"),
    path("scenarios/import/", sv.scenario_import, name="scenario_import"),
    path("scenarios/<int:pk>/", sv.scenario_detail, name="scenario"),
    path("scenarios/<int:pk>/settings/", sv.scenario_settings, name="scenario_settings"),
    path("scenarios/<int:pk>/zones/", sv.scenario_zones, name="scenario_zones"),
    path("scenarios/<int:pk>/delete/", sv.scenario_delete, name="scenario_delete"),
    path("scenarios/<int:pk>/copy/", sv.scenario_copy, name="scenario_copy"),
    path("scenarios/<int:pk>/campaign/", sv.scenario_campaign, name="scenario_campaign"),
    path("scenarios/<int:pk>/structures/add/", sv.structure_add, name="scenario_structure_add"),
    path("scenarios/<int:pk>/structures/<int:sid>/", sv.structure_edit, name="scenario_structure"),
    path("scenarios/<int:pk>/structures/<int:sid>/move/", sv.structure_move, name="scenario_structure_move"),
    path("scenarios/<int:pk>/structures/<int:sid>/section/", sv.structure_section, name="scenario_structure_section"),
    path("scenarios/<int:pk>/structures/<int:sid>/delete/", sv.structure_delete, name="scenario_structure_delete"),
    path("scenarios/<int:pk>/armies/", sv.army_save, name="scenario_army_new"),
    path("scenarios/<int:pk>/armies/<int:army_id>/", sv.army_save, name="scenario_army"),
    path("scenarios/<int:pk>/armies/<int:army_id>/units/new/", sv.unit_new, name="scenario_unit_new"),
    path("scenarios/<int:pk>/units/<int:uid>/", sv.unit_edit, name="scenario_unit"),
    path("scenarios/<int:pk>/units/<int:uid>/move/", sv.unit_move, name="scenario_unit_move"),
    path("scenarios/<int:pk>/units/<int:uid>/delete/", sv.unit_delete, name="scenario_unit_delete"),
    path("scenarios/<int:pk>/start/", sv.scenario_start, name="scenario_start"),
    path("scenarios/<int:pk>/export/", sv.scenario_export, name="scenario_export"),
    path("scenarios/<int:pk>/print/", sv.scenario_print, name="scenario_print"),
]
