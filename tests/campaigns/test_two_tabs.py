"""Two tabs, or a double tap, doing the same thing at the same moment, on real PostgreSQL with a
thread (and database connection) per request: nothing fails on a unique constraint, nothing is
half saved, and each answer says what happened."""

import re

import pytest
from django.contrib.auth.models import User
from django.test import Client
from django.urls import reverse

from apps.campaigns.formats import export_scenario
from apps.campaigns.models import Campaign, Club, Scenario
from apps.structures.formats import dumps, export_sheet
from apps.structures.models import BunkerSheet
from tests.battles.test_concurrency import run_together as at_once  # each request on its own thread
from tests.demo_rows import load_demo

pytestmark = [pytest.mark.postgres, pytest.mark.django_db(transaction=True)]


def tab(user):
    """A signed-in browser tab that shows a server error as the 500 it is, as a browser would."""
    client = Client(raise_request_exception=False)
    client.force_login(user)
    return client


def twice(user, url, data):
    first, second = tab(user), tab(user)
    return at_once(lambda: first.post(url, data), lambda: second.post(url, data))


def statuses(answers):
    return sorted(a.status_code for a in answers)


@pytest.fixture
def demo():
    load_demo()
    d = type("Demo", (), {})()
    d.organiser, d.designer = User.objects.get(username="demo"), User.objects.get(username="dora")
    d.village = Scenario.objects.get(name="Village crossroads")
    d.club = d.village.club
    return d


def test_cloning_a_sheet_twice_at_once_makes_two_club_sheets(demo):
    library = BunkerSheet.objects.filter(club=None, is_blank=False).order_by("pk").first()
    answers = twice(demo.designer, reverse("sheet_clone", args=[library.pk]), {"club": demo.club.pk})
    assert statuses(answers) == [302, 302]
    slugs = sorted(BunkerSheet.objects.filter(club=demo.club, slug__startswith=library.slug).values_list("slug", flat=True))
    assert slugs == [library.slug, f"{library.slug}-2"]


def test_two_new_sheets_at_once(demo):
    answers = twice(demo.designer, reverse("sheet_new"), {"club": demo.club.pk})
    assert statuses(answers) == [302, 302]
    assert BunkerSheet.objects.filter(club=demo.club, slug__startswith="new-bunker").count() == 2


def test_the_clone_form_sent_twice_at_once_makes_one_clone(demo):
    from tests.structures.test_sheet_editor import form_data

    library = BunkerSheet.objects.filter(club=None, is_blank=False).order_by("pk").first()
    data = {**form_data(tab(demo.designer).get(reverse("sheet", args=[library.pk])), None), "club": demo.club.pk}
    answers = twice(demo.designer, reverse("sheet_clone", args=[library.pk]), {k: data[k] for k in ("club", "after")})
    clone = BunkerSheet.objects.get(club=demo.club, slug__startswith=library.slug)
    assert [a["Location"] for a in answers] == [reverse("sheet_edit", args=[clone.pk])] * 2


def test_the_new_sheet_form_sent_twice_at_once_makes_one_sheet(demo):
    from tests.structures.test_sheet_editor import form_data

    data = {**form_data(tab(demo.designer).get(reverse("sheet_list")), None), "club": demo.club.pk}
    answers = twice(demo.designer, reverse("sheet_new"), {k: data[k] for k in ("club", "after")})
    sheet = BunkerSheet.objects.get(club=demo.club, slug__startswith="new-bunker")
    assert [a["Location"] for a in answers] == [reverse("sheet_edit", args=[sheet.pk])] * 2


def test_importing_the_same_sheet_twice_at_once(demo):
    library = BunkerSheet.objects.filter(club=None, is_blank=False).order_by("pk").first()
    data = {"club": demo.club.pk, "text": dumps(export_sheet(library))}
    answers = twice(demo.designer, reverse("sheet_import"), data)
    assert statuses(answers) == [302, 302], [re.findall(r"could not be saved[^<]*", a.content.decode()) for a in answers]
    assert BunkerSheet.objects.filter(club=demo.club, slug__startswith=library.slug).count() == 2


def test_importing_the_same_scenario_twice_at_once(demo):
    data = {"club": demo.club.pk, "text": dumps(export_scenario(demo.village))}
    answers = twice(demo.designer, reverse("scenario_import"), data)
    assert statuses(answers) == [302, 302], [re.findall(r"could not be saved[^<]*", a.content.decode()) for a in answers]
    names = set(Scenario.objects.filter(club=demo.club, name__startswith="Village crossroads").values_list("name", flat=True))
    assert names == {"Village crossroads", "Village crossroads (2)", "Village crossroads (3)"}


def test_importing_the_same_campaign_twice_at_once(demo):
    campaign = Campaign.objects.get(club=demo.club, name="Operation Crossroads")
    file = tab(demo.organiser).get(reverse("campaign_export", args=[campaign.pk])).getvalue().decode()
    answers = twice(demo.organiser, reverse("campaign_import"), {"club": demo.club.pk, "text": file})
    assert statuses(answers) == [303, 303], [re.findall(r"could not be saved[^<]*", a.content.decode()) for a in answers]
    assert Campaign.objects.filter(club=demo.club, name__startswith=campaign.name).count() == 3


def test_starting_the_same_campaign_from_two_tabs_makes_one_and_says_so_in_the_other(demo):
    answers = twice(demo.organiser, reverse("scenario_campaign", args=[demo.village.pk]),
                    {"campaign-name": "Twin campaign", "campaign-single_open_battle": "on"})
    assert statuses(answers) == [303, 400]
    refused = next(a for a in answers if a.status_code == 400).content.decode()
    assert f"{demo.club.name} already has a campaign called Twin campaign." in refused
    campaign = Campaign.objects.get(name="Twin campaign")
    assert campaign.battles.count() == 1 and campaign.structures.exists()


NEW_SCENARIO = {"name": "Twin hills", "description": "", "table_width": "48", "table_depth": "36", "ruleset": "dh",
                "damage_variant": "3", "weather": "clear"}


def test_two_scenarios_of_the_same_name_at_once_make_one_and_say_why_in_the_other(demo):
    """Two tabs (or two designers) creating scenarios of one name in one club at the same instant."""
    answers = twice(demo.designer, reverse("scenario_new"), {**NEW_SCENARIO, "club": demo.club.pk})
    assert statuses(answers) == [302, 400]
    refused = next(a for a in answers if a.status_code == 400).content.decode()
    assert "Your club already has a scenario with this name." in refused
    assert Scenario.objects.filter(club=demo.club, name="Twin hills").count() == 1


def test_the_new_scenario_form_sent_twice_at_once_creates_one(demo):
    from tests.structures.test_sheet_editor import form_data

    data = form_data(tab(demo.designer).get(reverse("scenario_new")), None)
    answers = twice(demo.designer, reverse("scenario_new"), {**data, **NEW_SCENARIO, "club": demo.club.pk})
    scenario = Scenario.objects.get(club=demo.club, name="Twin hills")
    assert [a["Location"] for a in answers] == [reverse("scenario", args=[scenario.pk])] * 2


def test_two_scenarios_renamed_alike_at_once_one_is_renamed_and_the_other_says_why(demo):
    """Two different scenarios, so two different rows for one_writer; its SELECT … FOR UPDATE holds the
    club's row too (Scenario's ordering by club joins it), and that makes them take turns."""
    from tests.test_permission_matrix import form_on

    tab(demo.designer).post(reverse("scenario_new"), {**NEW_SCENARIO, "club": demo.club.pk, "name": "Hill 112"})
    posts = []
    for scenario in (demo.village, Scenario.objects.get(club=demo.club, name="Hill 112")):
        page, url = reverse("scenario", args=[scenario.pk]), reverse("scenario_settings", args=[scenario.pk])
        client = tab(demo.designer)
        data = {**form_on(client, page, url), "name": "Twin hills"}
        posts.append(lambda client=client, url=url, data=data: client.post(url, data))
    answers = at_once(*posts)
    assert statuses(answers) == [302, 400]
    assert "Your club already has a scenario with this name." in next(
        a for a in answers if a.status_code == 400).content.decode()
    assert Scenario.objects.filter(club=demo.club, name="Twin hills").count() == 1


def test_two_clubs_of_the_same_name_at_once_get_two_addresses(demo):
    """Two people (or one in two old tabs whose form does not say which clubs it knew of)."""
    answers = twice(demo.designer, reverse("club_new"), {"name": "Twins"})
    assert statuses(answers) == [303, 303]
    assert sorted(Club.objects.filter(name="Twins").values_list("slug", flat=True)) == ["twins", "twins-2"]
    assert all(c.memberships.get().user == demo.designer for c in Club.objects.filter(name="Twins"))


def test_the_new_club_form_sent_twice_at_once_makes_one_club(demo):
    from tests.structures.test_sheet_editor import form_data

    data = {**form_data(tab(demo.designer).get(reverse("club_new")), None), "name": "Twins"}
    assert data["after"] == str(demo.club.pk)
    answers = twice(demo.designer, reverse("club_new"), data)
    club = Club.objects.get(name="Twins")
    assert [a["Location"] for a in answers] == [reverse("club", args=[club.slug]) + "#invites"] * 2


def test_setting_up_the_next_session_from_two_tabs_at_once_sets_up_one(demo):
    from apps.battles.models import Battle

    campaign = Campaign.objects.get(club=demo.club, name="Operation Crossroads")
    Campaign.objects.filter(pk=campaign.pk).update(single_open_battle=False)
    answers = twice(demo.organiser, reverse("campaign_session_start", args=[campaign.pk]),
                    {"name": "", "weather": "clear", "number": "2"})
    two = Battle.objects.get(campaign=campaign, session_number=2)
    assert [a["Location"] for a in answers] == [reverse("battle", args=[two.pk])] * 2
    assert campaign.battles.count() == 2


# ---------------------------------------------------------------------------------- the scenario builder

def test_adding_the_same_force_from_two_tabs_adds_one_and_says_why_in_the_other(demo):
    demo.village.armies.filter(side="B").delete()
    answers = twice(demo.designer, reverse("scenario_army_new", args=[demo.village.pk]),
                    {"newarmy-side": "B", "newarmy-name": "Greys", "newarmy-owner": ""})
    assert statuses(answers) == [302, 400]
    refused = next(a for a in answers if a.status_code == 400).content.decode()
    assert "That side already has a force in this scenario" in refused
    assert demo.village.armies.filter(side="B").count() == 1


def test_two_tabs_putting_two_units_on_one_floor_at_once(demo):
    from apps.armies.models import Unit
    from apps.structures.models import Floor
    from tests.structures.test_sheet_editor import form_data

    floor = Floor.objects.filter(structure__scenario=demo.village, occupant__isnull=True, is_roof=False).first()
    first, second = Unit.objects.filter(army__scenario=demo.village, floor__isnull=True).order_by("pk")[:2]
    posts = []
    for unit in (first, second):
        url, client = reverse("scenario_unit", args=[demo.village.pk, unit.pk]), tab(demo.designer)
        data = {**form_data(client.get(url), None), "place": f"floor:{floor.pk}"}
        posts.append(lambda client=client, url=url, data=data: client.post(url, data))
    answers = at_once(*posts)
    assert statuses(answers) == [302, 400]
    holder = Unit.objects.get(floor=floor)
    refused = next(a for a in answers if a.status_code == 400).content.decode()
    assert f"{holder.name} is already on that floor (one unit per floor)" in refused


def test_two_tabs_saving_one_force_at_once_do_not_put_back_each_others_change(demo):
    """Both forms drawn from the same force: one renames it, the other gives it another commander. The
    second to take the scenario's lock finds the first's change and is refused; the same form sent twice
    at once is saved once and neither send is a conflict."""
    from tests.structures.test_sheet_editor import form_data

    army = demo.village.armies.get(side="A")
    url, builder, p = reverse("scenario_army", args=[demo.village.pk, army.pk]), \
        reverse("scenario", args=[demo.village.pk]), f"army{army.pk}-"
    first, second = tab(demo.designer), tab(demo.organiser)
    data = form_data(first.get(builder), f"army-{army.pk}-form")
    bob = User.objects.get(username="bob")
    renamed, given = {**data, p + "name": "Guards rifle company"}, {**data, p + "owner": str(bob.pk)}
    answers = at_once(lambda: first.post(url, renamed), lambda: second.post(url, given))
    assert statuses(answers) == [302, 409]
    army.refresh_from_db()
    saved = renamed if answers[0].status_code == 302 else given
    assert (army.name, str(army.owner_id)) == (saved[p + "name"], saved[p + "owner"])

    data = form_data(first.get(builder), f"army-{army.pk}-form")
    data[p + "name"] = "Twice"
    assert statuses(twice(demo.designer, url, data)) == [302, 302]
    army.refresh_from_db()
    assert army.name == "Twice"


def test_two_tabs_saving_the_zones_at_once_do_not_put_back_each_others_change(demo):
    from tests.structures.test_sheet_editor import form_data

    url, builder = reverse("scenario_zones", args=[demo.village.pk]), reverse("scenario", args=[demo.village.pk])
    first, second = tab(demo.designer), tab(demo.organiser)
    data = form_data(first.get(builder), "zones-form")
    deeper, moved = {**data, "zones-0-depth": "18"}, {**data, "zones-1-y": "30"}
    answers = at_once(lambda: first.post(url, deeper), lambda: second.post(url, moved))
    assert statuses(answers) == [302, 409]
    demo.village.refresh_from_db()
    saved = deeper if answers[0].status_code == 302 else moved
    assert [(z["y"], z["depth"]) for z in demo.village.deployment_zones] == [
        (int(saved["zones-0-y"]), int(saved["zones-0-depth"])), (int(saved["zones-1-y"]), int(saved["zones-1-depth"]))]

    data = {**form_data(first.get(builder), "zones-form"), "zones-0-depth": "6"}
    assert statuses(twice(demo.designer, url, data)) == [302, 302]
    demo.village.refresh_from_db()
    assert demo.village.deployment_zones[0]["depth"] == 6


# ---------------------------------------------------------------------------------- the campaign page

@pytest.mark.parametrize("htmx", [False, True])
def test_two_tabs_saving_the_campaign_settings_at_once_do_not_put_back_each_others_change(demo, htmx):
    """The second to take the campaign's lock finds the first's change and is refused; the same form
    sent twice at once is saved once and neither send is a conflict."""
    from tests.structures.test_sheet_editor import form_data

    campaign = Campaign.objects.get(club=demo.club, name="Operation Crossroads")
    url, page = reverse("campaign_settings", args=[campaign.pk]), reverse("campaign", args=[campaign.pk])
    headers = {"HTTP_HX_REQUEST": "true"} if htmx else {}
    first, second = tab(demo.organiser), tab(demo.organiser)
    data = form_data(first.get(page), "settings-form")
    assert "fires_persist" not in data and data["single_open_battle"] == "on"
    burning, several = {**data, "fires_persist": "on"}, {k: v for k, v in data.items() if k != "single_open_battle"}
    answers = at_once(lambda: first.post(url, burning, **headers), lambda: second.post(url, several, **headers))
    assert statuses(answers) == ([200, 409] if htmx else [303, 409])
    campaign.refresh_from_db()
    assert (campaign.fires_persist, campaign.single_open_battle) in ((True, True), (False, False))

    data = {**form_data(first.get(page), "settings-form"), "fires_persist": "on", "single_open_battle": "on"}
    answers = at_once(lambda: first.post(url, data, **headers), lambda: second.post(url, data, **headers))
    assert statuses(answers) == ([200, 200] if htmx else [303, 303])
    campaign.refresh_from_db()
    assert (campaign.fires_persist, campaign.single_open_battle) == (True, True)


def test_the_new_unit_form_sent_twice_at_once_adds_one_unit(demo):
    from tests.structures.test_sheet_editor import form_data

    army = demo.village.armies.order_by("side").first()
    url = reverse("scenario_unit_new", args=[demo.village.pk, army.pk])
    answers = twice(demo.designer, url, {**form_data(tab(demo.designer).get(url), None), "name": "Twin squad"})
    assert [a["Location"] for a in answers] == [reverse("scenario", args=[demo.village.pk]) + f"#army-{army.pk}"] * 2
    assert army.units.filter(name="Twin squad").count() == 1


def test_the_section_form_sent_twice_at_once_adds_one_section(demo):
    from tests.test_permission_matrix import form_on

    house = demo.village.structures.get(name="Timber cottage")
    page = reverse("scenario", args=[demo.village.pk])
    url = reverse("scenario_structure_section", args=[demo.village.pk, house.pk])
    answers = twice(demo.designer, url, form_on(tab(demo.designer), page, url))
    section = demo.village.structures.get(name="Timber cottage (section)")
    assert [a["Location"] for a in answers] == [page + f"#structure-{section.pk}"] * 2


def test_a_new_scenario_form_naming_another_clubs_id_neither_waits_for_nor_locks_that_club(demo):
    """The new-scenario form locks the club it names before the form decides whether the user may
    choose it (lock_chosen_club): any club's id, from anyone with a club of their own (anyone may make
    one), took that club's row lock, and FOR UPDATE holds back every row written that refers to the
    club (a battle, a membership, a scenario) for as long as it is held. Only a club the user designs
    for is locked: here, another connection holding the demo club's lock keeps Olga waiting not at all."""
    import threading

    from django.db import connection, transaction

    olga = User.objects.get(username="olga")
    held, done = threading.Event(), threading.Event()

    def hold():
        try:
            with transaction.atomic():
                Club.lock(demo.club.pk)
                held.set()
                done.wait(10)
        finally:
            connection.close()

    holder = threading.Thread(target=hold)
    holder.start()
    try:
        assert held.wait(10)
        with connection.cursor() as cursor:
            cursor.execute("SET lock_timeout = '2s'")  # waiting on the lock fails the request, not the test run
        answer = tab(olga).post(reverse("scenario_new"), {**NEW_SCENARIO, "club": demo.club.pk})
    finally:
        done.set()
        holder.join()
        with connection.cursor() as cursor:
            cursor.execute("RESET lock_timeout")
    assert answer.status_code == 400 and "Select a valid choice" in answer.content.decode()
    assert not Scenario.objects.filter(name="Twin hills").exists()


def test_the_copy_form_sent_twice_at_once_makes_one_copy(demo):
    """A double tap on a scenario's "Copy": both sends land on one copy, holding all the scenario does."""
    from tests.structures.test_sheet_editor import form_data

    data = form_data(tab(demo.designer).get(reverse("scenario", args=[demo.village.pk])), "copy-scenario")
    answers = twice(demo.designer, reverse("scenario_copy", args=[demo.village.pk]), data)
    copy = Scenario.objects.get(club=demo.club, name__startswith="Village crossroads (copy)")
    assert [a["Location"] for a in answers] == [reverse("scenario", args=[copy.pk])] * 2
    assert copy.structures.count() == demo.village.structures.count()
