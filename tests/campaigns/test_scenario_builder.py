"""The scenario builder through the test client: create a scenario, add structures from templates,
place them by typed coordinates or by the map's drag endpoint, floors, openings, sections and
connections, deployment zones, forces, starting a battle (it gets copies; the scenario is unchanged),
printing its sheets, and who may do what."""

import re
from decimal import Decimal

import pytest
from django.contrib.auth.models import User
from django.urls import reverse

from apps.armies.models import Unit, Weapon
from apps.battles.models import Battle, BattleStatus
from apps.campaigns.formats import export_scenario, import_scenario
from apps.battles import services as battles
from apps.campaigns import services
from apps.campaigns.models import Campaign, Scenario
from apps.structures.formats import dumps
from apps.structures.models import BunkerSheet, Floor, Opening, Structure
from tests.campaigns.test_pages import assert_csp_clean, body, fast_passwords, page, signed_in, text_of  # noqa: F401
from tests.structures.test_sheet_editor import browser_sign_in, form_data
from tests.demo_rows import load_demo


@pytest.fixture
def demo(db):
    load_demo()
    w = type("Demo", (), {})()
    w.village = Scenario.objects.get(name="Village crossroads")
    w.club = w.village.club
    w.organiser = User.objects.get(username="demo")
    w.designer = User.objects.get(username="dora")
    w.player = User.objects.get(username="alice")
    w.outsider = User.objects.get(username="olga")
    w.farm = Scenario.objects.get(name="Farm by the ford")
    return w


def new_scenario(client, demo, **fields):
    data = {"club": demo.club.pk, "name": "Hill 112", "description": "", "table_width": "48",
            "table_depth": "36", "ruleset": "dh", "damage_variant": "3", "weather": "rain", "fires": "on", **fields}
    return signed_in(client, demo.designer).post(reverse("scenario_new"), data)


@pytest.fixture
def hill(client, demo):
    assert new_scenario(client, demo).status_code == 302
    return Scenario.objects.get(name="Hill 112")


def add(client, scenario, blueprint, **extra):
    return client.post(reverse("scenario_structure_add", args=[scenario.pk]), {"blueprint": blueprint, **extra})


# ---------------------------------------------------------------------------------- create and settings

def test_create_a_scenario(client, demo):
    response = signed_in(client, demo.designer).get(reverse("scenario_new"))
    assert response.status_code == 200
    assert_csp_clean(response)
    lg_options = dict(collapse_check="on", uncontrolled_events="on", fireteam_initiative="on")
    response = new_scenario(client, demo, ruleset="lg", **lg_options)
    hill = Scenario.objects.get(name="Hill 112")
    assert response.status_code == 302 and response["Location"] == reverse("scenario", args=[hill.pk])
    assert (hill.ruleset, hill.damage_variant, hill.weather, hill.author) == ("lg", 3, "rain", demo.designer)
    assert hill.collapse_check and hill.uncontrolled_events and hill.fireteam_initiative and hill.fires
    # The same options sent with another ruleset (ticked, then Disposable Heroes chosen) are not kept:
    # only LaserGrenadiers' rules read them.
    assert new_scenario(client, demo, name="Hill 113", **lg_options).status_code == 302
    other = Scenario.objects.get(name="Hill 113")
    assert (other.ruleset, other.damage_variant, other.collapse_check, other.uncontrolled_events,
            other.fireteam_initiative, other.fires) == ("dh", 0, False, False, False, True)
    assert (hill.table_width, hill.table_depth) == (48, 36)
    assert hill.deployment_zones == [{"side": "A", "x": 0, "y": 0, "width": 48, "depth": 9},
                                     {"side": "B", "x": 0, "y": 27, "width": 48, "depth": 9}]


def test_the_new_scenario_form_sent_twice_creates_one_and_lands_on_it(client, demo):
    """A double tap on "Create the scenario": the second send was refused with 'already has a scenario with
    this name', as if the name were taken; it lands on the scenario the first created. Sent from the page
    opened after it, the same name is refused beside the field."""
    url = reverse("scenario_new")
    ours = Scenario.objects.filter(club=demo.club).latest("pk")
    theirs = Scenario.objects.create(club=demo.farm.club, name="A newer farm", ruleset="dh")
    data = {**form_data(signed_in(client, demo.designer).get(url), None), "club": demo.club.pk, "name": "Hill 112"}
    assert data["after"] == str(ours.pk)  # (the other club's newer farm is not counted)
    assert theirs.pk > ours.pk
    first, again = client.post(url, data), client.post(url, data)
    hill = Scenario.objects.get(club=demo.club, name="Hill 112")
    assert first["Location"] == again["Location"] == reverse("scenario", args=[hill.pk])
    assert "Hill 112 is already created (the form was sent twice): here it is." in body(client.get(again["Location"]))
    data = {**form_data(client.get(url), None), "club": demo.club.pk, "name": "Hill 112"}
    response = client.post(url, data)
    assert response.status_code == 400 and "Your club already has a scenario with this name." in body(response)
    assert Scenario.objects.filter(name="Hill 112").count() == 1


@pytest.mark.parametrize("fields, field, words", [
    ({"name": "Village crossroads"}, "name", "already has a scenario with this name"),
    ({"table_width": "0"}, "table_width", "more than 0"),
    ({"ruleset": "chess"}, "ruleset", "Select a valid choice"),
    ({"table_depth": "100000"}, "table_depth", "At most 9999 inches"),
    ({"ruleset": "lg", "collapse_check": "on", "damage_variant": "0"}, "collapse_check",
     "A collapse check reads the damage points"),
])
def test_bad_settings_are_refused_beside_the_field(client, demo, fields, field, words):
    before = Scenario.objects.count()
    response = new_scenario(client, demo, **fields)
    assert response.status_code == 400 and words in body(response)
    assert Scenario.objects.count() == before


def test_settings_save_and_refuse_a_table_too_small_for_the_ground(client, demo):
    scenario = demo.village
    signed_in(client, demo.designer)
    data = {"name": scenario.name, "description": "x", "table_width": "72", "table_depth": "48", "ruleset": "lg",
            "damage_variant": "2", "weather": "mist", "version": str(scenario.version)}
    assert client.post(reverse("scenario_settings", args=[scenario.pk]), data).status_code == 302
    scenario.refresh_from_db()
    assert (scenario.ruleset, scenario.damage_variant, scenario.weather, scenario.version) == ("lg", 2, "mist", 2)

    data.update(table_width="40", version="2")
    response = client.post(reverse("scenario_settings", args=[scenario.pk]), data)
    assert response.status_code == 400 and "would be off the table: move them first" in body(response)
    scenario.refresh_from_db()
    assert scenario.table_width == 72

    # a stale version is not saved over someone else's settings
    data.update(table_width="72", weather="rain", version="1")
    response = client.post(reverse("scenario_settings", args=[scenario.pk]), data, follow=True)
    assert "Someone else changed this scenario&#x27;s settings" in body(response)
    scenario.refresh_from_db()
    assert scenario.weather == "mist"


def test_the_same_settings_sent_twice_are_saved_not_called_someone_elses_change(client, demo):
    """A double tap on Save: the second send carries the version the first replaced, but nobody else
    changed anything, so it is not told its settings were lost."""
    scenario = demo.village
    data = {"name": scenario.name, "description": "x", "table_width": "72", "table_depth": "48", "ruleset": "lg",
            "damage_variant": "2", "weather": "mist", "version": str(scenario.version)}
    url = reverse("scenario_settings", args=[scenario.pk])
    signed_in(client, demo.designer).post(url, data)
    html = body(client.post(url, data, follow=True))
    assert "Settings saved." in html and "Someone else" not in html
    scenario.refresh_from_db()
    assert (scenario.weather, scenario.version) == ("mist", 2)


def test_a_smaller_table_must_still_hold_every_footprint(client, demo, hill):
    """A house 8″ wide centred at x 40: its centre fits on a 42″ table, its walls do not."""
    add(client, hill, "house-stone-1")
    Structure.objects.filter(scenario=hill).update(x=40, y=10, width=8, depth=5, rotation=0)
    data = {"name": hill.name, "description": "", "table_width": "42", "table_depth": "36", "ruleset": "dh",
            "weather": "rain", "fires": "on", "version": str(hill.version)}
    response = client.post(reverse("scenario_settings", args=[hill.pk]), data)
    assert response.status_code == 400 and "would be off the table: move them first" in body(response)
    hill.refresh_from_db()
    assert hill.table_width == 48
    assert client.post(reverse("scenario_settings", args=[hill.pk]), {**data, "table_width": "44"}).status_code == 302
    hill.refresh_from_db()
    assert hill.table_width == 44


def test_a_resized_table_takes_its_edge_zones_along_and_holds_every_zone_and_unit(client, demo, hill):
    """The table shrank under its zones and units: only structures were checked, so side B's zone (y 27 + 9 on
    a 36″ table) and a unit at x 45 were left off a 40″ × 30″ table, the map drew them off its edge, and the
    scenario's own export was refused on import (deployment_zones[1].depth runs off the table), a designer's
    backup lost. Zones along a whole edge or against the far edge now follow the table; a unit or any other
    zone that would be off it is refused beside the field, as a structure is; nothing saved."""
    signed_in(client, demo.designer)
    client.post(reverse("scenario_army_new", args=[hill.pk]), {"newarmy-side": "A", "newarmy-name": "Guards"})
    Unit.objects.create(army=hill.armies.get(), name="Scouts", models_start=4, models_left=4, x=45, y=5)
    middle = {"side": "A", "x": 30, "y": 10, "width": 15, "depth": 5}
    Scenario.objects.filter(pk=hill.pk).update(deployment_zones=[*hill.deployment_zones, middle])
    data = {"name": hill.name, "description": "", "table_width": "40", "table_depth": "30", "ruleset": "dh",
            "weather": "rain", "fires": "on", "version": str(hill.version)}
    response = client.post(reverse("scenario_settings", args=[hill.pk]), data)
    assert response.status_code == 400
    assert [p.text() for p in page(response).find("id_table_width_error").find_all("p")] == [
        "Scouts would be off the table: move them first",
        "The deployment zone of side A would be off the table: change the zones first"]
    assert text_of(response, "id_table_depth_error") == ""
    hill.refresh_from_db()
    assert (hill.table_width, hill.table_depth, hill.deployment_zones[2]) == (48, 36, middle)

    Scenario.objects.filter(pk=hill.pk).update(deployment_zones=hill.deployment_zones[:2])
    Unit.objects.filter(name="Scouts").update(x=38)
    assert client.post(reverse("scenario_settings", args=[hill.pk]), data).status_code == 302
    hill.refresh_from_db()
    assert (hill.table_width, hill.table_depth) == (40, 30)
    assert hill.deployment_zones == [{"side": "A", "x": 0, "y": 0, "width": 40, "depth": 9},
                                     {"side": "B", "x": 0, "y": 21, "width": 40, "depth": 9}]
    assert import_scenario(export_scenario(hill), club=demo.club, user=demo.designer).table_width == 40


# ---------------------------------------------------------------------------------- structures

def test_add_structures_from_templates_with_damage_points_for_the_variant(client, demo, hill):
    assert add(client, hill, "house-brick-2").status_code == 302
    house = hill.structures.get()
    assert house.name == "Brick house, 2 floors" and house.damage_max == 24  # variant 3
    assert house.wall_material.slug == "brick" and house.roof_material.slug == "wood_and_tile" and house.flammable
    assert [f.level for f in house.floors.all()] == [0, 1]
    assert Opening.objects.filter(floor__structure=house).count() == 9
    assert (house.x, house.y) == (24, 18)  # the table's centre

    Scenario.objects.filter(pk=hill.pk).update(damage_variant=1)
    assert add(client, hill, "house-brick-2").status_code == 302
    second = hill.structures.get(name="Brick house, 2 floors 2")
    assert second.damage_max == 4 and (second.x, second.y) != (house.x, house.y)  # no overlap

    assert add(client, hill, "shed").status_code == 302
    assert hill.structures.get(name="Shed").flimsy


def test_a_scenario_never_played_is_deleted_with_its_ground_and_forces(client, demo, hill):
    """There was no way to be rid of a draft or a mistaken import. A scenario battles were started from
    stays: their pages and their campaign's file name it."""
    add(client, hill, "house-brick-2")
    sheet = BunkerSheet.objects.get(club=None, slug="german-concrete-blockhouse")
    add(client, hill, "bunker", sheet=sheet.pk)
    client.post(reverse("scenario_army_new", args=[hill.pk]), {"newarmy-side": "A", "newarmy-name": "Guards"})
    url = reverse("scenario_delete", args=[hill.pk])
    assert signed_in(client, demo.player).post(url).status_code == 403
    assert signed_in(client, demo.outsider).post(url).status_code == 404
    assert Scenario.objects.filter(pk=hill.pk).exists() and hill.structures.count() == 2

    signed_in(client, demo.designer)
    assert "Delete Hill 112 with its ground and forces" in body(client.get(reverse("scenario", args=[hill.pk])))
    response = client.post(url)
    assert response.status_code == 302 and response["Location"] == reverse("scenario_list")
    assert not Scenario.objects.filter(pk=hill.pk).exists()
    assert not Structure.objects.filter(scenario_id=hill.pk).exists()
    assert BunkerSheet.objects.filter(pk=sheet.pk).exists()
    assert "Deleted the scenario Hill 112." in body(client.get(response["Location"]))

    played = demo.village
    battles = played.battles.count()
    assert battles
    response = client.post(reverse("scenario_delete", args=[played.pk]))
    assert response.status_code == 409 and "Village crossroads stays: battles were started from it" in body(response)
    assert Scenario.objects.filter(pk=played.pk).exists() and played.battles.count() == battles


def test_a_template_larger_than_the_table_is_not_added(client, demo):
    """A 12″ trench on a 10″ table was placed hanging off it, and the scenario's settings could then not be
    saved at all ("Trench would be off the table: move them first")."""
    assert new_scenario(client, demo, name="Tiny", table_width="10", table_depth="10").status_code == 302
    tiny = Scenario.objects.get(name="Tiny")
    response = add(client, tiny, "trench")
    assert response.status_code == 400 and not tiny.structures.exists()
    assert text_of(response, "add_blueprint_error") == "A trench is 12″ × 1.5″: it does not fit on this 10″ × 10″ table"
    assert add(client, tiny, "foxhole").status_code == 302
    foxhole = tiny.structures.get()
    assert (foxhole.x, foxhole.y) == (5, 5)


def test_a_bunker_needs_its_sheet_and_takes_its_crew(client, demo, hill):
    before = Structure.objects.count()
    response = add(client, hill, "bunker")
    assert response.status_code == 400 and "A bunker needs its sheet" in body(response)
    assert Structure.objects.count() == before
    sheet = BunkerSheet.objects.get(club=None, slug="german-concrete-blockhouse")
    assert add(client, hill, "bunker", sheet=sheet.pk).status_code == 302
    bunker = hill.structures.get(sheet=sheet)
    assert bunker.kind == "fort" and bunker.crew_men == 24 and bunker.name == sheet.name
    # another club's sheet is not offered
    theirs = BunkerSheet.objects.create(club=demo.farm.club, slug="secret", name="Secret")
    response = add(client, hill, "bunker", sheet=theirs.pk)
    assert response.status_code == 400 and not hill.structures.filter(sheet=theirs).exists()


def test_the_sheet_lists_tell_a_clone_from_its_library_sheet(client, demo, hill):
    """A clone keeps its library sheet's name until it is renamed: both were offered as "German AT
    Bunker", on the Add-structure card and the structure page alike."""
    library = BunkerSheet.objects.get(club=None, slug="german-at-bunker")
    assert client.post(reverse("sheet_clone", args=[library.pk]), {"club": demo.club.pk}).status_code == 302
    clone = BunkerSheet.objects.get(club=demo.club, slug="german-at-bunker")
    select = page(client.get(reverse("scenario", args=[hill.pk]))).find("add_sheet")
    offered = {option.attrs["value"]: option.text() for option in select.find_all("option")}
    assert (offered[str(library.pk)], offered[str(clone.pk)]) == ("German AT Bunker (library)", "German AT Bunker")
    assert add(client, hill, "bunker", sheet=clone.pk).status_code == 302
    bunker = hill.structures.get(sheet=clone)
    structure_page = body(client.get(reverse("scenario_structure", args=[hill.pk, bunker.pk])))
    assert f'<option value="{clone.pk}" selected>German AT Bunker</option>' in structure_page
    assert f'<option value="{library.pk}">German AT Bunker (library)</option>' in structure_page


def a_ready_and_an_unready_bunker(client, demo, hill):
    """Two bunkers on the hill: one on a library sheet, one on the club's copy of it without its main-gun row
    ("Hill 112 Pillbox"), as drawn up from the blank card. Returns the two sheets."""
    library = BunkerSheet.objects.get(club=None, slug="german-hmg-loghouse")
    assert client.post(reverse("sheet_clone", args=[library.pk]), {"club": demo.club.pk}).status_code == 302
    clone = BunkerSheet.objects.get(club=demo.club, slug="german-hmg-loghouse")
    BunkerSheet.objects.filter(pk=clone.pk).update(name="Hill 112 Pillbox", penetration_row=[])
    assert add(client, hill, "bunker", sheet=clone.pk).status_code == 302
    assert add(client, hill, "bunker", sheet=library.pk).status_code == 302
    return library, clone


def test_the_builder_marks_a_bunker_whose_sheet_is_not_ready_for_play(client, demo, hill):
    """Found playing a weekend's campaign on phones: a club's sheet drawn up from the blank card without its
    main-gun row went onto a bunker and into a campaign, and at the table every attack on that bunker was
    refused ("…'s sheet: penetration_row needs 10 values"). The sheet editor said "Not ready for play yet",
    the builder said nothing. Now the bunker's row says so, and links to the sheet to fill it in."""
    library, clone = a_ready_and_an_unready_bunker(client, demo, hill)
    unready, ready = hill.structures.get(sheet=clone), hill.structures.get(sheet=library)
    response = client.get(reverse("scenario", args=[hill.pk]))
    said = ("Its sheet is not ready for play (penetration_row needs 10 values (d10 <2, 2 … 9, 10+), has 0): "
            "every attack on it is refused until the sheet is filled in. Fill in the sheet")
    assert said in text_of(response, f"structure-{unready.pk}")
    row = page(response).find(f"structure-{unready.pk}")
    assert reverse("sheet_edit", args=[clone.pk]) in [a.attrs.get("href") for a in row.find_all("a")]
    assert "not ready for play" not in text_of(response, f"structure-{ready.pk}")

    BunkerSheet.objects.filter(pk=clone.pk).update(penetration_row=library.penetration_row)
    assert "not ready for play" not in text_of(client.get(reverse("scenario", args=[hill.pk])), f"structure-{unready.pk}")


def test_a_bolt_action_bunker_takes_its_sheet_but_no_crew(client, demo, hill):
    """Units hold a Bolt Action bunker (seed 001 'Bunkers'): its sheet gives its kind and shape, and
    the builder neither gives it the sheet's crew nor asks for one. Disposable Heroes does both."""
    sheet = BunkerSheet.objects.get(club=None, slug="german-concrete-blockhouse")
    Scenario.objects.filter(pk=hill.pk).update(ruleset="ba")
    assert add(client, hill, "bunker", sheet=sheet.pk).status_code == 302
    bunker = hill.structures.get(sheet=sheet)
    assert (bunker.kind, bunker.crew_side, bunker.crew_men) == ("fort", "", 0)
    assert "(no crew: units hold it)" in text_of(client.get(reverse("scenario", args=[hill.pk])),
                                                 f"structure-{bunker.pk}")
    url = reverse("scenario_structure", args=[hill.pk, bunker.pk])
    data = form_data(client.get(url), None)
    assert data["sheet"] == str(sheet.pk) and "crew_side" not in data and "crew_men" not in data
    assert client.post(url, {**data, "crew_side": "A", "crew_men": "24"}).status_code == 302
    bunker.refresh_from_db()
    assert (bunker.crew_side, bunker.crew_men) == ("", 0)

    Scenario.objects.filter(pk=hill.pk).update(ruleset="dh")
    data = form_data(client.get(url), None)
    assert client.post(url, {**data, "crew_side": "A", "crew_men": "20"}).status_code == 302
    bunker.refresh_from_db()
    assert (bunker.crew_side, bunker.crew_men) == ("A", 20)
    assert "crewed by side A (20 men)" in text_of(client.get(reverse("scenario", args=[hill.pk])),
                                                 f"structure-{bunker.pk}")


def test_a_disposable_heroes_crew_holds_its_bunker_for_one_side_and_is_at_most_the_sheets(client, demo, hill):
    """A bunker added with its sheet's crew held it for neither side: in the battle both sides could
    attack it, nobody could lead its crew out, and no tally counted it. The builder says so, and the
    structure page refuses a crew without a side, or more men than the sheet's."""
    sheet = BunkerSheet.objects.get(club=None, slug="german-concrete-blockhouse")
    assert add(client, hill, "bunker", sheet=sheet.pk).status_code == 302
    bunker = hill.structures.get(sheet=sheet)
    assert (bunker.crew_side, bunker.crew_men) == ("", 24)
    row = f"structure-{bunker.pk}"
    assert "Its crew of 24 men holds it for neither side yet" in text_of(client.get(reverse("scenario", args=[hill.pk])), row)

    url = reverse("scenario_structure", args=[hill.pk, bunker.pk])
    data = form_data(client.get(url), None)
    response = client.post(url, {**data, "name": "Blockhouse Nord"})
    assert response.status_code == 400
    assert text_of(response, "id_crew_side_error") == "Choose the side whose 24 men hold it (or set its crew to 0 men)"
    response = client.post(url, {**data, "crew_side": "B", "crew_men": "30"})
    assert response.status_code == 400
    assert text_of(response, "id_crew_men_error") == "The German Concrete Blockhouse sheet's crew is 24 men: enter 0 to 24"
    bunker.refresh_from_db()
    assert (bunker.name, bunker.crew_side, bunker.crew_men) == ("German Concrete Blockhouse", "", 24)

    assert client.post(url, {**data, "crew_side": "B", "crew_men": "18"}).status_code == 302
    bunker.refresh_from_db()
    assert (bunker.crew_side, bunker.crew_men) == ("B", 18)
    text = text_of(client.get(reverse("scenario", args=[hill.pk])), row)
    assert "crewed by side B (18 men)" in text and "neither side" not in text
    # An empty bunker needs no side.
    assert client.post(url, {**form_data(client.get(url), None), "crew_side": "", "crew_men": "0"}).status_code == 302


def test_no_battle_or_campaign_starts_while_a_bunkers_crew_holds_it_for_neither_side(client, demo, hill):
    """A bunker added from its sheet gets the sheet's crew for neither side until a designer says whose; the
    builder only marked it, and the organiser's Start a battle / Start a campaign went ahead: both sides
    could attack that crew, nobody lead it out, and the campaign page's tally counted its losses for nobody.
    Both are refused, naming the bunker, nothing started; once its side is chosen the campaign starts."""
    sheet = BunkerSheet.objects.get(club=None, slug="german-concrete-blockhouse")
    signed_in(client, demo.designer)
    assert add(client, hill, "bunker", sheet=sheet.pk).status_code == 302
    bunker = hill.structures.get(sheet=sheet)
    assert (bunker.crew_side, bunker.crew_men) == ("", 24)
    signed_in(client, demo.organiser)
    battles_before, campaigns_before = Battle.objects.count(), Campaign.objects.count()
    said = ("The crew of German Concrete Blockhouse holds it for neither side yet: a designer chooses the side whose "
            "men hold it on its page in the builder (“Edit floors, openings…”), then start again.")

    response = client.post(reverse("scenario_campaign", args=[hill.pk]), {"campaign-name": "Road to Caen"})
    assert response.status_code == 400 and said in text_of(response, "start-campaign")
    response = client.post(reverse("scenario_start", args=[hill.pk]), {"name": "Friday", "status": "setup"})
    assert response.status_code == 400 and said in text_of(response, "start")
    with pytest.raises(services.CrewsOfNobody):
        services.start_campaign(scenario_id=hill.pk, user=demo.organiser, name="Road to Caen")
    assert (Battle.objects.count(), Campaign.objects.count()) == (battles_before, campaigns_before)

    bunker.crew_side = "B"
    bunker.save(update_fields=["crew_side"])
    response = client.post(reverse("scenario_campaign", args=[hill.pk]), {"campaign-name": "Road to Caen"})
    assert response.status_code == 303
    assert Campaign.objects.get(name="Road to Caen").structures.get().crew_side == "B"


def assert_next_session_refused(client, campaign, said, headers):
    """"Set up the next session" answers `said` beside the sessions (HTMX) or as the page's message."""
    response = client.post(reverse("campaign_session_start", args=[campaign.pk]), {"name": "", "weather": "clear"},
                           **headers)
    if headers:
        assert response.status_code == 200 and said in text_of(response, "sessions")
    else:
        assert response.status_code == 303
        assert said in " ".join(str(m) for m in list(response.wsgi_request._messages))


@pytest.mark.parametrize("htmx", [False, True])
def test_no_battle_campaign_or_session_starts_while_a_bunkers_sheet_is_not_ready_for_play(client, demo, hill, htmx):
    """Exploratory test at 390x844: a club's sheet drawn up from the blank card without its main-gun row went
    onto a bunker, the builder marked it (734f891) but the organiser's Start a campaign went ahead, and at the
    table every attack on that bunker was refused. Starting a battle, a campaign or a campaign's next session
    is refused, naming the bunker and pointing to where its sheet is filled in; nothing is created."""
    headers = {"HTTP_HX_REQUEST": "true"} if htmx else {}
    library, clone = a_ready_and_an_unready_bunker(client, demo, hill)
    Structure.objects.filter(scenario=hill).update(crew_side="B")
    Structure.objects.filter(scenario=hill, sheet=clone).update(name="Pillbox Nord")
    signed_in(client, demo.organiser)
    before = (Battle.objects.count(), Campaign.objects.count(), Structure.objects.count())
    said = ("Not ready for play: Pillbox Nord (its sheet Hill 112 Pillbox: penetration_row needs 10 values (d10 <2, "
            "2 … 9, 10+), has 0). Every attack on it would be refused at the table. A designer fills the sheet in on "
            "its page under Sheets (Edit; the scenario builder links to it beside the bunker), then start again.")

    response = client.post(reverse("scenario_campaign", args=[hill.pk]), {"campaign-name": "Road to Caen"}, **headers)
    assert response.status_code == 400 and said in text_of(response, "start-campaign")
    response = client.post(reverse("scenario_start", args=[hill.pk]), {"name": "Friday", "status": "setup"},
                           **headers)
    assert response.status_code == 400 and said in text_of(response, "start")
    with pytest.raises(services.SheetsNotReady):
        services.start_campaign(scenario_id=hill.pk, user=demo.organiser, name="Road to Caen")
    assert (Battle.objects.count(), Campaign.objects.count(), Structure.objects.count()) == before

    BunkerSheet.objects.filter(pk=clone.pk).update(penetration_row=library.penetration_row)
    response = client.post(reverse("scenario_campaign", args=[hill.pk]), {"campaign-name": "Road to Caen"}, **headers)
    assert response.status_code == 303
    campaign = Campaign.objects.get(name="Road to Caen")
    Campaign.objects.filter(pk=campaign.pk).update(single_open_battle=False)
    # The sheet is the club's, shared with the campaign's copies: emptied again, the next session is refused.
    BunkerSheet.objects.filter(pk=clone.pk).update(penetration_row=[])
    before = (Battle.objects.count(), Structure.objects.count())
    assert_next_session_refused(client, campaign, said, headers)
    assert (Battle.objects.count(), Structure.objects.count()) == before


def two_held_bunkers(client, demo, hill):
    """The hill with two Disposable Heroes bunkers on a library sheet, North and South, both held by side A's
    crew, and an army on each side (A: Guards, B: Grenadiers). Returns the two bunkers."""
    sheet = BunkerSheet.objects.get(club=None, slug="german-at-bunker")
    for name in ("North bunker", "South bunker"):
        assert add(signed_in(client, demo.designer), hill, "bunker", sheet=sheet.pk).status_code == 302
        Structure.objects.filter(scenario=hill, name=sheet.name).update(name=name, crew_side="A")
    for side, name in (("A", "Guards"), ("B", "Grenadiers")):
        client.post(reverse("scenario_army_new", args=[hill.pk]), {"newarmy-side": side, "newarmy-name": name})
    return hill.structures.get(name="North bunker"), hill.structures.get(name="South bunker")


def set_up_inside(owner, state, north, south):
    """Units of `owner`'s (a scenario's or campaign's) armies where the builder now refuses them, put there as a
    scenario saved before 574ea72 and 769f793, or a campaign file imported as played, holds them: "vehicle", a
    side A tank on South bunker's floor; "other side", a side B squad inside North bunker, which A's crew holds."""
    if state in ("vehicle", "both"):
        Unit.objects.create(army=owner.armies.get(side="A"), name="Panzer IV", kind="vehicle", models_start=1,
                            models_left=1, floor=south.floors.get())
    if state in ("other side", "both"):
        Unit.objects.create(army=owner.armies.get(side="B"), name="Raiders", kind="infantry", models_start=5,
                            models_left=5, floor=north.floors.get())


def counts():
    return (Battle.objects.count(), Campaign.objects.count(), Structure.objects.count(), Unit.objects.count())


@pytest.mark.parametrize("htmx", [False, True])
@pytest.mark.parametrize("state", ["vehicle", "other side", "both"])
def test_no_battle_or_campaign_starts_from_a_scenario_set_up_where_the_builder_now_refuses(client, demo, hill, htmx,
                                                                                         state):
    """A scenario saved before the builder refused a vehicle on a floor of a structure (574ea72) or a unit inside
    a bunker the other side's crew holds (769f793) still started battles and campaigns so: a tank inside a
    bunker, both sides in one bunker, where the battle's Move never puts anyone. Starting a battle or a campaign
    from it is refused beside its form, naming every unit and structure and saying what to do; nothing is
    created."""
    headers = {"HTTP_HX_REQUEST": "true"} if htmx else {}
    north, south = two_held_bunkers(client, demo, hill)
    set_up_inside(hill, state, north, south)
    signed_in(client, demo.organiser)
    listed = {"vehicle": "Panzer IV in South bunker (a vehicle stands on the table)",
              "other side": "Raiders in North bunker (side A's crew holds it against side B)"}
    shown = "; ".join(listed[s] for s in listed if state in (s, "both"))
    said = (f"Set up where the builder now refuses {'them' if state == 'both' else 'it'}: {shown}. Edit the unit in "
            "the builder (“Where” on its page: a point on the table, or a structure it may hold), then start again.")
    before = counts()

    response = client.post(reverse("scenario_campaign", args=[hill.pk]), {"campaign-name": "Road to Caen"}, **headers)
    assert response.status_code == 400 and said in text_of(response, "start-campaign")
    response = client.post(reverse("scenario_start", args=[hill.pk]), {"name": "Friday", "status": "setup"},
                           **headers)
    assert response.status_code == 400 and said in text_of(response, "start")
    with pytest.raises(services.SetUpWrongly) as refused:
        services.start_campaign(scenario_id=hill.pk, user=demo.organiser, name="Road to Caen")
    assert refused.value.message == said
    assert counts() == before

    # Set right in the builder's way (the units out on the table), both start.
    Unit.objects.filter(name__in=["Panzer IV", "Raiders"]).update(floor=None, x=10, y=10)
    assert client.post(reverse("scenario_start", args=[hill.pk]), {"name": "Friday", "status": "setup"},
                       **headers).status_code == 302
    response = client.post(reverse("scenario_campaign", args=[hill.pk]), {"campaign-name": "Road to Caen"}, **headers)
    assert response.status_code == 303 and Campaign.objects.filter(name="Road to Caen").exists()


@pytest.mark.parametrize("htmx", [False, True])
def test_no_session_starts_from_a_campaigns_ground_set_up_where_no_battle_puts_a_unit(client, demo, hill, htmx):
    """A campaign started before those fixes, or imported from an older file as played, holds the same states on
    its own ground (the scenario may be right by now): its next session is refused, saying how the organiser puts
    the units right, and nothing is created. Done as it says (the last session reopened, the units corrected in
    its battle, finished again), the next session starts. A unit inside a bunker whose crew has routed is where
    play can leave it (the battle's Move lets anyone in): a session starts so."""
    headers = {"HTTP_HX_REQUEST": "true"} if htmx else {}
    two_held_bunkers(client, demo, hill)
    signed_in(client, demo.organiser)
    assert client.post(reverse("scenario_campaign", args=[hill.pk]), {"campaign-name": "Road to Caen"}).status_code \
        == 303
    campaign = Campaign.objects.get(name="Road to Caen")
    one = campaign.battles.get(session_number=1)
    # As a scenario saved before the fixes gave them: on the campaign's ground and in its first session's copy.
    set_up_inside(campaign, "both", campaign.structures.get(name="North bunker"),
                  campaign.structures.get(name="South bunker"))
    for unit in Unit.objects.filter(army__campaign=campaign, floor__isnull=False):
        Unit.objects.create(army=one.armies.get(side=unit.army.side), origin=unit, name=unit.name, kind=unit.kind,
                            models_start=unit.models_start, models_left=unit.models_left,
                            floor=Floor.objects.get(structure__battle=one, structure__origin=unit.floor.structure))
    battles.start(battle_id=one.pk, user=demo.organiser)
    services.finish_battle(battle_id=one.pk, user=demo.organiser, winner="A")
    said = ("Set up on the campaign's ground where a battle's Move never puts them: Panzer IV in South bunker (a "
            "vehicle stands on the table); Raiders in North bunker (side A's crew holds it against side B). An "
            "organiser puts the unit right in the last session's battle (“Correct a piece's position "
            "(organisers)”; reopen that session first if it is finished) and finishes it, then sets up the next "
            "session.")
    before = counts()
    assert_next_session_refused(client, campaign, said, headers)
    assert counts() == before
    with pytest.raises(services.SetUpWrongly):
        services.start_session(campaign_id=campaign.pk, user=demo.organiser)
    assert counts() == before

    services.reopen_last(campaign_id=campaign.pk, user=demo.organiser)
    for name in ("Panzer IV", "Raiders"):
        battles.perform(battle_id=one.pk, user=demo.organiser, action="correct_position",
                        inputs={"unit": f"u{Unit.objects.get(army__battle=one, name=name).pk}", "x": "10", "y": "12"})
    services.finish_battle(battle_id=one.pk, user=demo.organiser, winner="A")
    response = client.post(reverse("campaign_session_start", args=[campaign.pk]), {"name": "", "weather": "clear"},
                           **headers)
    assert response.status_code in (200, 303) and campaign.battles.filter(session_number=2).exists()
    assert not Unit.objects.filter(army__campaign=campaign, floor__isnull=False).exists()

    # The Raiders back inside North bunker, its crew routed (as play leaves it): the next session starts.
    Campaign.objects.filter(pk=campaign.pk).update(single_open_battle=False)
    north = campaign.structures.get(name="North bunker")
    Structure.objects.filter(pk=north.pk).update(crew_routed=True)
    Unit.objects.filter(army__campaign=campaign, name="Raiders").update(floor=north.floors.get(), x=None, y=None)
    response = client.post(reverse("campaign_session_start", args=[campaign.pk]), {"name": "", "weather": "clear"},
                           **headers)
    assert response.status_code in (200, 303) and campaign.battles.filter(session_number=3).exists()
    raiders = Unit.objects.get(army__battle__campaign=campaign, army__battle__session_number=3, name="Raiders")
    assert raiders.floor.structure.name == "North bunker"


def test_a_scenario_switched_to_disposable_heroes_crews_its_bunkers(client, demo):
    """Scenarios start as Bolt Action: a bunker placed then has no crew. Saved as Disposable Heroes,
    each sheet's bunker gets the sheet's full crew, as if added now; a crew already set is kept."""
    signed_in(client, demo.designer)
    assert new_scenario(client, demo, name="Ford", ruleset="ba").status_code == 302
    ford = Scenario.objects.get(name="Ford")
    log, block = (BunkerSheet.objects.get(club=None, slug=slug)
                  for slug in ("soviet-at-hmg-loghouse", "german-concrete-blockhouse"))
    for sheet in (log, block):
        assert add(client, ford, "bunker", sheet=sheet.pk).status_code == 302
    add(client, ford, "house-stone-1")
    assert not ford.structures.exclude(crew_men=0).exists()
    Structure.objects.filter(scenario=ford, sheet=block).update(crew_side="B", crew_men=20)  # as set before
    data = {"name": "Ford", "description": "", "table_width": "48", "table_depth": "36", "ruleset": "dh",
            "weather": "clear", "fires": "on", "version": str(ford.version)}
    assert client.post(reverse("scenario_settings", args=[ford.pk]), data).status_code == 302
    crews = {s.name: (s.crew_side, s.crew_men) for s in ford.structures.all()}
    assert crews == {log.name: ("", 12), block.name: ("B", 20), "Stone house, 1 floor": ("", 0)}
    # Saved again as Disposable Heroes, nothing changes.
    Structure.objects.filter(scenario=ford, sheet=log).update(crew_men=0, crew_left=12)
    data["version"] = str(Scenario.objects.get(pk=ford.pk).version)
    client.post(reverse("scenario_settings", args=[ford.pk]), data)
    assert ford.structures.get(sheet=log).crew_men == 0


def test_the_forces_say_which_vehicles_are_heavy_tanks(client, demo):
    html = body(signed_in(client, demo.designer).get(reverse("scenario", args=[demo.village.pk])))
    assert "Vehicle (heavy tank), 1 model, veteran" in html


def test_place_by_typing_coordinates(client, demo, hill):
    add(client, hill, "house-stone-1")
    house = hill.structures.get()
    signed_in(client, demo.designer)
    url = reverse("scenario_structure_move", args=[hill.pk, house.pk])
    response = client.post(url, {f"s{house.pk}-x": "10.25", f"s{house.pk}-y": "30"})
    assert response.status_code == 302 and response["Location"].endswith(f"#structure-{house.pk}")
    house.refresh_from_db()
    assert (house.x, house.y) == (Decimal("10.25"), 30)

    response = client.post(url, {f"s{house.pk}-x": "49", f"s{house.pk}-y": "-1"})
    assert response.status_code == 400
    coords = page(response).find(f"coords-{house.pk}").text()
    assert "The table is 48″ wide: enter 0 to 48" in coords and "greater than or equal to 0" in coords
    house.refresh_from_db()
    assert (house.x, house.y) == (Decimal("10.25"), 30)
    # Exploratory test: -1e20 is below 0 and too long; it was told both ("≥ 0" and "At most 9999 inches").
    response = client.post(url, {f"s{house.pk}-x": "-1e20", f"s{house.pk}-y": "1e20"})
    assert response.status_code == 400
    errors = [[e.text() for e in box.find_all("p")] for box in page(response).find(f"coords-{house.pk}").find_all("div")
              if "field-error" in box.attrs.get("class", "")]
    assert errors == [["Ensure this value is greater than or equal to 0."], ["At most 9999 inches"]], errors
    house.refresh_from_db()
    assert (house.x, house.y) == (Decimal("10.25"), 30)

    # The whole footprint must stand on the table, not only its centre; turned a quarter, the
    # house's width runs along the table's depth.
    Structure.objects.filter(pk=house.pk).update(width=8, depth=5)
    response = client.post(url, {f"s{house.pk}-x": "47", f"s{house.pk}-y": "34"})
    coords = page(response).find(f"coords-{house.pk}").text()
    assert response.status_code == 400 and "would hang off the table: on a table 48″ wide, its centre goes from 4 to 44" in coords
    assert "its centre goes from 2.5 to 33.5" in coords
    Structure.objects.filter(pk=house.pk).update(rotation=90)
    assert client.post(url, {f"s{house.pk}-x": "45.5", f"s{house.pk}-y": "32"}).status_code == 302
    house.refresh_from_db()
    assert (house.x, house.y) == (Decimal("45.5"), 32)


def test_a_refused_place_opens_the_page_at_the_marked_structure(client, demo):
    """The typed coordinates post to an address carrying the structure's fragment, so the page
    re-rendered with the error opens at that structure's row (a real browser scrolls there: see
    the phone test below); a good Place still redirects to the same fragment."""
    scenario = demo.village
    shop = scenario.structures.get(name="Timber workshop")
    signed_in(client, demo.designer)
    url = reverse("scenario_structure_move", args=[scenario.pk, shop.pk])
    form = page(client.get(reverse("scenario", args=[scenario.pk]))).find(f"coords-{shop.pk}")
    assert form.attrs["action"] == f"{url}#structure-{shop.pk}"

    response = client.post(url, {f"s{shop.pk}-x": "100", f"s{shop.pk}-y": "27"})
    assert response.status_code == 400
    row = page(response).find(f"structure-{shop.pk}")
    assert "The table is 72″ wide: enter 0 to 72" in row.text()
    assert row.find(f"coords-{shop.pk}").attrs["action"] == f"{url}#structure-{shop.pk}"
    shop.refresh_from_db()
    assert (shop.x, shop.y) == (42, 27)

    response = client.post(url, {f"s{shop.pk}-x": "40.5", f"s{shop.pk}-y": "27"})
    assert response.status_code == 302
    assert response["Location"] == reverse("scenario", args=[scenario.pk]) + f"#structure-{shop.pk}"
    shop.refresh_from_db()
    assert (shop.x, shop.y) == (Decimal("40.5"), 27)


def test_the_drag_endpoint_snaps_to_half_inches_and_returns_the_map(client, demo, hill):
    add(client, hill, "foxhole")
    hole = hill.structures.get()
    url = reverse("scenario_structure_move", args=[hill.pk, hole.pk])
    response = client.post(url, {"x": "13.3", "y": "14.8"}, HTTP_HX_REQUEST="true")
    assert response.status_code == 200
    hole.refresh_from_db()
    assert (hole.x, hole.y) == (Decimal("13.5"), Decimal("15"))
    html = body(response)
    assert html.strip().startswith('<div id="scenario-map"') and 'transform="translate(13.5 15.0)"' in html
    assert f'id="coords-{hole.pk}"' in html and 'hx-swap-oob="true"' in html and 'value="13.5"' in html

    response = client.post(url, {"x": "60", "y": "1"}, HTTP_HX_REQUEST="true")
    assert response.status_code == 400
    assert "Not placed: The table is 48″ wide: enter 0 to 48." in text_of(response, "map-status")
    hole.refresh_from_db()
    assert hole.x == Decimal("13.5")


@pytest.mark.parametrize("who", ["designer", "organiser"])  # an organiser also has the start forms
def test_no_two_inputs_of_the_builder_share_an_id(client, demo, who):
    html = body(signed_in(client, getattr(demo, who)).get(reverse("scenario", args=[demo.village.pk])))
    ids = re.findall(r'<(?:input|select|textarea)[^>]* id="([^"]+)"', html)
    assert ids and len(ids) == len(set(ids)), sorted({i for i in ids if ids.count(i) > 1})


def test_the_builder_page_draws_the_map(client, demo):
    response = signed_in(client, demo.designer).get(reverse("scenario", args=[demo.village.pk]))
    assert response.status_code == 200
    assert_csp_clean(response)
    svg = page(response).find("scenario-map")
    pieces = [g for g in svg.find_all("g") if "piece" in g.attrs.get("class", "")]
    assert len([g for g in pieces if "structure" in g.attrs["class"]]) == 13
    assert all(g.attrs.get("data-move-url") for g in pieces)
    zones = [r for r in svg.find_all("rect") if "zone" in r.attrs.get("class", "")]
    assert [(z.attrs["class"], z.attrs["y"], z.attrs["height"]) for z in zones] == [
        ("zone zone-A", "0.0", "12.0"), ("zone zone-B", "36.0", "12.0")]
    assert "js/designer.js" in body(response)


def test_a_name_that_would_print_over_a_larger_neighbours_is_left_out(client, demo, hill):
    for _ in range(2):
        assert add(client, hill, "house-brick-2").status_code == 302
    big, small = hill.structures.order_by("pk")
    Structure.objects.filter(pk=big.pk).update(name="German concrete blockhouse", x=20, y=20, width=8, depth=6)
    Structure.objects.filter(pk=small.pk).update(name="Timber house, one floor", x=21, y=21, width=4, depth=4)
    svg = page(client.get(reverse("scenario", args=[hill.pk]))).find("scenario-map")
    labels = [t.text() for t in svg.find_all("text") if "label" in t.attrs.get("class", "")]
    assert labels == ["German concrete blockhouse"[:23] + "…"]
    # Apart, both are named.
    Structure.objects.filter(pk=small.pk).update(x=40, y=30)
    svg = page(client.get(reverse("scenario", args=[hill.pk]))).find("scenario-map")
    assert len([t for t in svg.find_all("text") if "label" in t.attrs.get("class", "")]) == 2


def test_edit_floors_openings_materials_and_connections(client, demo, hill):
    add(client, hill, "house-timber-1")
    add(client, hill, "barn")
    house, barn = hill.structures.get(name__startswith="Timber"), hill.structures.get(name="Barn")
    signed_in(client, demo.designer)
    url = reverse("scenario_structure", args=[hill.pk, house.pk])
    response = client.get(url)
    assert response.status_code == 200
    assert_csp_clean(response)
    data = form_data(response, None)
    assert data["floor_count"] == "1" and data["openings-0-side"] == "front"
    data.update({"floor_count": "2", "flat_roof": "on", "roof_material": data["roof_material"],
                 "connections": str(barn.pk), "rotation": "90", "openings-4-DELETE": "on",
                 "openings-5-level": "1", "openings-5-side": "rear", "openings-5-kind": "window",
                 "openings-5-count": "3"})
    response = client.post(url, data)
    assert response.status_code == 302, body(response)
    house.refresh_from_db()
    assert [(f.level, f.is_roof) for f in house.floors.all()] == [(0, False), (1, False), (2, True)]
    assert Opening.objects.get(floor__structure=house, floor__level=1).count == 3
    assert house.rotation == 90 and list(barn.connections.all()) == [house]  # both ways

    data = form_data(client.get(url), None)
    data.update({"openings-1-level": "0", "openings-1-side": "front", "openings-1-kind": "door"})
    before = Opening.objects.filter(floor__structure=house).count()
    response = client.post(url, data)
    assert response.status_code == 400 and "already lists that kind of opening" in body(response)
    assert Opening.objects.filter(floor__structure=house).count() == before

    # One floor fewer, its window row still listed: the row says why, in words.
    data = form_data(client.get(url), None)
    level_1 = next(k[:-len("-level")] for k, v in data.items() if k.endswith("-level") and v == "1")
    response = client.post(url, {**data, "floor_count": "1", "flat_roof": ""})
    assert response.status_code == 400
    assert text_of(response, f"id_{level_1}-level_error") == ("This floor is not in the building any more: remove "
                                                               "the opening, or keep the floor")
    assert [(f.level, f.is_roof) for f in house.floors.all()] == [(0, False), (1, False), (2, True)]
    response = client.post(url, {**data, "floor_count": "1", "flat_roof": "", f"{level_1}-DELETE": "on"})
    assert response.status_code == 302
    assert [(f.level, f.is_roof) for f in house.floors.all()] == [(0, False)]


def level_choices(response, row):
    select = re.search(rf'<select name="{row}-level"[^>]*>(.*?)</select>', body(response), re.S).group(1)
    return {label: value for value, label in re.findall(r'<option value="([^"]*)"[^>]*>([^<]*)</option>', select)}


def test_a_floor_added_gets_its_openings_in_the_same_save(client, demo, hill):
    """An opening's Floor offered only the floors the structure had: a window on a floor being added could not be
    chosen until Floors was saved and the page opened again. Every floor it may have is offered; an opening above
    the floors it is saved with is refused beside its Floor, saying what to do, and nothing is saved."""
    add(client, hill, "house-timber-1")
    house = hill.structures.get()
    url = reverse("scenario_structure", args=[hill.pk, house.pk])
    response = signed_in(client, demo.designer).get(url)
    data = form_data(response, None)
    row = next(k[:-len("-level")] for k, v in data.items() if k.startswith("openings-") and k.endswith("-level")
               and v == "")
    levels = level_choices(response, row)
    assert data["floor_count"] == "1" and {"ground floor", "floor 1", "floor 2"} <= set(levels)
    data.update({"floor_count": "3", f"{row}-level": levels["floor 2"], f"{row}-side": "rear",
                 f"{row}-kind": "window", f"{row}-count": "2"})
    response = client.post(url, data)
    assert response.status_code == 302, body(response)
    assert [f.level for f in house.floors.all()] == [0, 1, 2]
    assert Opening.objects.get(floor__structure=house, floor__level=2).count == 2

    response = client.get(url)
    data = form_data(response, None)
    row = next(k[:-len("-level")] for k, v in data.items() if k.startswith("openings-") and k.endswith("-level")
               and v == "")
    before = sorted(Opening.objects.filter(floor__structure=house).values_list("floor__level", "side", "kind", "count"))
    data.update({f"{row}-level": level_choices(response, row)["floor 4"], f"{row}-side": "left", f"{row}-kind": "door"})
    response = client.post(url, data)
    assert response.status_code == 400
    assert text_of(response, f"id_{row}-level_error") == ("Floors is 3, so its top floor is floor 2: make Floors 5 to "
                                                          "give floor 4 openings, or choose a lower floor")
    # On the flat roof it would be given, likewise.
    assert data["roof_material"]
    data.update({f"{row}-level": level_choices(response, row)["floor 3"], "flat_roof": "on"})
    response = client.post(url, data)
    assert response.status_code == 400
    assert text_of(response, f"id_{row}-level_error") == ("With Floors at 3, floor 3 is its flat roof, which has no "
                                                          "windows or doors: make Floors 4, or choose a lower floor")
    assert [f.level for f in house.floors.all()] == [0, 1, 2]
    assert sorted(Opening.objects.filter(floor__structure=house).values_list(
        "floor__level", "side", "kind", "count")) == before


def test_a_structure_is_not_renamed_to_another_structures_name(client, demo):
    """Added structures get names of their own ("Barn 2"); renamed on its page, a second "Thatched barn"
    was saved, and the battle's map, attack form and log named two structures alike."""
    scenario = demo.village
    cottage = scenario.structures.get(name="Timber cottage")
    url = reverse("scenario_structure", args=[scenario.pk, cottage.pk])
    data = form_data(signed_in(client, demo.designer).get(url), None)
    response = client.post(url, {**data, "name": " Thatched barn "})
    assert response.status_code == 400
    assert text_of(response, "id_name_error") == ("Another structure of this scenario is called Thatched barn: give "
                                                  "this one a name of its own")
    cottage.refresh_from_db()
    assert cottage.name == "Timber cottage"
    # Its own name, or one another scenario uses, is saved.
    assert client.post(url, {**data, "name": "Timber cottage"}).status_code == 302
    assert demo.farm.structures.exists()
    elsewhere = demo.farm.structures.first().name
    assert client.post(url, {**form_data(client.get(url), None), "name": elsewhere}).status_code == 302


def test_saving_a_structure_page_opened_before_another_tab_moved_it_does_not_put_it_back(client, demo):
    """Tab A opens the barn's page; tab B drags the barn on the map; tab A renames it and saves. Its form
    still holds the old place: saved, it would have moved the barn back without a word. Nothing is
    saved, A is told why, and saving again (now knowingly) keeps what A's form holds."""
    from django.test import Client

    scenario = demo.village
    barn = scenario.structures.get(name="Thatched barn")
    url = reverse("scenario_structure", args=[scenario.pk, barn.pk])
    mine = form_data(signed_in(client, demo.designer).get(url), None)
    other = signed_in(Client(), demo.organiser)
    assert other.post(reverse("scenario_structure_move", args=[scenario.pk, barn.pk]),
                      {"x": "30", "y": "20"}, HTTP_HX_REQUEST="true").status_code == 200

    mine["name"] = "Red barn"
    response = client.post(url, mine)
    assert response.status_code == 409
    assert "Thatched barn was changed since this page was opened (in another tab, or by another designer), so " \
           "nothing was saved." in body(response)
    barn.refresh_from_db()
    assert (barn.name, barn.x, barn.y) == ("Thatched barn", 30, 20)

    again = form_data(response, None)
    assert again["name"] == "Red barn" and again["seen"] != mine["seen"]
    assert client.post(url, again).status_code == 302
    barn.refresh_from_db()
    assert barn.name == "Red barn" and (barn.x, barn.y) == (Decimal(mine["x"]), Decimal(mine["y"]))
    # Nobody else changed it since: a plain save, and the same form sent twice (a double tap) is no conflict.
    again = form_data(client.get(url), None)
    again["name"] = "Old barn"
    assert client.post(url, again).status_code == 302
    assert client.post(url, again).status_code == 302
    barn.refresh_from_db()
    assert barn.name == "Old barn"


def test_typed_coordinates_opened_before_another_tab_dragged_the_piece_do_not_put_it_back(client, demo):
    """Tab A's row for the barn holds x and y as drawn; tab B drags the barn; tab A changes only x and
    places it. Both coordinates go with the form: placed, it would have put back the y B dragged it
    from. Refused (409) saying where it stands now; placed again, it goes where A's form says. The same
    form sent twice (a double tap) is no conflict."""
    from django.test import Client

    scenario = demo.village
    barn = scenario.structures.get(name="Thatched barn")
    prefix = f"s{barn.pk}-"
    mine = {k: v for k, v in form_data(signed_in(client, demo.designer).get(reverse("scenario", args=[scenario.pk])),
                                       f"coords-{barn.pk}").items() if k.startswith(prefix)}
    assert mine[prefix + "seen"] == f"{float(barn.x):g},{float(barn.y):g}"
    other = signed_in(Client(), demo.organiser)
    move = reverse("scenario_structure_move", args=[scenario.pk, barn.pk])
    assert other.post(move, {"x": "30", "y": "20"}, HTTP_HX_REQUEST="true").status_code == 200

    mine[prefix + "x"] = "31"
    response = client.post(move, mine)
    assert response.status_code == 409
    assert "Thatched barn was moved to (30″, 20″) since this page was opened" in \
        page(response).find(f"coords-{barn.pk}").text()
    barn.refresh_from_db()
    assert (barn.x, barn.y) == (30, 20)

    again = {k: v for k, v in form_data(response, f"coords-{barn.pk}").items() if k.startswith(prefix)}
    assert again[prefix + "x"] == "31" and again[prefix + "seen"] == "30,20"
    assert client.post(move, again).status_code == 302
    assert client.post(move, again).status_code == 302  # sent twice: where it already stands, no conflict
    barn.refresh_from_db()
    assert (barn.x, barn.y) == (31, Decimal(mine[prefix + "y"]))


def test_saving_a_unit_page_opened_before_another_tab_dragged_it_does_not_put_it_back(client, demo):
    from django.test import Client

    scenario = demo.village
    unit = Unit.objects.filter(army__scenario=scenario, x__isnull=False).order_by("pk").first()
    url = reverse("scenario_unit", args=[scenario.pk, unit.pk])
    mine = form_data(signed_in(client, demo.designer).get(url), None)
    other = signed_in(Client(), demo.organiser)
    assert other.post(reverse("scenario_unit_move", args=[scenario.pk, unit.pk]), {"x": "3", "y": "4"},
                      HTTP_HX_REQUEST="true").status_code == 200
    mine["models_start"] = "7"
    response = client.post(url, mine)
    assert response.status_code == 409 and f"{unit.name} was changed since this page was opened" in body(response)
    unit.refresh_from_db()
    assert (unit.x, unit.y) == (3, 4) and unit.models_start != 7
    # Sent twice (a double tap), the form that now knows of the drag saves once, without a conflict.
    again = form_data(response, None)
    assert client.post(url, again).status_code == client.post(url, again).status_code == 302
    unit.refresh_from_db()
    assert unit.models_start == 7 and (unit.x, unit.y) == (Decimal(mine["x"]), Decimal(mine["y"]))


def test_the_structure_form_keeps_the_whole_footprint_on_the_table(client, demo, hill):
    """As when it is placed: a centre on the table is not enough, the footprint must be, at its
    size and rotation. Nothing is saved when it would hang off."""
    add(client, hill, "house-timber-1")
    house = hill.structures.get()
    signed_in(client, demo.designer)
    url = reverse("scenario_structure", args=[hill.pk, house.pk])
    data = form_data(client.get(url), None)
    before = (house.x, house.y, house.width, house.depth, house.rotation)
    for change in ({"x": "0"}, {"y": "36"}, {"width": "200"}, {"x": "3", "rotation": "45"}):
        response = client.post(url, {**data, **change})
        assert response.status_code == 400, change
        assert "would hang off the table" in body(response), change
        house.refresh_from_db()
        assert (house.x, house.y, house.width, house.depth, house.rotation) == before, change
    response = client.post(url, {**data, "x": "4", "y": "4", "width": "8", "depth": "8"})
    assert response.status_code == 302, body(response)
    house.refresh_from_db()
    assert (house.x, house.y, house.width) == (4, 4, 8)


def test_a_floor_with_a_unit_on_it_cannot_be_removed(client, demo):
    church_tower = demo.village.structures.get(name="Church tower")
    signed_in(client, demo.designer)
    url = reverse("scenario_structure", args=[demo.village.pk, church_tower.pk])
    data = form_data(client.get(url), None)
    data["floor_count"] = "2"
    response = client.post(url, data)
    assert response.status_code == 400 and "floor 3 holds Sniper team: move it first" in body(response)
    assert church_tower.floors.count() == 4


def test_a_sheet_only_on_fortifications(client, demo):
    house = demo.village.structures.get(name="Timber cottage")
    signed_in(client, demo.designer)
    url = reverse("scenario_structure", args=[demo.village.pk, house.pk])
    data = form_data(client.get(url), None)
    data["sheet"] = str(BunkerSheet.objects.get(club=None, slug="german-at-bunker").pk)
    response = client.post(url, data)
    assert response.status_code == 400 and "Only fortifications" in body(response)
    house.refresh_from_db()
    assert house.sheet is None


def test_add_a_connected_section(client, demo, hill):
    add(client, hill, "church")
    church = hill.structures.get()
    response = client.post(reverse("scenario_structure_section", args=[hill.pk, church.pk]))
    assert response.status_code == 302
    section = hill.structures.exclude(pk=church.pk).get()
    assert section.name == "Church (section)" and list(section.connections.all()) == [church]
    assert section.x == church.x + church.width and section.floors.count() == church.floors.count()


def test_the_section_form_sent_twice_adds_one_section(client, demo, hill):
    """A double tap on "+ Section" without JavaScript: the second send lands on the section the first
    added. From the page drawn after it, another one is added."""
    from tests.test_permission_matrix import form_on

    add(client, hill, "church")
    church = hill.structures.get()
    page, url = reverse("scenario", args=[hill.pk]), reverse("scenario_structure_section", args=[hill.pk, church.pk])
    data = form_on(client, page, url)
    assert data == {"after": [str(church.pk)]}
    first, again = client.post(url, data), client.post(url, data)
    section = hill.structures.exclude(pk=church.pk).get()
    assert first["Location"] == again["Location"] == page + f"#structure-{section.pk}"
    assert "Church (section) is already added (the form was sent twice): here it is." in body(
        client.get(again["Location"]))
    assert client.post(url, form_on(client, page, url)).status_code == 302
    assert sorted(hill.structures.values_list("name", flat=True)) == ["Church", "Church (section)",
                                                                      "Church (section) 2"]
    response = client.post(url, {"after": "the newest"})
    assert response.status_code == 400 and "reload the page and try again" in body(response)
    assert hill.structures.count() == 3


def test_a_section_of_a_turned_structure_stands_beside_it_on_the_table(client, demo, hill):
    """A house 4″ wide and 8″ deep turned a quarter covers 8″ of the table's width: its section goes
    8″ along, and back the other way when that would hang off the 48″ table."""
    add(client, hill, "house-stone-1")
    house = hill.structures.get()
    url = reverse("scenario_structure_section", args=[hill.pk, house.pk])
    Structure.objects.filter(pk=house.pk).update(x=4, y=10, width=4, depth=8, rotation=90)
    assert client.post(url).status_code == 302
    section = hill.structures.exclude(pk=house.pk).get()
    assert (section.x, section.y, section.rotation) == (12, 10, 90)
    section.delete()
    Structure.objects.filter(pk=house.pk).update(x=44)
    assert client.post(url).status_code == 302
    section = hill.structures.exclude(pk=house.pk).get()
    assert section.x == 36
    section.delete()
    Structure.objects.filter(pk=house.pk).update(x=42)  # 38″ to 46″: 8″ more would hang off
    assert client.post(url).status_code == 302
    section = hill.structures.exclude(pk=house.pk).get()
    assert section.x == 34


def test_remove_a_structure(client, demo, hill):
    add(client, hill, "shed")
    shed = hill.structures.get()
    assert client.post(reverse("scenario_structure_delete", args=[hill.pk, shed.pk])).status_code == 302
    assert not hill.structures.exists()


# ---------------------------------------------------------------------------------- zones and forces

def test_deployment_zones(client, demo, hill):
    signed_in(client, demo.designer)
    base = {"zones-TOTAL_FORMS": "2", "zones-INITIAL_FORMS": "0", "zones-MIN_NUM_FORMS": "0",
            "zones-MAX_NUM_FORMS": "20"}
    good = {**base, "zones-0-side": "A", "zones-0-x": "0", "zones-0-y": "0", "zones-0-width": "48",
            "zones-0-depth": "6", "zones-1-side": "B", "zones-1-x": "0", "zones-1-y": "30", "zones-1-width": "24",
            "zones-1-depth": "6"}
    assert client.post(reverse("scenario_zones", args=[hill.pk]), good).status_code == 302
    # The narrow "Side" column shows the side itself, not a "Side A" cut to "Side".
    assert '<option value="B" selected>B</option>' in body(client.get(reverse("scenario", args=[hill.pk])))
    hill.refresh_from_db()
    assert hill.deployment_zones[1] == {"side": "B", "x": 0, "y": 30, "width": 24, "depth": 6}
    bad = {**good, "zones-1-depth": "10"}
    response = client.post(reverse("scenario_zones", args=[hill.pk]), bad)
    assert response.status_code == 400 and "Runs off the 36″ table" in body(response)
    hill.refresh_from_db()
    assert hill.deployment_zones[1]["depth"] == 6


def test_saving_zones_opened_before_another_tab_changed_them_does_not_put_them_back(client, demo):
    """Tab 1 deepens side A's zone; tab 2, opened before, moves side B's. Its form still holds side A's
    old zone: saved, it would have put it back without a word. Nothing of tab 2's is saved, it is told
    what the zones are now, and saving again (now knowingly) keeps what its form holds."""
    from django.test import Client

    scenario = demo.village
    url, builder = reverse("scenario_zones", args=[scenario.pk]), reverse("scenario", args=[scenario.pk])
    mine = form_data(signed_in(client, demo.designer).get(builder), "zones-form")
    other = signed_in(Client(), demo.organiser)
    assert mine["zones-0-side"] == "A" and mine["zones-0-depth"] == "12" and mine["zones-1-side"] == "B"
    assert other.post(url, {**form_data(other.get(builder), "zones-form"), "zones-0-depth": "18"}).status_code == 302

    response = client.post(url, {**mine, "zones-1-y": "30"})
    assert response.status_code == 409
    assert ("The deployment zones were changed since this page was opened (in another tab, or by another designer), "
            "so nothing was saved. They are now: Side A: 72″ × 18″ from (0″, 0″); Side B: 72″ × 12″ from (0″, 36″). "
            "Save again to put what this form holds over that change") in text_of(response, "zones-form")
    scenario.refresh_from_db()
    assert [(z["side"], z["y"], z["depth"]) for z in scenario.deployment_zones] == [("A", 0, 18), ("B", 36, 12)]

    again = form_data(response, "zones-form")
    assert (again["zones-0-depth"], again["zones-1-y"]) == ("12", "30") and again["zones-seen"] != mine["zones-seen"]
    assert client.post(url, again).status_code == 302
    scenario.refresh_from_db()
    assert [(z["side"], z["y"], z["depth"]) for z in scenario.deployment_zones] == [("A", 0, 12), ("B", 30, 12)]


def test_the_same_zones_sent_twice_are_saved_not_a_conflict_with_themselves(client, demo):
    scenario = demo.village
    url = reverse("scenario_zones", args=[scenario.pk])
    data = form_data(signed_in(client, demo.designer).get(reverse("scenario", args=[scenario.pk])), "zones-form")
    data["zones-0-depth"] = "6"
    assert client.post(url, data).status_code == 302
    again = client.post(url, data, follow=True)
    assert again.status_code == 200 and "Deployment zones saved." in body(again) and "changed since" not in body(again)
    scenario.refresh_from_db()
    assert scenario.deployment_zones[0]["depth"] == 6
    # Bad input is still refused beside its field, with nothing saved.
    response = client.post(url, {**data, "zones-0-depth": "100"})
    assert response.status_code == 400 and "Runs off the 48″ table" in text_of(response, "zones-form")
    assert "changed since" not in body(response)
    scenario.refresh_from_db()
    assert scenario.deployment_zones[0]["depth"] == 6


def test_forces_with_units_on_floors_and_at_points(client, demo, hill):
    add(client, hill, "house-brick-2")
    house = hill.structures.get()
    signed_in(client, demo.designer)
    response = client.post(reverse("scenario_army_new", args=[hill.pk]),
                           {"newarmy-side": "A", "newarmy-name": "Reds", "newarmy-owner": demo.outsider.pk})
    assert response.status_code == 400 and not hill.armies.exists()  # not a member of the club
    assert client.post(reverse("scenario_army_new", args=[hill.pk]),
                       {"newarmy-side": "A", "newarmy-name": "Guards", "newarmy-owner": demo.player.pk}).status_code == 302
    army = hill.armies.get()
    assert army.owner == demo.player
    url = reverse("scenario_unit_new", args=[hill.pk, army.pk])
    response = client.get(url)
    assert response.status_code == 200
    assert_csp_clean(response)
    dh_rifles = Weapon.objects.get(ruleset="dh", slug="rifles")
    ba_rifles = Weapon.objects.get(ruleset="ba", slug="rifles")
    assert f'<option value="{dh_rifles.pk}">' in body(response) and f'<option value="{ba_rifles.pk}">' not in body(response)
    # One ruleset's weapons: their names alone, with no "(Disposable Heroes)" after each.
    assert f'<option value="{dh_rifles.pk}">{dh_rifles.name}</option>' in body(response)

    floor = house.floors.get(level=1)
    management = {"weapons-TOTAL_FORMS": "2", "weapons-INITIAL_FORMS": "0", "weapons-MIN_NUM_FORMS": "0",
                  "weapons-MAX_NUM_FORMS": "30"}
    squad = {"name": "Guards squad", "kind": "infantry", "tank_class": "", "experience": "veteran",
             "models_start": "10", "fireteam": "", "place": f"floor:{floor.pk}", **management,
             "weapons-0-weapon": str(dh_rifles.pk), "weapons-0-count": "8"}
    assert client.post(url, squad).status_code == 302
    unit = Unit.objects.get(army=army)
    assert unit.floor == floor and unit.models_left == 10 and unit.unit_weapons.get().count == 8

    second = {**squad, "name": "Second squad"}
    response = client.post(url, second)
    assert response.status_code == 400 and "Guards squad is already on that floor" in body(response)
    gun = {**squad, "name": "AT gun", "kind": "artillery", "place": "point", "x": "12.5", "y": "3"}
    assert client.post(url, gun).status_code == 302
    assert Unit.objects.get(name="AT gun").x == Decimal("12.5")
    response = client.post(url, {**gun, "name": "Lost gun", "x": "-1"})
    assert response.status_code == 400 and not Unit.objects.filter(name="Lost gun").exists()
    assert text_of(response, "id_x_error") == "Ensure this value is greater than or equal to 0."  # not also "Enter…"
    # What the builder saves must import back: the scenario import takes 1 to 32767 models.
    for models, words in (("0", "greater than or equal to 1"), ("99999999", "less than or equal to 32767")):
        response = client.post(url, {**squad, "name": "Odd squad", "place": "", "models_start": models})
        assert response.status_code == 400 and words in body(response)
    assert not Unit.objects.filter(name="Odd squad").exists()
    # A tank class and experience are Bolt Action's: this Disposable Heroes form neither asks for nor
    # takes them (the form in a Bolt Action scenario does: test_bolt_action_units_have_a_tank_class).
    assert 'name="tank_class"' not in body(client.get(url)) and 'name="experience"' not in body(client.get(url))
    tank = {**squad, "name": "Panzer", "kind": "infantry", "tank_class": "heavy", "place": ""}
    assert client.post(url, tank).status_code == 302
    assert (Unit.objects.get(name="Panzer").tank_class, Unit.objects.get(name="Panzer").experience) == ("", "regular")

    # a unit at a point can be dragged on the map
    at_gun = Unit.objects.get(name="AT gun")
    response = client.post(reverse("scenario_unit_move", args=[hill.pk, at_gun.pk]), {"x": "20.2", "y": "7.7"},
                           HTTP_HX_REQUEST="true")
    assert response.status_code == 200
    at_gun.refresh_from_db()
    assert (at_gun.x, at_gun.y) == (Decimal("20"), Decimal("7.5"))


def test_a_vehicle_is_not_placed_on_a_floor_of_a_structure(client, demo):
    """The builder put the village's Tiger on the brick house's ground floor, and a battle started from it
    had a tank inside a house, where the battle's Move never lets one go (Bolt Action sets only infantry and
    artillery up inside a building). Refused beside "Where", with nothing saved."""
    scenario = demo.village
    tiger = Unit.objects.get(army__scenario=scenario, name="Tiger I")
    floor = next(f for s in scenario.structures.order_by("pk") for f in s.floors.all() if not hasattr(f, "occupant"))
    url = reverse("scenario_unit", args=[scenario.pk, tiger.pk])
    data = form_data(signed_in(client, demo.designer).get(url), None)
    response = client.post(url, {**data, "place": f"floor:{floor.pk}"})
    assert response.status_code == 400
    assert text_of(response, "id_place_error") == ("A vehicle stands on the table, not in a structure: place it at a "
                                                   "point on the table")
    tiger.refresh_from_db()
    assert (tiger.floor_id, tiger.x, tiger.y) == (None, 50, 40)
    # An infantry unit may stand there; a unit on a floor made a vehicle is refused the same way.
    squad = Unit.objects.get(army=tiger.army, name="Grenadier Squad 1")
    url = reverse("scenario_unit", args=[scenario.pk, squad.pk])
    data = form_data(client.get(url), None)
    assert data["place"].startswith("floor:")
    response = client.post(url, {**data, "kind": "vehicle"})
    assert response.status_code == 400 and "A vehicle stands on the table" in text_of(response, "id_place_error")
    assert Unit.objects.get(pk=squad.pk).kind == "infantry"


def test_a_unit_is_not_placed_inside_a_bunker_the_other_sides_crew_holds(client, demo, hill):
    """A Disposable Heroes bunker held by side A's crew took a side B squad on its floor, and a battle
    started from it had both sides inside one bunker, where the battle's Move takes nobody of the other side
    (the bunker is taken by assault). Refused beside "Where", nothing saved; and a crew is not given the side
    opposite a unit already inside."""
    sheet = BunkerSheet.objects.get(club=None, slug="german-at-bunker")
    add(signed_in(client, demo.designer), hill, "bunker", sheet=sheet.pk)
    bunker = hill.structures.get()
    Structure.objects.filter(pk=bunker.pk).update(crew_side="A")
    for side, name in (("A", "Guards"), ("B", "Grenadiers")):
        client.post(reverse("scenario_army_new", args=[hill.pk]), {"newarmy-side": side, "newarmy-name": name})
    floor = bunker.floors.get()
    squad = {"kind": "infantry", "models_start": "5", "place": f"floor:{floor.pk}", "weapons-TOTAL_FORMS": "0",
             "weapons-INITIAL_FORMS": "0", "weapons-MIN_NUM_FORMS": "0", "weapons-MAX_NUM_FORMS": "30"}
    germans = hill.armies.get(side="B")
    response = client.post(reverse("scenario_unit_new", args=[hill.pk, germans.pk]), {**squad, "name": "Raiders"})
    assert response.status_code == 400
    assert text_of(response, "id_place_error") == (f"{bunker.name} is held by its crew for side A: a side B unit is "
                                                   "not set up inside it")
    assert not Unit.objects.filter(name="Raiders").exists()

    guards = hill.armies.get(side="A")
    assert client.post(reverse("scenario_unit_new", args=[hill.pk, guards.pk]),
                       {**squad, "name": "Guards squad"}).status_code == 302
    url = reverse("scenario_structure", args=[hill.pk, bunker.pk])
    response = client.post(url, {**form_data(client.get(url), None), "crew_side": "B"})
    assert response.status_code == 400
    assert text_of(response, "id_crew_side_error") == ("Guards squad (side A) stands inside: move it out first, or "
                                                       "give the crew side A")
    assert Structure.objects.get(pk=bunker.pk).crew_side == "A"


def test_a_weapon_count_with_no_weapon_chosen_is_refused_beside_the_weapon(client, demo, hill):
    """A count typed in a row whose weapon was left at "---------" was dropped on save without a word: the
    squad went to the table without the 3 SMGs its designer gave it."""
    signed_in(client, demo.designer)
    client.post(reverse("scenario_army_new", args=[hill.pk]),
                {"newarmy-side": "A", "newarmy-name": "Guards", "newarmy-owner": demo.player.pk})
    army = hill.armies.get()
    url = reverse("scenario_unit_new", args=[hill.pk, army.pk])
    rifles = Weapon.objects.get(ruleset="dh", slug="rifles")
    squad = {"name": "Guards squad", "kind": "infantry", "tank_class": "", "experience": "regular",
             "models_start": "10", "fireteam": "", "place": "", "weapons-TOTAL_FORMS": "2",
             "weapons-INITIAL_FORMS": "0", "weapons-MIN_NUM_FORMS": "0", "weapons-MAX_NUM_FORMS": "30",
             "weapons-0-weapon": str(rifles.pk), "weapons-0-count": "7", "weapons-1-weapon": "", "weapons-1-count": "3"}
    response = client.post(url, squad)
    assert response.status_code == 400 and not Unit.objects.filter(army=army).exists()
    assert text_of(response, "id_weapons-1-weapon_error") == "Choose the weapon these 3 are (or clear the count)"
    assert "Nothing was saved" in body(response)
    # the row removed, or its count cleared, the squad is saved with its rifles alone
    assert client.post(url, {**squad, "weapons-1-DELETE": "on"}).status_code == 302
    assert [(w.weapon, w.count) for w in Unit.objects.get(army=army).unit_weapons.all()] == [(rifles, 7)]


def test_saving_a_force_opened_before_another_tab_renamed_it_does_not_put_the_old_name_back(client, demo):
    """Tab 1 renames side A's force; tab 2, opened before, gives it another commander. Its form still
    holds the old name: saved, it would have put it back without a word. Nothing of tab 2's is saved,
    it is told what changed, and saving again (now knowingly) keeps what its form holds."""
    from django.test import Client

    scenario = demo.village
    army = scenario.armies.get(side="A")
    url, builder, p = reverse("scenario_army", args=[scenario.pk, army.pk]), reverse("scenario", args=[scenario.pk]), \
        f"army{army.pk}-"
    mine = form_data(signed_in(client, demo.designer).get(builder), f"army-{army.pk}-form")
    other = signed_in(Client(), demo.organiser)
    theirs = form_data(other.get(builder), f"army-{army.pk}-form")
    assert other.post(url, {**theirs, p + "name": "Guards rifle company"}).status_code == 302

    bob = User.objects.get(username="bob")
    response = client.post(url, {**mine, p + "owner": str(bob.pk)})
    assert response.status_code == 409
    assert ("Red Army rifle company was changed since this page was opened (in another tab, or by another designer), "
            "so nothing was saved. Changed meanwhile: Name (now “Guards rifle company”). Save again to put what "
            "this form holds over that change") in text_of(response, f"army-{army.pk}-form")
    army.refresh_from_db()
    assert (army.name, army.owner) == ("Guards rifle company", demo.player)

    again = form_data(response, f"army-{army.pk}-form")
    assert again[p + "owner"] == str(bob.pk) and again[p + "name"] == "Red Army rifle company"
    assert again[p + "seen"] != mine[p + "seen"]
    assert client.post(url, again).status_code == 302
    army.refresh_from_db()
    assert (army.name, army.owner) == ("Red Army rifle company", bob)


def test_the_same_force_form_sent_twice_is_saved_not_a_conflict_with_itself(client, demo):
    """A double tap on Save: the second send carries the state the first replaced, but holds what it saved."""
    scenario = demo.village
    army = scenario.armies.get(side="B")
    url, p = reverse("scenario_army", args=[scenario.pk, army.pk]), f"army{army.pk}-"
    data = form_data(signed_in(client, demo.designer).get(reverse("scenario", args=[scenario.pk])),
                     f"army-{army.pk}-form")
    data[p + "name"] = "Grenadiers"
    assert client.post(url, data).status_code == 302
    again = client.post(url, data, follow=True)
    assert again.status_code == 200 and "Saved Grenadiers." in body(again) and "changed since" not in body(again)
    army.refresh_from_db()
    assert army.name == "Grenadiers"
    # Bad input is still refused beside its field, with nothing saved.
    response = client.post(url, {**data, p + "name": "", p + "owner": str(demo.outsider.pk)})
    assert response.status_code == 400 and "changed since" not in body(response)
    assert "This field is required." in text_of(response, f"army-{army.pk}-form")
    army.refresh_from_db()
    assert army.name == "Grenadiers"


def test_the_new_unit_form_sent_twice_adds_one_unit(client, demo):
    """A double tap on "Save the unit" of a new unit: the second send lands on the unit the first added
    (placed on a floor, it was refused as if another unit held that floor; not placed, it added a
    second). From the page opened again, a second unit of the same name is added, as forces often have."""
    from apps.structures.models import Floor

    army = demo.village.armies.order_by("side").first()
    floor = Floor.objects.filter(structure__scenario=demo.village, occupant__isnull=True, is_roof=False).first()
    url = reverse("scenario_unit_new", args=[demo.village.pk, army.pk])
    data = {**form_data(signed_in(client, demo.designer).get(url), None), "name": "Rifle squad",
            "place": f"floor:{floor.pk}"}
    assert data["after"] == str(army.units.latest("pk").pk)
    first, again = client.post(url, data), client.post(url, data)
    squad = army.units.get(name="Rifle squad")
    assert first["Location"] == again["Location"] == reverse("scenario", args=[demo.village.pk]) + f"#army-{army.pk}"
    assert "Rifle squad is already added (the form was sent twice): here it is." in body(client.get(again["Location"]))
    assert squad.floor == floor
    assert client.post(url, {**form_data(client.get(url), None), "name": "Rifle squad"}).status_code == 302
    assert army.units.filter(name="Rifle squad").count() == 2


# ---------------------------------------------------------------------------------- start a battle

def test_organisers_start_a_battle_from_a_copy_and_the_scenario_stays_unchanged(client, demo):
    scenario = demo.village
    before = dumps(export_scenario(scenario))
    rows = (Structure.objects.filter(scenario=scenario).count(), Unit.objects.filter(army__scenario=scenario).count())
    response = signed_in(client, demo.organiser).post(reverse("scenario_start", args=[scenario.pk]),
                                                      {"name": "Crossroads, again", "status": "in_progress"})
    battle = Battle.objects.get(name="Crossroads, again")
    assert response.status_code == 302 and response["Location"] == reverse("battle", args=[battle.pk])
    assert battle.scenario == scenario and battle.club == scenario.club and battle.campaign is None
    assert battle.status == BattleStatus.IN_PROGRESS and battle.turn == 1
    assert (battle.ruleset, battle.weather, battle.fires, battle.damage_variant) == \
           (scenario.ruleset, scenario.weather, scenario.fires, scenario.damage_variant)
    assert (battle.table_width, battle.table_depth) == (scenario.table_width, scenario.table_depth)

    copies = list(battle.structures.all())
    assert len(copies) == rows[0] and all(s.origin.scenario_id == scenario.pk for s in copies)
    assert not set(s.pk for s in copies) & set(scenario.structures.values_list("pk", flat=True))
    tower = battle.structures.get(name="Church tower")
    assert [c.name for c in tower.connections.all()] == ["Stone church"]
    assert Unit.objects.filter(army__battle=battle).count() == rows[1]
    sniper = Unit.objects.get(army__battle=battle, army__side="B", name="Sniper team")
    assert sniper.floor.structure == tower and sniper.floor.level == 3
    assert battle.log_entries.get().action == "setup"

    assert dumps(export_scenario(scenario)) == before  # untouched and reusable
    assert client.post(reverse("scenario_start", args=[scenario.pk]),
                       {"name": "And again", "status": "setup"}).status_code == 302
    assert Battle.objects.filter(scenario=scenario).count() == 3  # the demo's own, and these two


def test_the_start_form_sent_twice_starts_one_battle_and_the_second_send_lands_on_it(client, demo):
    """A double tap on "Start the battle" (a plain form), or the same page's form sent from another tab:
    the second send goes to the battle the first started. Starting another is sending the form again
    from the scenario, whose page now knows that battle."""
    from tests.structures.test_sheet_editor import form_data

    scenario, url = demo.village, reverse("scenario_start", args=[demo.village.pk])
    data = form_data(signed_in(client, demo.organiser).get(reverse("scenario", args=[scenario.pk])), None)
    data = {k: v for k, v in data.items() if k in ("name", "status", "after")}
    assert data["after"] == str(Battle.objects.filter(scenario=scenario).latest("pk").pk)
    first, again = client.post(url, data), client.post(url, data)
    started = Battle.objects.filter(scenario=scenario).latest("pk")
    assert first["Location"] == again["Location"] == reverse("battle", args=[started.pk])
    assert Battle.objects.filter(scenario=scenario).count() == 2  # the demo's own and this one
    assert "was started from this scenario after the page was opened" in body(client.get(again["Location"]))
    data = form_data(client.get(reverse("scenario", args=[scenario.pk])), None)
    data = {k: v for k, v in data.items() if k in ("name", "status", "after")}
    assert client.post(url, data).status_code == 302
    assert Battle.objects.filter(scenario=scenario).count() == 3


def test_the_add_structure_form_sent_twice_adds_one(client, demo, hill):
    """A double tap on "Add structure from template": the second send lands on the structure the first
    added. The page drawn after it adds another of the same template as usual."""
    url = reverse("scenario", args=[hill.pk])
    data = {k: v for k, v in form_data(signed_in(client, demo.designer).get(url), None).items()
            if k in ("blueprint", "name", "after")}
    data.update(blueprint="barn", name="")  # (the settings form on the page has a "name" too)
    assert data["after"] == "0"
    first, again = add(client, hill, **data), add(client, hill, **data)
    barn = hill.structures.get()
    assert first["Location"] == again["Location"] == url + f"#structure-{barn.pk}"
    assert "Barn is already added (the form was sent twice): here it is." in body(client.get(again["Location"]))
    data = {k: v for k, v in form_data(client.get(url), None).items() if k == "after"}
    assert add(client, hill, "barn", **data).status_code == 302
    assert sorted(hill.structures.values_list("name", flat=True)) == ["Barn", "Barn 2"]


def test_a_mangled_hidden_field_is_said_at_the_top_and_nothing_is_added(client, demo, hill):
    """Only a hand-made or mangled request gets a page-written hidden field wrong; the page must say so,
    not ask to fix what is marked and mark nothing."""
    signed_in(client, demo.designer)
    response = add(client, hill, "barn", after="not a number")
    assert response.status_code == 400 and not hill.structures.exists()
    assert "This form was not sent as its page drew it (after: Enter a whole number.): reload the page" in body(response)


def test_the_start_campaign_form_sent_twice_starts_one_and_lands_on_it(client, demo):
    url = reverse("scenario", args=[demo.village.pk])
    data = {k: v for k, v in form_data(signed_in(client, demo.organiser).get(url), None).items()
            if k.startswith("campaign-")}
    data["campaign-name"] = "Twice told"
    start = reverse("scenario_campaign", args=[demo.village.pk])
    first, again = client.post(start, data), client.post(start, data)
    campaign = Campaign.objects.get(name="Twice told")
    assert first["Location"] == again["Location"] == reverse("campaign", args=[campaign.pk]) + "#sessions"
    assert "Twice told is already started (the form was sent twice): here it is." in body(client.get(again["Location"]))
    assert campaign.battles.count() == 1
    # Sent from a page drawn after it, the same name is refused beside the field.
    data = {k: v for k, v in form_data(client.get(url), None).items() if k.startswith("campaign-")}
    response = client.post(start, {**data, "campaign-name": "twice told"})
    assert response.status_code == 400 and "already has a campaign called twice told" in body(response)


def test_a_new_scenario_to_a_battle(client, demo, hill):
    """Done when: author a bunker from the blank card, place it in a new scenario, start a battle."""
    signed_in(client, demo.designer)
    client.post(reverse("sheet_new"), {"club": demo.club.pk})
    sheet = BunkerSheet.objects.get(club=demo.club, slug="new-bunker")
    # Filled in as a designer would on its page (a blank card's bunker starts nothing: it is not ready for play).
    filled = BunkerSheet.objects.get(club=None, slug="german-hmg-loghouse")
    BunkerSheet.objects.filter(pk=sheet.pk).update(
        name="Hill pillbox", crew_total=6, **{f: getattr(filled, f) for f in ("dm", "leaders", "locations", "weapons",
                                                                              "penetration_row")})
    assert add(client, hill, "bunker", sheet=sheet.pk).status_code == 302
    bunker = hill.structures.get()
    assert client.post(reverse("scenario_structure_move", args=[hill.pk, bunker.pk]),
                       {f"s{bunker.pk}-x": "20", f"s{bunker.pk}-y": "4"}).status_code == 302
    url = reverse("scenario_structure", args=[hill.pk, bunker.pk])
    assert client.post(url, {**form_data(client.get(url), None), "crew_side": "A"}).status_code == 302
    response = signed_in(client, demo.organiser).post(reverse("scenario_start", args=[hill.pk]),
                                                      {"name": "Hill 112, first try", "status": "setup"})
    battle = Battle.objects.get(name="Hill 112, first try")
    copy_ = battle.structures.get()
    assert response.status_code == 302 and copy_.sheet == sheet and copy_.crew_men == 6 and (copy_.x, copy_.y) == (20, 4)
    assert copy_.crew_side == "A"
    assert signed_in(client, demo.player).get(reverse("battle", args=[battle.pk])).status_code == 200


def test_only_organisers_start_battles(client, demo):
    before = Battle.objects.count()
    for account in (demo.designer, demo.player):
        response = signed_in(client, account).post(reverse("scenario_start", args=[demo.village.pk]),
                                                   {"name": "x", "status": "setup"})
        assert response.status_code == 403
    response = signed_in(client, demo.outsider).post(reverse("scenario_start", args=[demo.village.pk]),
                                                     {"name": "x", "status": "setup"})
    assert response.status_code == 404
    response = signed_in(client, demo.organiser).post(reverse("scenario_start", args=[demo.village.pk]),
                                                      {"name": "", "status": "finished"})
    assert response.status_code == 400
    assert Battle.objects.count() == before
    html = body(signed_in(client, demo.designer).get(reverse("scenario", args=[demo.village.pk])))
    assert reverse("scenario_start", args=[demo.village.pk]) not in html


# ---------------------------------------------------------------------------------- start a campaign

def test_organisers_start_a_campaign_from_a_scenario_with_its_first_session(client, demo, hill):
    """A club's campaign begins from a scenario: its own ground and forces, the scenario's rules, and
    session 1 set up on the scenario's table (48 × 36 here); the next session keeps that table."""
    assert add(client, hill, "house-brick-2").status_code == 302
    house = hill.structures.get()
    signed_in(client, demo.designer)
    client.post(reverse("scenario_army_new", args=[hill.pk]),
                {"newarmy-side": "A", "newarmy-name": "Guards", "newarmy-owner": demo.player.pk})
    army = hill.armies.get()
    Unit.objects.create(army=army, name="Guards squad", models_start=8, models_left=8, floor=house.floors.get(level=1))
    before = dumps(export_scenario(hill))

    response = signed_in(client, demo.organiser).post(
        reverse("scenario_campaign", args=[hill.pk]),
        {"campaign-name": "Road to Caen", "campaign-fires_persist": "on", "campaign-single_open_battle": "on"})
    campaign = Campaign.objects.get(name="Road to Caen")
    assert response.status_code == 303 and response["Location"] == reverse("campaign", args=[campaign.pk]) + "#sessions"
    assert (campaign.club, campaign.ruleset, campaign.weather) == (demo.club, "dh", "rain")
    assert campaign.fires_persist and campaign.single_open_battle
    ground = campaign.structures.get()
    assert ground.origin == house and ground.pk != house.pk
    squad = Unit.objects.get(army__campaign=campaign)
    assert squad.floor.structure == ground and squad.army.owner == demo.player
    one = campaign.battles.get()
    assert (one.session_number, one.status, one.table_width, one.table_depth) == (1, BattleStatus.SETUP, 48, 36)
    assert one.structures.get().origin == ground
    assert dumps(export_scenario(hill)) == before  # the scenario is untouched

    page_ = client.get(reverse("campaign", args=[campaign.pk]))
    assert page_.status_code == 200 and "Road to Caen" in body(page_)
    battles.start(battle_id=one.pk, user=demo.organiser)
    services.finish_battle(battle_id=one.pk, user=demo.organiser, winner="A")
    two = services.start_session(campaign_id=campaign.pk, user=demo.organiser)
    assert (two.session_number, two.table_width, two.table_depth) == (2, 48, 36)


def test_starting_a_campaign_is_for_organisers_and_checks_its_name(client, demo):
    url = reverse("scenario_campaign", args=[demo.village.pk])
    before = (Campaign.objects.count(), Battle.objects.count(), Structure.objects.count())
    for account in (demo.designer, demo.player):
        assert signed_in(client, account).post(url, {"campaign-name": "Mine"}).status_code == 403
    assert signed_in(client, demo.outsider).post(url, {"campaign-name": "Mine"}).status_code == 404
    taken = demo.club.campaigns.first().name
    response = signed_in(client, demo.organiser).post(url, {"campaign-name": f" {taken.lower()} "})
    assert response.status_code == 400
    assert f"already has a campaign called {taken.lower()}" in text_of(response, "start-campaign")
    assert (Campaign.objects.count(), Battle.objects.count(), Structure.objects.count()) == before
    # A designer is told who may start one instead of finding nothing.
    html = body(signed_in(client, demo.designer).get(reverse("scenario", args=[demo.village.pk])))
    assert url not in html and "Only the club's organisers start battles and campaigns" in html


def test_a_campaign_with_a_name_as_long_as_allowed_still_names_its_sessions(client, demo):
    """120 letters is the longest name; its sessions, and the forms' suggested names, still fit."""
    name = "C" * 120
    Scenario.objects.filter(pk=demo.village.pk).update(name="S" * 120)
    builder = page(signed_in(client, demo.organiser).get(reverse("scenario", args=[demo.village.pk])))
    # The start forms' suggestions (the settings form holds the scenario's own name).
    suggested = [i.attrs["value"] for i in builder.find_all("input") if i.attrs.get("name") in ("name", "campaign-name")
                 and i.attrs.get("value", "").startswith("S") and i.attrs["value"] != "S" * 120]
    assert len(suggested) == 2 and all(len(value) <= 120 for value in suggested), suggested
    response = client.post(reverse("scenario_campaign", args=[demo.village.pk]), {"campaign-name": name})
    assert response.status_code == 303
    one = Campaign.objects.get(name=name).battles.get()
    assert len(one.name) == 120 and one.name.endswith(" — session 1")


# ---------------------------------------------------------------------------------- print

def test_print_all_sheets_of_a_scenario(client, demo):
    response = signed_in(client, demo.player).get(reverse("scenario_print", args=[demo.village.pk]))
    assert response.status_code == 200
    assert_csp_clean(response)
    assert body(response).count('class="print-card"') == 2
    assert text_of(response, f"sheet-{BunkerSheet.objects.get(club=None, slug='soviet-at-hmg-loghouse').pk}-title") \
        == "Soviet AT/HMG Loghouse"
    assert "css/print.css" in body(response)


# ---------------------------------------------------------------------------------- who may do what

def scenario_posts(scenario):
    structure = scenario.structures.first()
    army = scenario.armies.first()
    unit = Unit.objects.filter(army=army).first()
    return [
        (reverse("scenario_settings", args=[scenario.pk]), {"name": "Taken over", "table_width": "10",
                                                              "table_depth": "10", "ruleset": "ba",
                                                              "damage_variant": "0", "weather": "clear"}),
        (reverse("scenario_zones", args=[scenario.pk]), {}),
        (reverse("scenario_structure_add", args=[scenario.pk]), {"blueprint": "shed"}),
        (reverse("scenario_structure", args=[scenario.pk, structure.pk]), {}),
        (reverse("scenario_structure_move", args=[scenario.pk, structure.pk]), {"x": "1", "y": "1"}),
        (reverse("scenario_structure_section", args=[scenario.pk, structure.pk]), {}),
        (reverse("scenario_structure_delete", args=[scenario.pk, structure.pk]), {}),
        (reverse("scenario_army_new", args=[scenario.pk]), {"newarmy-side": "A", "newarmy-name": "x"}),
        (reverse("scenario_army", args=[scenario.pk, army.pk]), {}),
        (reverse("scenario_unit_new", args=[scenario.pk, army.pk]), {}),
        (reverse("scenario_unit", args=[scenario.pk, unit.pk]), {}),
        (reverse("scenario_unit_move", args=[scenario.pk, unit.pk]), {"x": "1", "y": "1"}),
        (reverse("scenario_unit_delete", args=[scenario.pk, unit.pk]), {}),
    ]


def test_players_cannot_change_a_scenario(client, demo):
    before = dumps(export_scenario(demo.village))
    signed_in(client, demo.player)
    for url, data in scenario_posts(demo.village):
        assert client.post(url, data).status_code == 403, url
    assert client.get(reverse("scenario_new")).status_code == 403
    assert dumps(export_scenario(demo.village)) == before
    # but they can look at it, read-only
    response = client.get(reverse("scenario", args=[demo.village.pk]))
    assert response.status_code == 200 and "data-move-url" not in body(response)
    assert reverse("scenario_structure_add", args=[demo.village.pk]) not in body(response)


def test_other_clubs_scenarios_are_not_found(client, demo):
    before = dumps(export_scenario(demo.village))
    signed_in(client, demo.outsider)
    for url, data in scenario_posts(demo.village):
        assert client.post(url, data).status_code == 404, url
    for name in ("scenario", "scenario_export", "scenario_print"):
        assert client.get(reverse(name, args=[demo.village.pk])).status_code == 404
    assert dumps(export_scenario(demo.village)) == before
    # nor can a structure or unit of one scenario be reached through another
    farm_structure = demo.farm.structures.first()
    signed_in(client, demo.designer)
    assert client.post(reverse("scenario_structure_move", args=[demo.village.pk, farm_structure.pk]),
                       {"x": "1", "y": "1"}).status_code == 404


def test_scenario_list(client, demo):
    response = signed_in(client, demo.player).get(reverse("scenario_list"))
    assert response.status_code == 200
    assert_csp_clean(response)
    assert "Village crossroads" in body(response) and "Farm by the ford" not in body(response)
    assert reverse("scenario_new") not in body(response)
    assert reverse("scenario_new") in body(signed_in(client, demo.designer).get(reverse("scenario_list")))


# ---------------------------------------------------------------------------------- in a real browser

def dora_at_the_village_builder(browser, live_server, viewport):
    """The demo's designer signed in, on the Village crossroads builder in a new page of that size; the page's
    uncaught errors collect in the list returned with it."""
    load_demo()
    scenario = Scenario.objects.get(name="Village crossroads")
    page = browser.new_page(viewport=viewport)
    problems = []
    page.on("pageerror", lambda error: problems.append(str(error)))
    browser_sign_in(page, live_server, User.objects.get(username="dora"), password="redoubt-demo")
    page.goto(live_server.url + reverse("scenario", args=[scenario.pk]))
    return page, scenario, problems


@pytest.mark.browser
@pytest.mark.django_db(transaction=True)
def test_the_new_scenario_form_shows_laser_grenadiers_options_only_for_laser_grenadiers(browser, live_server):
    """On a phone: the options only LaserGrenadiers reads (damage points, collapse check, events, fireteams)
    were offered whatever the ruleset, and a Bolt Action scenario kept them. They show while LaserGrenadiers
    is chosen, and go when another ruleset is."""
    page, scenario, problems = dora_at_the_village_builder(browser, live_server, {"width": 390, "height": 844})
    page.goto(live_server.url + reverse("scenario_new"))
    options = page.locator("#lg-options")
    page.select_option("#id_ruleset", "lg")
    assert options.is_visible() and page.locator("#id_collapse_check").is_visible()
    page.select_option("#id_ruleset", "ba")
    assert not options.is_visible() and not page.locator("#id_damage_variant").is_visible()
    assert page.locator("#id_fires").is_visible() and page.locator("#id_weather").is_visible()
    page.select_option("#id_ruleset", "lg")
    page.check("#id_uncontrolled_events")
    page.fill("#id_name", "Ridge 7")
    with page.expect_navigation():
        page.get_by_role("button", name="Create the scenario").click()
    ridge = Scenario.objects.get(name="Ridge 7")
    assert (ridge.ruleset, ridge.uncontrolled_events) == ("lg", True) and problems == []


@pytest.mark.browser
@pytest.mark.django_db(transaction=True)
def test_drag_a_structure_on_the_map(browser, live_server):
    page, scenario, problems = dora_at_the_village_builder(browser, live_server, {"width": 1280, "height": 900})
    barn = scenario.structures.get(name="Thatched barn")
    piece = page.locator(f'.map [data-move-url$="/structures/{barn.pk}/move/"]')
    box = piece.locator("rect").bounding_box()
    x, y = box["x"] + box["width"] / 2, box["y"] + box["height"] / 2
    page.mouse.move(x, y)
    page.mouse.down()
    page.mouse.move(x + 40, y + 25, steps=8)
    with page.expect_response(lambda r: r.url.endswith(f"/structures/{barn.pk}/move/")):
        page.mouse.up()
    pytest.importorskip("playwright.sync_api").expect(page.locator(f"#coords-{barn.pk} input[name$='-x']")).not_to_have_value("8")
    barn.refresh_from_db()
    assert (barn.x, barn.y) != (8, 18) and barn.x * 2 == int(barn.x * 2) and barn.y * 2 == int(barn.y * 2)
    assert page.locator(f"#coords-{barn.pk} input[name$='-x']").input_value() == f"{barn.x.normalize():f}"
    # arrow keys on a focused piece move it half an inch
    page.locator(f'.map [data-move-url$="/structures/{barn.pk}/move/"]').focus()
    before = barn.x
    with page.expect_response(lambda r: r.url.endswith(f"/structures/{barn.pk}/move/")):
        page.keyboard.press("ArrowRight")
    barn.refresh_from_db()
    assert barn.x == before + Decimal("0.5")
    assert problems == []
    page.close()


@pytest.mark.browser
@pytest.mark.django_db(transaction=True)
def test_a_drag_that_is_not_saved_puts_the_piece_back_and_says_why(browser, live_server):
    """Dropped with its walls off the table, the piece goes back where it stands and the map says why;
    dragged after another tab removed it, it goes back too and the map says to reload. Before, the
    piece stayed where it was dropped, "Placing at…" for ever, though nothing was saved."""
    page, scenario, problems = dora_at_the_village_builder(browser, live_server, {"width": 1280, "height": 900})
    barn = scenario.structures.get(name="Thatched barn")
    move_url = reverse("scenario_structure_move", args=[scenario.pk, barn.pk])
    expect = pytest.importorskip("playwright.sync_api").expect
    piece = page.locator(f'.map [data-move-url="{move_url}"]')
    stood = (piece.get_attribute("data-x"), piece.get_attribute("data-y"))

    def drag_to_the_left_edge():
        box = piece.locator("rect").bounding_box()
        x, y = box["x"] + box["width"] / 2, box["y"] + box["height"] / 2
        page.mouse.move(x, y)
        page.mouse.down()
        page.mouse.move(page.locator("svg.map").bounding_box()["x"] + 1, y, steps=8)
        with page.expect_response(lambda r: r.url.endswith(move_url)) as answer:
            page.mouse.up()
        return answer.value.status

    assert drag_to_the_left_edge() == 400
    expect(page.locator("#map-status")).to_contain_text("Not placed: Thatched barn would hang off the table")
    assert (piece.get_attribute("data-x"), piece.get_attribute("data-y")) == stood
    barn.refresh_from_db()
    assert (barn.x, barn.y) == (Decimal(stood[0]), Decimal(stood[1]))

    barn.delete()  # another tab removes it
    assert drag_to_the_left_edge() == 404
    expect(page.locator("#map-status")).to_contain_text("Not placed: the scenario may have changed in another tab")
    assert (piece.get_attribute("data-x"), piece.get_attribute("data-y")) == stood
    assert problems == []
    page.close()


@pytest.mark.browser
@pytest.mark.django_db(transaction=True)
def test_a_refused_place_on_a_phone_shows_the_marked_field(browser, live_server):
    """390px wide, no map drag: type an x off the table and press Place. The page that comes back
    shows the field with its error on screen, not the top of a page thousands of pixels long."""
    load_demo()
    scenario = Scenario.objects.get(name="Village crossroads")
    shop = scenario.structures.get(name="Timber workshop")
    context = browser.new_context(viewport={"width": 390, "height": 844}, java_script_enabled=False)
    page = context.new_page()
    browser_sign_in(page, live_server, User.objects.get(username="dora"), password="redoubt-demo")
    page.goto(live_server.url + reverse("scenario", args=[scenario.pk]))
    x = page.locator(f"#coords-{shop.pk} input[name='s{shop.pk}-x']")
    x.fill("100")
    with page.expect_navigation():
        page.locator(f"#coords-{shop.pk} button[type=submit]").click()
    error = page.locator(f"#coords-{shop.pk} .field-error").first
    assert "The table is 72″ wide" in error.inner_text()
    expect = pytest.importorskip("playwright.sync_api").expect
    expect(error).to_be_in_viewport(timeout=2_000)
    expect(page.locator(f"#coords-{shop.pk} input[name='s{shop.pk}-x']")).to_be_in_viewport(timeout=2_000)
    assert page.evaluate("window.scrollY") > 1000
    assert page.url.endswith(f"/structures/{shop.pk}/move/#structure-{shop.pk}")
    shop.refresh_from_db()
    assert shop.x == 42
    context.close()


@pytest.mark.browser
@pytest.mark.django_db(transaction=True)
def test_a_structure_at_rotation_0_saves_from_a_phone(browser, live_server):
    """The browser checks the number fields before the server sees them: its limits must not be
    stricter than the server's. The house stands square (rotation 0) and moves to x 24.25."""
    load_demo()
    scenario = Scenario.objects.get(name="Village crossroads")
    house = scenario.structures.get(name="Brick house at the crossroads")
    assert house.rotation == 0
    context = browser.new_context(viewport={"width": 390, "height": 844}, is_mobile=True, has_touch=True)
    page = context.new_page()
    browser_sign_in(page, live_server, User.objects.get(username="dora"), password="redoubt-demo")
    page.goto(live_server.url + reverse("scenario_structure", args=[scenario.pk, house.pk]))
    page.locator("input[name=name]").fill("Brick house by the well")
    page.locator("input[name=x]").fill("24.25")
    with page.expect_navigation():
        page.locator("form button[type=submit]", has_text="Save").first.click()
    house.refresh_from_db()
    assert (house.name, house.x, house.rotation) == ("Brick house by the well", Decimal("24.25"), 0)
    context.close()


def test_bolt_action_units_have_a_tank_class(client, demo):
    """The fields only one ruleset reads are on that ruleset's forms only: Bolt Action's tank class,
    experience and flimsy structures; LaserGrenadiers' fireteams and breaches."""
    scenario, army = demo.village, demo.village.armies.get(side="B")
    signed_in(client, demo.designer)
    url = reverse("scenario_unit_new", args=[scenario.pk, army.pk])
    page_ = body(client.get(url))
    assert 'name="tank_class"' in page_ and 'name="experience"' in page_ and 'name="fireteam"' not in page_
    # Only heavy tanks ram buildings (BA-45): a Panzer IV is "not heavy", not "not a tank".
    assert '<option value="" selected>Not heavy (a light or medium tank, or no tank)</option>' in page_
    data = {"name": "Panzer", "kind": "infantry", "tank_class": "heavy", "experience": "regular", "models_start": "1",
            "place": "", "weapons-TOTAL_FORMS": "0", "weapons-INITIAL_FORMS": "0", "weapons-MIN_NUM_FORMS": "0",
            "weapons-MAX_NUM_FORMS": "30"}
    response = client.post(url, data)
    assert response.status_code == 400 and "Only vehicles have a tank class" in body(response)
    house = scenario.structures.order_by("pk").first()
    structure_page = body(client.get(reverse("scenario_structure", args=[scenario.pk, house.pk])))
    assert 'name="flimsy"' in structure_page and 'name="breach_needed"' not in structure_page


def test_a_laser_grenadiers_scenario_offers_no_bunker_sheets(client, demo):
    """Bunker sheets are Disposable Heroes' (a Bolt Action bunker may take its kind and shape from one):
    a LaserGrenadiers scenario's Add-structure card offers neither the sheet templates nor a sheet."""
    scenario = demo.village
    signed_in(client, demo.designer)
    add = page(client.get(reverse("scenario", args=[scenario.pk]))).find("add_blueprint")
    assert "bunker" in [o.attrs["value"] for o in add.find_all("option")]
    Scenario.objects.filter(pk=scenario.pk).update(ruleset="lg")
    html = page(client.get(reverse("scenario", args=[scenario.pk])))
    offered = [o.attrs["value"] for o in html.find("add_blueprint").find_all("option")]
    assert "bunker" not in offered and "fort" not in offered and "foxhole" in offered
    assert html.find("add_sheet") is None


def test_a_laser_grenadiers_scenario_builds_its_fortifications_from_reinforced_concrete(client, demo):
    """With no sheets to take them from, a LaserGrenadiers designer had no pillbox or bunker to add: only
    a weapon emplacement to rebuild by hand. Seed 000's permanent fortifications are offered there (and
    only there: the other rulesets take theirs from a sheet), built of reinforced concrete."""
    scenario = demo.village  # Bolt Action
    signed_in(client, demo.designer)
    offered = [o.attrs["value"] for o in page(client.get(reverse("scenario", args=[scenario.pk])))
               .find("add_blueprint").find_all("option")]
    assert "lg-pillbox" not in offered and "lg-bunker" not in offered
    before = scenario.structures.count()
    response = add(client, scenario, "lg-pillbox")
    assert response.status_code == 400 and "lg-pillbox is not one of the available choices" in body(response)
    assert scenario.structures.count() == before

    Scenario.objects.filter(pk=scenario.pk).update(ruleset="lg")
    offered = [o.attrs["value"] for o in page(client.get(reverse("scenario", args=[scenario.pk])))
               .find("add_blueprint").find_all("option")]
    assert "lg-pillbox" in offered and "lg-bunker" in offered
    assert add(client, scenario, "lg-pillbox").status_code == 302
    pillbox = scenario.structures.get(name="Pillbox (reinforced concrete)")
    assert (pillbox.kind, pillbox.wall_material.slug, pillbox.roof_material.slug, pillbox.sheet_id, pillbox.crew_men) == \
        ("pillbox", "concrete_reinforced", "concrete_reinforced_any_surface", None, 0)
    assert pillbox.is_fortification and not pillbox.flammable
    openings = sorted((o.side, o.kind, o.count) for f in pillbox.floors.all() for o in f.openings.all())
    assert openings == [("front", "firing_slit", 2), ("left", "firing_slit", 1), ("rear", "door", 1),
                        ("right", "firing_slit", 1)]
    assert add(client, scenario, "lg-bunker").status_code == 302
    bunker = scenario.structures.get(name="Bunker (reinforced concrete)")
    assert bunker.kind == "bunker" and [o.kind for f in bunker.floors.all() for o in f.openings.all()] == ["door"]


def test_only_a_laser_grenadiers_scenario_offers_its_own_options(client, demo):
    """Damage points, collapse checks, events and fireteams are read by LaserGrenadiers' rules alone:
    a Bolt Action scenario's settings neither show nor change them."""
    scenario = demo.village  # Bolt Action
    type(scenario).objects.filter(pk=scenario.pk).update(collapse_check=True)
    signed_in(client, demo.designer)
    html = body(client.get(reverse("scenario", args=[scenario.pk])))
    assert 'name="damage_variant"' not in html and 'name="collapse_check"' not in html
    assert 'name="fires"' in html and 'name="weather"' in html
    data = {"name": scenario.name, "description": "", "table_width": "72", "table_depth": "48", "ruleset": "ba",
            "fires": "on", "weather": "rain", "version": str(scenario.version)}
    assert client.post(reverse("scenario_settings", args=[scenario.pk]), data).status_code == 302
    scenario.refresh_from_db()
    assert scenario.weather == "rain" and scenario.collapse_check  # left as it was
    type(scenario).objects.filter(pk=scenario.pk).update(ruleset="lg")
    html = body(client.get(reverse("scenario", args=[scenario.pk])))
    assert 'name="damage_variant"' in html and 'name="collapse_check"' in html


def test_a_seen_field_nested_past_the_parsers_depth_is_no_state_not_a_server_error(demo):
    """`seen` comes back as the page wrote it, or from a hand-made request as anything: JSON nested a
    hundred thousand deep made json.loads raise RecursionError, which is no ValueError, and the save
    failed with a server error. It is read as a form that carried no state (the last save wins, as a
    page drawn before the forms carried it)."""
    from django.test import Client

    deep = "[" * 100_000 + "]" * 100_000
    client = signed_in(Client(raise_request_exception=False), demo.organiser)
    scenario, campaign = demo.village, Campaign.objects.get(name="Operation Crossroads")
    builder = reverse("scenario", args=[scenario.pk])

    zones = form_data(client.get(builder), "zones-form")
    response = client.post(reverse("scenario_zones", args=[scenario.pk]), {**zones, "zones-seen": deep, "zones-0-depth": "6"})
    assert response.status_code == 302
    scenario.refresh_from_db()
    assert scenario.deployment_zones[0]["depth"] == 6

    army = scenario.armies.get(side="A")
    p = f"army{army.pk}-"
    data = form_data(client.get(builder), f"army-{army.pk}-form")
    response = client.post(reverse("scenario_army", args=[scenario.pk, army.pk]),
                           {**data, p + "seen": deep, p + "name": "Deep rifles"})
    assert response.status_code == 302
    army.refresh_from_db()
    assert army.name == "Deep rifles"

    fires = not campaign.fires_persist
    response = client.post(reverse("campaign_settings", args=[campaign.pk]),
                           {"seen": deep, "single_open_battle": "on", **({"fires_persist": "on"} if fires else {})})
    assert response.status_code == 303
    campaign.refresh_from_db()
    assert campaign.fires_persist is fires


# ---------------------------------------------------------------------------------- copy

def held_by(scenario):
    """Every row a scenario holds, each as its fields' values less its own ids and those of the rows around
    it, which a copy has new (a floor by its structure's name and level, and so on)."""
    from django.forms.models import model_to_dict

    from apps.armies.models import Army, UnitWeapon
    from apps.structures.models import Floor

    def fields(obj, *left_out):
        return {k: v for k, v in model_to_dict(obj).items() if k not in ("id", "origin", "connections", *left_out)}

    structures = scenario.structures.order_by("name")
    floors = Floor.objects.filter(structure__scenario=scenario).select_related("structure")
    units = Unit.objects.filter(army__scenario=scenario).select_related("army", "floor__structure", "crew_of")
    return {
        "structures": [fields(s, "scenario") for s in structures],
        "connections": sorted((s.name, c.name) for s in structures for c in s.connections.all()),
        "floors": sorted((f.structure.name, f.level, f.is_roof) for f in floors),
        "openings": sorted((o.floor.structure.name, o.floor.level, o.side, o.kind, o.count)
                           for o in Opening.objects.filter(floor__structure__scenario=scenario).select_related(
                               "floor__structure")),
        "armies": sorted((a.side, a.name, a.owner_id) for a in Army.objects.filter(scenario=scenario)),
        "units": sorted([(u.army.side, u.floor and (u.floor.structure.name, u.floor.level),
                          u.crew_of and u.crew_of.name, sorted(fields(u, "army", "floor", "crew_of").items()))
                         for u in units], key=repr),
        "weapons": sorted((w.unit.name, w.weapon_id, w.count)
                          for w in UnitWeapon.objects.filter(unit__army__scenario=scenario).select_related("unit")),
        "scenario": {k: v for k, v in model_to_dict(scenario).items() if k not in ("id", "name", "author")},
    }


@pytest.mark.parametrize("name, account", [("Village crossroads", "designer"), ("Farm by the ford", "outsider")])
def test_copy_a_scenario_with_all_it_holds(client, demo, name, account):
    """There was no way to copy a scenario but exporting and importing it. "Copy" makes "<name> (copy)" of the same
    club, holding every structure with its floors, openings, connections and sheet, both forces with their units
    where they stand and their weapons, the zones and rules, and lands on its builder; the original is untouched
    (Village crossroads: connected sections, sheets, a sniper in a tower; Farm by the ford: Disposable Heroes crews)."""
    source = Scenario.objects.get(name=name)
    before, version = held_by(source), source.version
    assert before["structures"] and before["units"] and before["openings"] and before["weapons"]
    assert any(s["sheet"] for s in before["structures"]) and any(u[1] for u in before["units"])
    assert before["connections"] or source.ruleset == "dh"
    assert any(s["crew_men"] for s in before["structures"]) or source.ruleset != "dh"
    url = reverse("scenario", args=[source.pk])
    data = form_data(signed_in(client, getattr(demo, account)).get(url), "copy-scenario")
    response = client.post(reverse("scenario_copy", args=[source.pk]), data)

    copy = Scenario.objects.get(club=source.club, name=f"{name} (copy)")
    assert response.status_code == 303 and response["Location"] == reverse("scenario", args=[copy.pk])
    assert copy.author == getattr(demo, account) and copy.version == 1
    assert held_by(copy) == before
    # New rows, pointing back at nothing: nothing is ever written back to a design it was copied from.
    assert not copy.structures.filter(pk__in=source.structures.values("pk")).exists()
    assert not copy.structures.exclude(origin=None).exists()
    assert not Unit.objects.filter(army__scenario=copy).exclude(origin=None).exists()
    source.refresh_from_db()
    assert held_by(source) == before and source.version == version
    assert f"{name} (copy) holds all that {name} does" in body(client.get(response["Location"]))


def test_the_copy_form_sent_twice_makes_one_copy_and_a_later_one_another(client, demo):
    """A double tap on "Copy": the second send lands on the copy the first made. Sent from the page drawn after
    it, the form makes a second copy, under a name of its own."""
    from apps.structures.models import Floor

    source, url = demo.village, reverse("scenario_copy", args=[demo.village.pk])
    page_url = reverse("scenario", args=[source.pk])
    data = form_data(signed_in(client, demo.designer).get(page_url), "copy-scenario")
    assert data["after"] == str(Scenario.objects.filter(club=source.club).latest("pk").pk)
    before = Scenario.objects.filter(club=source.club).count()
    first, again = client.post(url, data), client.post(url, data)
    copy = Scenario.objects.get(name="Village crossroads (copy)")
    assert first["Location"] == again["Location"] == reverse("scenario", args=[copy.pk])
    assert "Village crossroads (copy) is already made (the form was sent twice): here it is." in body(
        client.get(again["Location"]))
    assert Scenario.objects.filter(club=source.club).count() == before + 1
    assert copy.structures.count() == source.structures.count()
    assert Floor.objects.filter(structure__scenario=copy).count() == Floor.objects.filter(
        structure__scenario=source).count()

    data = form_data(client.get(page_url), "copy-scenario")
    response = client.post(url, data, HTTP_HX_REQUEST="true")
    second = Scenario.objects.get(name="Village crossroads (copy) (2)")
    assert response.status_code == 200 and response["HX-Redirect"] == reverse("scenario", args=[second.pk])
    assert second.structures.count() == source.structures.count()


def test_only_the_clubs_designers_copy_its_scenarios(client, demo):
    source, url = demo.village, reverse("scenario_copy", args=[demo.village.pk])
    count = Scenario.objects.count()
    after = {"after": str(Scenario.objects.latest("pk").pk)}
    page_url = reverse("scenario", args=[source.pk])
    assert 'id="copy-scenario"' not in body(signed_in(client, demo.player).get(page_url))
    assert client.post(url, after).status_code == 403
    assert signed_in(client, demo.outsider).post(url, after).status_code == 404
    signed_in(client, demo.designer)
    assert client.get(url).status_code == 405
    assert client.post(url, {}).status_code == 400  # a form that names no scenario it knew makes nothing
    assert Scenario.objects.count() == count


@pytest.mark.browser
@pytest.mark.django_db(transaction=True)
def test_a_designer_adds_a_floor_and_its_window_in_one_save(browser, live_server):
    """The Floor list of an opening offered only the floors the house had: a person could not pick the floor being
    added until Floors was saved and the page opened again."""
    load_demo()
    scenario = Scenario.objects.get(name="Village crossroads")
    cottage = scenario.structures.get(name="Timber cottage")
    floors = cottage.floors.filter(is_roof=False).count()
    page = browser.new_page(viewport={"width": 390, "height": 844})
    browser_sign_in(page, live_server, User.objects.get(username="dora"), password="redoubt-demo")
    page.goto(live_server.url + reverse("scenario_structure", args=[scenario.pk, cottage.pk]))
    page.get_by_label("Floors", exact=True).fill(str(floors + 1))
    levels = page.locator("select[name$='-level']")
    row = next(name[:-len("-level")] for name, value in zip(levels.evaluate_all("s => s.map(e => e.name)"),
                                                           levels.evaluate_all("s => s.map(e => e.value)")) if not value)
    page.locator(f"select[name='{row}-level']").select_option(label=f"floor {floors}")
    page.locator(f"select[name='{row}-side']").select_option("rear")
    page.locator(f"select[name='{row}-kind']").select_option("window")
    with page.expect_navigation():
        page.get_by_role("button", name="Save Timber cottage").click()
    assert "Saved Timber cottage." in page.content()
    assert cottage.floors.filter(is_roof=False).count() == floors + 1
    assert Opening.objects.filter(floor__structure=cottage, floor__level=floors, side="rear", kind="window").exists()


@pytest.mark.browser
@pytest.mark.django_db(transaction=True)
def test_a_designer_taps_copy_and_lands_on_the_copys_builder(browser, live_server):
    """Through htmx (HX-Redirect), as a person taps it: the copy's builder, saying what it is."""
    page, scenario, problems = dora_at_the_village_builder(browser, live_server, {"width": 390, "height": 844})
    before = Scenario.objects.filter(club=scenario.club).count()
    with page.expect_navigation(url=lambda url: "/scenarios/" in url and f"/scenarios/{scenario.pk}/" not in url):
        page.get_by_role("button", name="Copy", exact=True).click()
    copy = Scenario.objects.get(name="Village crossroads (copy)")
    assert page.url == live_server.url + reverse("scenario", args=[copy.pk])
    assert page.locator("h1").inner_text() == "Village crossroads (copy)"
    assert "holds all that Village crossroads does" in page.content()
    assert copy.structures.count() == scenario.structures.count()
    assert Scenario.objects.filter(club=scenario.club).count() == before + 1 and problems == []
