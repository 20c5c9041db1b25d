"""A member leaving the club mid-campaign, on the demo: what happens to the sides they commanded,
to the battles in progress, and to what they can still see or do."""

import uuid
from datetime import timedelta

import pytest
from django.contrib.auth.models import User
from django.test import Client
from django.urls import reverse
from django.utils import timezone

from apps.armies.models import Army
from apps.battles.models import Battle, BattleStatus
from apps.campaigns.account_forms import new_invite_code
from apps.campaigns.models import Campaign, Club, Invite, Membership, Role
from tests.campaigns.test_demo import demo, demo_output  # noqa: F401  (the demo, built once per module)

pytestmark = pytest.mark.usefixtures("demo")


def as_(username):
    client = Client()
    client.force_login(User.objects.get(username=username))
    return client


def world():
    club = Club.objects.get(memberships__user__username="demo")
    campaign = Campaign.objects.get(club=club)
    battle = Battle.objects.get(campaign=campaign, status__in=[BattleStatus.SETUP, BattleStatus.IN_PROGRESS])
    bob = User.objects.get(username="bob")
    # A finished battle bob played: its record keeps him.
    old = Battle.objects.create(club=club, name="Last month's skirmish", status=BattleStatus.FINISHED,
                                finished_at=timezone.now())
    Army.objects.create(battle=old, side="B", name="Bob's old platoon", owner=bob)
    return club, campaign, battle, bob, old


def commanded_by(user):
    return sorted(Army.objects.filter(owner=user).values_list("name", flat=True))


def test_removing_a_member_hands_the_sides_they_commanded_to_the_organisers():
    club, campaign, battle, bob, old = world()
    assert Army.objects.filter(owner=bob, campaign=campaign).exists()
    assert Army.objects.filter(owner=bob, battle=battle).exists() and Army.objects.filter(owner=bob, scenario__club=club)
    version = battle.version

    response = as_("demo").post(reverse("club_member_remove", args=[club.slug, Membership.objects.get(
        club=club, user=bob).pk]), follow=True)
    assert response.status_code == 200
    assert "The organisers now act for what they commanded (Grenadier company)" in response.content.decode()
    assert commanded_by(bob) == ["Bob's old platoon"], "only the finished battle still names him"
    battle.refresh_from_db()
    assert battle.version > version, "phones at the table ask again"

    # The others no longer read that bob commands side B, and he can do nothing there.
    assert "Commanded by bob" not in as_("alice").get(reverse("campaign", args=[campaign.pk])).content.decode()
    assert "Played by bob" not in as_("alice").get(reverse("battle", args=[battle.pk])).content.decode()
    gone = as_("bob")
    assert gone.get(reverse("battle", args=[battle.pk])).status_code == 404
    assert gone.post(reverse("battle_turn", args=[battle.pk]), {
        "action": "end_turn", "client_token": str(uuid.uuid4()), "confirmed": "1"}).status_code == 404

    # Invited back months later, he joins as a player and commands nothing until an organiser says so.
    invite = Invite.objects.create(club=club, code=new_invite_code(), role=Role.PLAYER,
                                   expires_at=timezone.now() + timedelta(days=1))
    assert gone.post(reverse("join_code", args=[invite.code])).status_code == 303
    assert commanded_by(bob) == ["Bob's old platoon"]


def test_a_member_leaving_gives_up_the_sides_they_commanded():
    club, campaign, battle, bob, old = world()
    response = as_("bob").post(reverse("club_leave", args=[club.slug]))
    assert response.status_code == 303
    assert commanded_by(bob) == ["Bob's old platoon"]
    assert Army.objects.get(campaign=campaign, side="B").owner_id is None


def test_a_member_of_another_club_keeps_what_they_command_there():
    """Leaving one club changes nothing in another."""
    club, campaign, battle, bob, old = world()
    olga_club = Club.objects.get(memberships__user__username="olga")
    Membership.objects.create(club=olga_club, user=bob, role=Role.PLAYER)
    theirs = Army.objects.filter(scenario__club=olga_club).order_by("pk").first()
    Army.objects.filter(pk=theirs.pk).update(owner=bob)
    assert as_("bob").post(reverse("club_leave", args=[club.slug])).status_code == 303
    assert Army.objects.get(pk=theirs.pk).owner_id == bob.pk


def test_a_removed_member_reloading_the_battle_is_told_in_the_sites_layout(settings):
    """Not the server's bare "Not Found": the site's header, a sentence that says why it may be, a
    way home; the same words as for an id that never existed. An htmx request gets the words alone."""
    settings.DEBUG = False
    club, campaign, battle, bob, old = world()
    Membership.objects.filter(club=club, user=bob).delete()
    gone = as_("bob")
    removed = gone.get(reverse("battle", args=[battle.pk]))
    never = gone.get(reverse("battle", args=[10 ** 9]))
    nowhere = gone.get("/no/such/page/")
    for response in (removed, never, nowhere):
        html = response.content.decode()
        assert response.status_code == 404
        assert '<header class="site-header">' in html and f'href="{reverse("home")}"' in html
        assert "belongs to a club you are not a member of (any more)" in html
    card = gone.get(reverse("battle_card", args=[battle.pk, "s1"]), HTTP_HX_REQUEST="true")
    assert card.status_code == 404 and card.content.decode() == "Not found: reload the page."


def test_a_reopened_session_is_commanded_as_the_campaign_now_says():
    """Session 1 is finished, the organiser hands side B from bob to alice (no session is open, so
    only the campaign's army changes), then reopens session 1 to put a mistake right: side B of the
    reopened battle is alice's, as the campaign page says, not bob's any more."""
    club, campaign, battle, bob, old = world()
    org, alice = as_("demo"), User.objects.get(username="alice")
    assert org.post(reverse("battle_finish", args=[battle.pk]), {"winner": "A", "result": "Held"}).status_code == 303
    assert org.post(reverse("campaign_commander", args=[campaign.pk]), {"side": "B", "owner": alice.pk}
                    ).status_code == 303
    assert Army.objects.get(campaign=campaign, side="B").owner == alice
    assert org.post(reverse("campaign_session_reopen", args=[campaign.pk]), {"confirm": "on"}).status_code == 303
    battle.refresh_from_db()
    assert battle.status == BattleStatus.IN_PROGRESS
    assert dict(battle.armies.values_list("side", "owner__username")) == {"A": "alice", "B": "alice"}


def test_a_session_reopened_after_its_player_left_is_the_organisers():
    club, campaign, battle, bob, old = world()
    org = as_("demo")
    assert org.post(reverse("battle_finish", args=[battle.pk]), {"winner": "A", "result": "Held"}).status_code == 303
    assert org.post(reverse("club_member_remove", args=[club.slug, Membership.objects.get(
        club=club, user=bob).pk])).status_code == 303
    assert Army.objects.get(battle=battle, side="B").owner == bob, "the finished battle's record keeps him"
    assert org.post(reverse("campaign_session_reopen", args=[campaign.pk]), {"confirm": "on"}).status_code == 303
    assert Army.objects.get(battle=battle, side="B").owner is None
