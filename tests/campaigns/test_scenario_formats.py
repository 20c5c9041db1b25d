"""The "redoubt.scenario" format: the demo scenarios round-trip byte for byte; every error of a bad
file is listed with its path and nothing is saved; sheets are reused when identical; the import and
export pages."""

import copy
import json
import re

import pytest
from django.contrib.auth.models import User
from django.urls import reverse
from django.utils.text import slugify

from apps.armies.models import Army, Unit, UnitWeapon
from apps.campaigns.formats import export_scenario, import_scenario
from apps.campaigns.models import Club, Scenario
from apps.structures.formats import FormatErrors, dumps
from apps.structures.models import BunkerSheet, Floor, Opening, Structure
from tests.campaigns.test_pages import assert_csp_clean, fast_passwords, page, signed_in  # noqa: F401
from tests.structures.test_formats import DOCS
from tests.demo_rows import load_demo


@pytest.fixture
def demo(db):
    load_demo()
    w = type("Demo", (), {})()
    w.village = Scenario.objects.get(name="Village crossroads")
    w.farm = Scenario.objects.get(name="Farm by the ford")
    w.club = w.village.club
    w.dora = User.objects.get(username="dora")
    w.olga = User.objects.get(username="olga")
    w.olga_club = Club.objects.get(memberships__user=w.olga)
    w.alice = User.objects.get(username="alice")
    return w


def counts():
    return [m.objects.count() for m in (Scenario, Structure, Floor, Opening, BunkerSheet, Army, Unit, UnitWeapon)]


def village(demo):
    return json.loads(dumps(export_scenario(demo.village)))


def errors_of(data, demo):
    before = counts()
    with pytest.raises(FormatErrors) as caught:
        import_scenario(data, club=demo.olga_club, user=demo.olga)
    assert counts() == before, "a rejected file saved something"
    return caught.value.errors


# ---------------------------------------------------------------------------------- round trips

@pytest.mark.parametrize("name", ["Village crossroads", "Farm by the ford"])
def test_the_demo_scenarios_round_trip_byte_for_byte(demo, name):
    scenario = Scenario.objects.get(name=name)
    first = dumps(export_scenario(scenario))
    club, account = (demo.olga_club, demo.olga) if scenario.club == demo.club else (demo.club, demo.dora)
    imported = import_scenario(json.loads(first), club=club, user=account)
    assert imported.pk != scenario.pk and imported.club == club and imported.name == name
    assert dumps(export_scenario(imported)) == first


def test_the_village_export_holds_everything(demo):
    data = village(demo)
    assert data["format"] == "redoubt.scenario" and data["version"] == 1
    assert data["table"] == {"width": 72, "depth": 48} and data["rules"]["ruleset"] == "ba"
    assert len(data["structures"]) == demo.village.structures.count() == 13
    assert [s["slug"] for s in data["sheets"]] == ["soviet-at-hmg-loghouse", "german-concrete-blockhouse"]
    church = next(i for i, s in enumerate(data["structures"]) if s["name"] == "Stone church")
    tower = next(s for s in data["structures"] if s["name"] == "Church tower")
    assert tower["connections"] == [church] and len(tower["floors"]) == 4
    tiger = next(u for a in data["armies"] for u in a["units"] if u["name"] == "Tiger I")
    assert tiger["at"] == {"x": 50, "y": 40} and tiger["tank_class"] == "heavy"
    squad = next(u for a in data["armies"] for u in a["units"] if u["name"] == "Grenadier Squad 1")
    house = data["structures"][squad["at"]["structure"]]
    assert house["name"] == "Brick house at the crossroads" and squad["at"]["floor"] == 1
    assert "state" not in tiger and not any("state" in s for s in data["structures"])


def test_importing_into_the_same_club_reuses_sheets_and_renames(demo):
    sheets = BunkerSheet.objects.count()
    copy_ = import_scenario(village(demo), club=demo.club, user=demo.dora)
    assert copy_.name == "Village crossroads (2)"
    assert BunkerSheet.objects.count() == sheets  # the library sheets, reused
    assert {s.sheet.club_id for s in copy_.structures.filter(sheet__isnull=False)} == {None}
    assert copy_.author == demo.dora


def test_a_sheet_that_differs_from_the_library_becomes_a_club_sheet(demo):
    data = village(demo)
    data["sheets"][0]["crew_total"] = 14
    scenario = import_scenario(data, club=demo.olga_club, user=demo.olga)
    loghouse = scenario.structures.get(name="Soviet AT/HMG Loghouse").sheet
    assert loghouse.club == demo.olga_club and loghouse.crew_total == 14 and loghouse.slug == "soviet-at-hmg-loghouse"
    assert BunkerSheet.objects.get(club=None, slug="soviet-at-hmg-loghouse").crew_total == 12
    # and the second time that same card is the club's own, reused
    again = import_scenario(data, club=demo.olga_club, user=demo.olga)
    assert again.structures.get(name="Soviet AT/HMG Loghouse").sheet == loghouse


def test_a_new_club_sheet_from_a_scenario_file_gets_a_name_of_its_own(demo):
    """The builder offers a club's sheets by name: a file's card that differs from the club's sheet of
    the same name (an older export, a changed copy) became a second sheet called alike."""
    data = village(demo)
    data["sheets"][0]["crew_total"] = 14
    first = import_scenario(data, club=demo.olga_club, user=demo.olga)
    data["sheets"][0]["crew_total"] = 15
    second = import_scenario(data, club=demo.olga_club, user=demo.olga)
    names = [s.structures.get(name="Soviet AT/HMG Loghouse").sheet.name for s in (first, second)]
    assert names == ["Soviet AT/HMG Loghouse", "Soviet AT/HMG Loghouse (2)"]
    # Two cards of one name in one file are named apart too.
    data["sheets"][0]["crew_total"] = 16
    data["sheets"].append({**copy.deepcopy(data["sheets"][0]), "slug": "loghouse-b", "crew_total": 17})
    data["structures"][7]["sheet"] = "loghouse-b"
    assert data["structures"][7]["name"] == "Soviet AT/HMG Loghouse"
    third = import_scenario(data, club=demo.olga_club, user=demo.olga)
    assert sorted(BunkerSheet.objects.filter(club=demo.olga_club, crew_total__in=(16, 17)).values_list(
        "crew_total", "name")) == [(16, "Soviet AT/HMG Loghouse (3)"), (17, "Soviet AT/HMG Loghouse (4)")]
    assert third.structures.get(name="Soviet AT/HMG Loghouse").sheet.crew_total == 17


def test_battle_state_round_trips_when_present(demo):
    house = demo.village.structures.get(name="Thatched barn")
    Structure.objects.filter(pk=house.pk).update(damage_taken=5, fire_size=12.5, fire_started_turn=2, impassable=True)
    unit = Unit.objects.get(army__scenario=demo.village, name="Tiger I")
    Unit.objects.filter(pk=unit.pk).update(pins=2, down=True)
    first = dumps(export_scenario(demo.village))
    data = json.loads(first)
    barn = next(s for s in data["structures"] if s["name"] == "Thatched barn")
    assert barn["state"] == {"damage_taken": 5, "fire_size": 12.5, "fire_started_turn": 2, "impassable": True}
    imported = import_scenario(data, club=demo.olga_club, user=demo.olga)
    assert dumps(export_scenario(imported)) == first


def test_the_documented_scenario_example_imports(demo):
    blocks = re.findall(r"```json\n(.*?)```", DOCS.read_text(encoding="utf-8"), re.S)
    doc = next(json.loads(b) for b in blocks if '"redoubt.scenario"' in b)
    scenario = import_scenario(doc, club=demo.olga_club, user=demo.olga)
    assert scenario.structures.count() == 2 and Unit.objects.filter(army__scenario=scenario).count() == 2


# ---------------------------------------------------------------------------------- bad files

def test_every_error_is_listed_with_its_path_and_nothing_is_saved(demo):
    data = village(demo)
    data["structures"][3]["floors"][1]["openings"][0]["side"] = "up"
    data["structures"][2]["x"] = 1000
    data["structures"][0]["wall_material"] = "cheese"
    data["armies"][0]["units"][0]["weapons"][0]["weapon"] = "laser"
    data["deployment_zones"][1]["depth"] = 20
    data["sheets"][0]["locations"]["front"][0]["av"] = -1
    data["rules"]["weather"] = "snow"
    paths = [path for path, _ in errors_of(data, demo)]
    assert paths == ["rules.weather", "deployment_zones[1].depth", "sheets[0].locations.front[0].av",
                     "structures[0].wall_material", "structures[2].x",
                     "structures[3].floors[1].openings[0].side", "armies[0].units[0].weapons[0].weapon"]


@pytest.mark.parametrize("change, path, words", [
    (lambda d: d["structures"][0].update(sheet="soviet-at-hmg-loghouse"), "structures[0].sheet",
     "only fortifications have a sheet"),
    (lambda d: d["structures"][0].update(sheet="nope"), "structures[0].sheet", "not the slug of one of the file's sheets"),
    (lambda d: d["structures"][0].update(connections=[0]), "structures[0].connections[0]", "cannot connect to itself"),
    (lambda d: d["structures"][0].update(connections=[99]), "structures[0].connections[0]", "at most 12"),
    (lambda d: d["structures"][0]["floors"][1].update(level=0), "structures[0].floors[1].level", "listed twice"),
    (lambda d: d["rules"].update(collapse_check=True, damage_variant=0), "rules.collapse_check",
     "a collapse check reads the damage points"),
    (lambda d: d["structures"][0]["floors"][0]["openings"][0].update(count=100),
     "structures[0].floors[0].openings[0].count", "at most 99"),
    (lambda d: d["armies"][0]["units"][0]["weapons"][0].update(count=1000),
     "armies[0].units[0].weapons[0].count", "at most 999"),
    (lambda d: d["structures"][0]["floors"][1].update(level=2), "structures[0].floors",
     "floor levels must run 0, 1, 2… without a gap, not 0, 2"),
    (lambda d: d["structures"][0]["floors"][0]["openings"].append({"side": "front", "kind": "door"}),
     "structures[0].floors[0].openings[5]", "already has a row of doors"),
    (lambda d: d["structures"][0]["floors"][0]["openings"].append({"side": "left", "kind": "made_opening", "count": 2}),
     "structures[0].floors[0].openings[5].count", "a made opening is one gap"),
    (lambda d: d["structures"][0].update(rotation=360), "structures[0].rotation", "at most 359.9"),
    (lambda d: d["structures"][0].update(width=0), "structures[0].width", "more than 0"),
    (lambda d: d["structures"][0].update(x=1.234), "structures[0].x", "more than 2 decimal places"),
    (lambda d: d["structures"][0].update(state={"damage_taken": 99}), "structures[0].state.damage_taken",
     "more than damage_max"),
    (lambda d: d["armies"][0]["units"][1].update(at=d["armies"][0]["units"][0]["at"]), "armies[0].units[1].at",
     "already holds armies[0].units[0]"),
    (lambda d: d["armies"][0]["units"][0].update(at={"structure": 0, "floor": 7}), "armies[0].units[0].at.floor",
     "has no floor 7"),
    (lambda d: d["armies"][0]["units"][0].update(tank_class="heavy"), "armies[0].units[0].tank_class",
     "only a vehicle"),
    (lambda d: d["armies"][1].update(side="A"), "armies", "two armies are on the same side"),
    (lambda d: d["armies"][0]["units"][0]["weapons"].append(dict(d["armies"][0]["units"][0]["weapons"][0])),
     "armies[0].units[0].weapons[3].weapon", "listed twice"),
    (lambda d: d["rules"].update(ruleset="dh"), "armies[0].units[0].weapons[1].weapon",
     '"submachine-guns" is not in the Disposable Heroes weapon catalogue'),
    (lambda d: d.update(table={"width": 72}), "table.depth", "is missing"),
    (lambda d: d["rules"].update(options={"a": "\x00"}), "rules.options.a", "NUL"),
    (lambda d: d.update(name=" "), "name", "must not be empty"),
    (lambda d: d.update(armies={}), "armies", "must be an array"),
    # The builder's rule: the whole footprint on the table, at its rotation, not only its centre.
    (lambda d: d["structures"][0].update(x=70), "structures[0].x",
     "70 puts its footprint off the table: on a table 72″ wide, its centre goes from 3 to 69"),
    (lambda d: d["structures"][0].update(y=47, rotation=90), "structures[0].y",
     "47 puts its footprint off the table: on a table 48″ deep, its centre goes from 3 to 45"),
    (lambda d: d["structures"][12].update(x=5.5), "structures[12].x", "its centre goes from 6.04 to 65.96"),
    (lambda d: d["structures"][0].update(width=80), "structures[0].x", "it is larger than the table"),
])
def test_each_check_names_its_field(demo, change, path, words):
    data = village(demo)
    change(data)
    errors = errors_of(data, demo)
    assert any(p == path and words in m for p, m in errors), errors


def test_a_structure_hanging_off_the_table_is_refused_on_the_import_page(client, demo):
    """A file whose structure's footprint hangs over the table's edge was imported, and its scenario
    then refused every change of its settings ("would be off the table: move them first")."""
    data = village(demo)
    data["structures"][6]["x"] = 3  # the thatched barn, 8″ × 5″ turned 20°: its centre needs 4.61″
    signed_in(client, demo.olga)
    before = counts()
    response = client.post(reverse("scenario_import"), {"club": demo.olga_club.pk, "text": json.dumps(data)})
    assert response.status_code == 400 and counts() == before
    items = page(response).find("import-errors").find_all("li")
    assert [li.find_all("code")[0].text() for li in items] == ["structures[6].x"]
    assert "on a table 72″ wide, its centre goes from 4.61 to 67.39" in items[0].text()

    data["structures"][6]["x"] = 4.61  # just on the table: imported, and its settings save as usual
    response = client.post(reverse("scenario_import"), {"club": demo.olga_club.pk, "text": json.dumps(data)})
    assert response.status_code == 302
    imported = Scenario.objects.get(club=demo.olga_club, name="Village crossroads")
    response = client.post(reverse("scenario_settings", args=[imported.pk]), {
        "name": imported.name, "description": "Next weekend", "table_width": "72", "table_depth": "48",
        "ruleset": imported.ruleset, "fires": "on", "weather": imported.weather, "version": imported.version})
    assert response.status_code == 302
    imported.refresh_from_db()
    assert imported.description == "Next weekend"


def test_a_bolt_action_structure_given_a_crew_is_imported_without_it_and_says_where(demo):
    """Units hold a Bolt Action bunker: a file giving one a sheet crew (as this app's files did before)
    is imported with the crew left out, the importer told which structures; without them the bunker
    gets none (a Disposable Heroes file's gets the sheet's)."""
    data = village(demo)
    names = [s["name"] for s in data["structures"]]
    log, block = names.index("Soviet AT/HMG Loghouse"), names.index("German Concrete Blockhouse")
    data["structures"][log].update(crew_side="A", crew_men=12)
    data["structures"][block]["state"] = {"crew_pins": 2, "crew_left": 3, "weapons_destroyed": [0]}
    imported = import_scenario(data, club=demo.olga_club, user=demo.olga)
    assert imported.import_warnings == [
        f"structures[{i}]: its crew was left out: a Bolt Action structure has no crew (a sheet's crew is "
        "Disposable Heroes'; units hold a bunker, as they hold a building)" for i in sorted((log, block))]
    for name in ("Soviet AT/HMG Loghouse", "German Concrete Blockhouse"):
        s = imported.structures.get(name=name)
        assert (s.crew_side, s.crew_men, s.crew_pins, s.crew_left, s.weapons_destroyed) == ("", 0, 0, 0, [])

    data = village(demo)
    for structure in data["structures"]:
        structure.pop("crew_side"), structure.pop("crew_men")
    imported = import_scenario(data, club=demo.olga_club, user=demo.olga)
    assert not imported.structures.filter(sheet__isnull=False).exclude(crew_men=0).exists()
    farm = json.loads(dumps(export_scenario(demo.farm)))
    for structure in farm["structures"]:
        structure.pop("crew_men")
    pit = import_scenario(farm, club=demo.club, user=demo.dora).structures.get(name="Soviet Rifle Pit")
    assert pit.crew_men == pit.sheet.crew_total == 9


def farm_and_pit(demo):
    farm = json.loads(dumps(export_scenario(demo.farm)))
    return farm, [s["name"] for s in farm["structures"]].index("Soviet Rifle Pit")


@pytest.mark.parametrize("change, field, words", [
    ({"crew_men": 10}, "crew_men", '10 men is more than its sheet\'s crew: the "Soviet Rifle Pit" sheet has 9 men'),
    ({"crew_side": "", "crew_men": 10}, "crew_men", "10 men is more than its sheet's crew"),
])
def test_a_disposable_heroes_crew_the_builder_refuses_is_refused_at_its_path(client, demo, change, field, words):
    """The builder refuses a bunker's crew of neither side (both sides could attack it, nobody lead it
    out, no tally count it) and more men than its sheet's: a scenario file is held to the same."""
    farm, pit = farm_and_pit(demo)
    farm["structures"][pit].update(change)
    signed_in(client, demo.dora)
    before = counts()
    response = client.post(reverse("scenario_import"), {"club": demo.club.pk, "text": json.dumps(farm)})
    assert response.status_code == 400 and counts() == before
    items = page(response).find("import-errors").find_all("li")
    assert [li.find_all("code")[0].text() for li in items] == [f"structures[{pit}].{field}"]
    assert words in items[0].text()


def test_a_disposable_heroes_crew_of_neither_side_is_imported_and_the_importer_told(demo):
    """Every scenario file written before the builder asked for a side gave its bunkers' crews none: a
    designer's backup still imports, saying which bunker needs a side (the builder marks it too)."""
    farm, pit = farm_and_pit(demo)
    farm["structures"][pit].update(crew_side="")
    imported = import_scenario(farm, club=demo.olga_club, user=demo.olga)
    assert imported.import_warnings == [
        f"structures[{pit}].crew_side: its crew of 9 men holds it for neither side: choose the side whose men "
        "hold it on its page in the builder before a campaign starts"]
    held = imported.structures.get(name="Soviet Rifle Pit")
    assert (held.crew_side, held.crew_men) == ("", 9)


def test_a_disposable_heroes_crew_of_nobody_or_of_no_men_is_imported_as_the_builder_keeps_it(demo):
    farm, pit = farm_and_pit(demo)
    farm["structures"][pit].update(crew_side="", crew_men=0)  # an empty pit: no side to hold it
    farm["name"] = "Empty pit"
    assert import_scenario(farm, club=demo.club, user=demo.dora).structures.get(name="Soviet Rifle Pit").crew_men == 0
    farm["structures"][pit].update(crew_side="B", crew_men=9)  # the sheet's whole crew
    farm["name"] = "Full pit"
    held = import_scenario(farm, club=demo.club, user=demo.dora).structures.get(name="Soviet Rifle Pit")
    assert (held.crew_side, held.crew_men) == ("B", 9)


def test_a_sheet_file_is_not_a_scenario(demo):
    from apps.structures.formats import export_sheet

    errors = errors_of(export_sheet(BunkerSheet.objects.first()), demo)
    assert errors == [("format", 'must be "redoubt.scenario" (this is a "redoubt.sheet" file)')]


# ---------------------------------------------------------------------------------- pages

def test_export_and_import_pages(client, demo):
    signed_in(client, demo.alice)
    response = client.get(reverse("scenario_export", args=[demo.village.pk]))
    assert response.status_code == 200
    # Named after the scenario, so a designer's downloads folder tells them apart.
    assert response["Content-Disposition"] == \
        f'attachment; filename="{slugify(demo.village.name)}-{demo.village.pk}.redoubt-scenario.json"'
    assert slugify(demo.village.name)
    text = response.content.decode()
    assert text == dumps(export_scenario(demo.village))

    signed_in(client, demo.olga)
    response = client.get(reverse("scenario_import"))
    assert response.status_code == 200
    assert_csp_clean(response)
    response = client.post(reverse("scenario_import"), {"club": demo.olga_club.pk, "text": text})
    imported = Scenario.objects.get(club=demo.olga_club, name="Village crossroads")
    assert response.status_code == 302 and response["Location"] == reverse("scenario", args=[imported.pk])

    bad = json.loads(text)
    bad["structures"][1]["kind"] = "castle"
    del bad["armies"][0]["name"]
    before = counts()
    response = client.post(reverse("scenario_import"), {"club": demo.olga_club.pk, "text": json.dumps(bad)})
    assert response.status_code == 400 and counts() == before
    items = page(response).find("import-errors").find_all("li")
    assert [li.find_all("code")[0].text() for li in items] == ["structures[1].kind", "armies[0].name"]


def test_players_cannot_import_and_other_clubs_cannot_export(client, demo):
    signed_in(client, demo.alice)
    assert client.get(reverse("scenario_import")).status_code == 403
    assert client.post(reverse("scenario_import"), {"club": demo.club.pk, "text": "{}"}).status_code == 403
    signed_in(client, demo.olga)
    assert client.get(reverse("scenario_export", args=[demo.village.pk])).status_code == 404


def test_a_copy_of_the_export_is_not_changed_by_import(demo):
    data = village(demo)
    pristine = copy.deepcopy(data)
    import_scenario(data, club=demo.olga_club, user=demo.olga)
    assert data == pristine


def test_a_sheet_in_a_scenario_file_with_a_crew_or_rof_of_0_is_refused_at_its_path(demo):
    """A scenario file's sheets are a designer's cards as a sheet file's are: a weapon crew or ROF of 0 is
    refused, named under the file's sheets, nothing saved."""
    farm = json.loads(dumps(export_scenario(demo.farm)))
    weapons = next((i, s) for i, s in enumerate(farm["sheets"]) if s["weapons"])
    i, sheet = weapons
    sheet["weapons"][0].update(crew=0, rof=0)
    paths = [p for p, _ in errors_of(farm, demo)]
    assert paths == [f"sheets[{i}].weapons[0].crew", f"sheets[{i}].weapons[0].rof"]


def test_a_vehicle_on_a_floor_of_a_structure_is_refused_at_its_path(demo):
    """As the builder refuses it: a vehicle stands on the table, never on a floor (the battle's Move refuses
    one there, and Bolt Action sets only infantry and artillery up inside a building). The village's Tiger
    put in the brick house made a battle start with a tank on its ground floor."""
    data = village(demo)
    (i, j), = [(i, j) for i, a in enumerate(data["armies"]) for j, u in enumerate(a["units"]) if u["kind"] == "vehicle"]
    data["armies"][i]["units"][j]["at"] = {"structure": 0, "floor": 0}
    assert (f"armies[{i}].units[{j}].at",
            '"Tiger I" is a vehicle: it stands on the table (x, y), not on a floor of a structure') in errors_of(data,
                                                                                                                demo)


def test_a_unit_inside_a_bunker_the_other_sides_crew_holds_is_refused_at_its_path(demo):
    """As the builder refuses it: the farm's rifle pit is held by side A's crew, and a battle's Move never
    takes a side B unit into it (it is taken by assault); a file setting the Panzergrenadiers inside made a
    battle begin with both sides in one bunker. Side A's own squad may stand there."""
    farm, pit = farm_and_pit(demo)
    b = [a["side"] for a in farm["armies"]].index("B")
    farm["armies"][b]["units"][0]["at"] = {"structure": pit, "floor": 0}
    assert (f"armies[{b}].units[0].at", '"Soviet Rifle Pit" is held by its crew for side A: a side B unit is not set '
                                        'up inside it') in errors_of(farm, demo)
    farm["armies"][b]["units"][0]["at"] = {"x": 24, "y": 40}
    a = 1 - b
    farm["armies"][a]["units"][0]["at"] = {"structure": pit, "floor": 0}
    held = import_scenario(farm, club=demo.olga_club, user=demo.olga).structures.get(name="Soviet Rifle Pit")
    assert Unit.objects.get(floor__structure=held).name == "Guards Rifle Squad"
