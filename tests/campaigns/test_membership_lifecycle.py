"""A member leaving the club mid-campaign, on the demo: what happens to the sides they commanded,
to the battles in progress, and to what they can still see or do."""

import re
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
from apps.campaigns.models import Campaign, Club, Invite, Membership, Role, Scenario
from tests.campaigns.test_demo import demo, demo_output  # noqa: F401  (the demo, built once per module)

pytestmark = pytest.mark.usefixtures("demo")


def as_(username):
    client = Client()
    client.force_login(User.objects.get(username=username))
    return client


def world():
    club = Club.objects.get(memberships__user__username="demo")
    campaign = Campaign.objects.get(club=club, name="Operation Crossroads")
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
    said = re.search(r"The organisers now act for what they commanded \(([^)]*)\)", response.content.decode())
    # Both of the demo club's campaigns: the village's Grenadier company and the relay station's Raider band.
    assert said and sorted(said.group(1).split(", ")) == ["Grenadier company", "Raider band"]
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
        assert "belongs to a club you are not a member of" in html
    card = gone.get(reverse("battle_card", args=[battle.pk, "s1"]), HTTP_HX_REQUEST="true")
    assert card.status_code == 404 and card.content.decode() == "Not found: reload the page."


def test_a_reopened_session_is_commanded_as_the_campaign_now_says():
    """Session 1 is finished, the organiser hands side B from bob to alice (no session is open, so
    only the campaign's army changes), then reopens session 1 to put a mistake right: side B of the
    reopened battle is alice's, as the campaign page says, not bob's any more."""
    club, campaign, battle, bob, old = world()
    org, alice = as_("demo"), User.objects.get(username="alice")
    assert org.post(reverse("battle_finish", args=[battle.pk]), {"confirmed": "1", "winner": "A", "result": "Held"}).status_code == 303
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
    assert org.post(reverse("battle_finish", args=[battle.pk]), {"confirmed": "1", "winner": "A", "result": "Held"}).status_code == 303
    assert org.post(reverse("club_member_remove", args=[club.slug, Membership.objects.get(
        club=club, user=bob).pk])).status_code == 303
    assert Army.objects.get(battle=battle, side="B").owner == bob, "the finished battle's record keeps him"
    assert org.post(reverse("campaign_session_reopen", args=[campaign.pk]), {"confirm": "on"}).status_code == 303
    assert Army.objects.get(battle=battle, side="B").owner is None


# ---------------------------------------------------------------------------------- handing a side over

def standalone_battle(org):
    """A battle started from the demo's scenario, the way the scenario page starts one."""
    scenario = Scenario.objects.get(club__memberships__user__username="demo", name="Village crossroads")
    response = org.post(reverse("scenario_start", args=[scenario.pk]), {"name": "Friday skirmish",
                                                                          "status": BattleStatus.IN_PROGRESS})
    assert response.status_code == 302
    return Battle.objects.get(name="Friday skirmish")


def sides(battle):
    return dict(Army.objects.filter(battle=battle).values_list("side", "owner__username"))


def test_an_organiser_hands_a_side_to_another_member_mid_battle():
    """Bob goes home in the middle of a battle started from a scenario; Dora takes his side over."""
    club, campaign, battle, bob, old = world()
    org, dora = as_("demo"), User.objects.get(username="dora")
    skirmish = standalone_battle(org)
    assert sides(skirmish) == {"A": "alice", "B": "bob"}
    page = org.get(reverse("battle", args=[skirmish.pk])).content.decode()
    assert 'id="commanders"' in page and f'action="{reverse("battle_commander", args=[skirmish.pk])}"' in page
    assert 'id="commanders"' not in as_("bob").get(reverse("battle", args=[skirmish.pk])).content.decode()
    version = skirmish.version

    response = org.post(reverse("battle_commander", args=[skirmish.pk]), {"side": "B", "owner": dora.pk}, follow=True)
    assert response.redirect_chain[-1][0] == reverse("battle", args=[skirmish.pk]) + "#commanders"
    assert "Side B, Grenadier company, is played by dora." in response.content.decode()
    assert sides(skirmish) == {"A": "alice", "B": "dora"}
    skirmish.refresh_from_db()
    assert skirmish.version > version, "phones at the table ask again"
    # Only this battle: the scenario and the campaign keep their own commanders.
    assert Army.objects.get(scenario__name="Village crossroads", scenario__club=club, side="B").owner == bob
    assert Army.objects.get(campaign=campaign, side="B").owner == bob
    # Dora now plays side B there; bob does not.
    assert 'name="attacker"' in as_("dora").get(reverse("battle", args=[skirmish.pk])).content.decode()

    # Back to the organisers.
    assert org.post(reverse("battle_commander", args=[skirmish.pk]), {"side": "B", "owner": ""}).status_code == 303
    assert sides(skirmish) == {"A": "alice", "B": None}


def test_handing_a_side_over_is_refused_in_words_and_changes_nothing():
    club, campaign, battle, bob, old = world()
    org = as_("demo")
    skirmish = standalone_battle(org)
    olga = User.objects.get(username="olga")
    url = reverse("battle_commander", args=[skirmish.pk])
    # A player may not; nor may anyone outside the club see that the battle exists.
    assert as_("bob").post(url, {"side": "B", "owner": bob.pk}).status_code == 403
    assert as_("olga").post(url, {"side": "B", "owner": olga.pk}).status_code == 404
    # Someone outside the club cannot be given a side.
    response = org.post(url, {"side": "B", "owner": olga.pk}, follow=True)
    assert f"Only a member of {club.name} may command a side" in response.content.decode()
    # A finished battle keeps who played it.
    assert org.post(reverse("battle_finish", args=[skirmish.pk]), {"confirmed": "1", "winner": "A"}).status_code == 303
    response = org.post(url, {"side": "B", "owner": ""}, follow=True)
    assert "Friday skirmish has ended: who played it stays on its record" in response.content.decode()
    assert 'id="commanders"' not in response.content.decode()
    assert sides(skirmish) == {"A": "alice", "B": "bob"}


def test_a_deactivated_account_is_neither_offered_nor_given_a_side():
    """An account the admin switched off cannot sign in to play: the selects leave it out, on the
    battle page and the campaign page, and choosing it anyway is refused."""
    club, campaign, battle, bob, old = world()
    org = as_("demo")
    skirmish = standalone_battle(org)
    User.objects.filter(username="dora").update(is_active=False)
    dora = User.objects.get(username="dora")
    for url in (reverse("battle", args=[skirmish.pk]), reverse("campaign", args=[campaign.pk])):
        page = org.get(url).content.decode()
        assert f'value="{bob.pk}"' in page and f'value="{dora.pk}"' not in page, url

    response = org.post(reverse("battle_commander", args=[skirmish.pk]), {"side": "B", "owner": dora.pk}, follow=True)
    assert "Nothing was changed" in response.content.decode()
    response = org.post(reverse("campaign_commander", args=[campaign.pk]), {"side": "B", "owner": dora.pk},
                        follow=True)
    assert "is commanded by" not in response.content.decode()
    assert sides(skirmish) == {"A": "alice", "B": "bob"}
    assert Army.objects.get(campaign=campaign, side="B").owner == bob


def test_on_a_campaign_battle_the_side_changes_with_its_campaign():
    club, campaign, battle, bob, old = world()
    dora = User.objects.get(username="dora")
    response = as_("demo").post(reverse("battle_commander", args=[battle.pk]), {"side": "B", "owner": dora.pk},
                                follow=True)
    assert f"is played by dora in the campaign and in {battle.name}." in response.content.decode()
    assert Army.objects.get(campaign=campaign, side="B").owner == dora
    assert sides(battle)["B"] == "dora"
