"""The bunker sheet editor through the test client: it posts what the page's form holds, as a
browser would. Each validation rule shows its message next to its field and leaves the database
as it was; a save on a sheet someone else changed meanwhile is a conflict, not an overwrite;
clone, new-from-blank, the live preview, print pages and who may do what."""

from html import unescape
from html.parser import HTMLParser

import pytest
from django.urls import reverse

from apps.campaigns.models import Club, Role
from apps.structures import blueprints
from apps.structures.formats import sheet_body
from apps.structures.models import BunkerSheet
from tests.campaigns.test_pages import assert_csp_clean, body, fast_passwords, page, signed_in, text_of, user  # noqa: F401
from tests.structures.test_formats import designers_world, load_reference


class FormReader(HTMLParser):
    """The values a browser would submit from the form with `form_id` (no button pressed)."""

    def __init__(self, form_id):
        super().__init__()
        self.form_id, self.inside, self.data = form_id, False, {}
        self.select = self.textarea = None

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "form":
            self.inside = a.get("id") == self.form_id
        if not self.inside:
            return
        if tag == "option":
            if self.select is not None and "selected" in a:
                self.data[self.select] = a.get("value", "")
            return
        if not a.get("name"):
            return
        if tag == "input":
            kind = a.get("type", "text")
            if kind == "checkbox":
                if "checked" in a:
                    self.data[a["name"]] = a.get("value", "on")
            elif kind not in ("submit", "button"):
                self.data[a["name"]] = a.get("value", "")
        elif tag == "select":
            self.select = a["name"]
            self.data.setdefault(self.select, "")
        elif tag == "textarea":
            self.textarea = a["name"]
            self.data[self.textarea] = ""

    def handle_endtag(self, tag):
        if tag == "select":
            self.select = None
        elif tag == "textarea":
            self.textarea = None
        elif tag == "form":
            self.inside = False

    def handle_data(self, data):
        if self.textarea:
            self.data[self.textarea] += data.lstrip("\n") if not self.data[self.textarea] else data


def form_data(response, form_id):
    reader = FormReader(form_id)
    reader.feed(body(response))
    return reader.data


@pytest.fixture
def world(db):
    w = designers_world()
    w.designer_b = user("dan", w.club, Role.DESIGNER)
    w.library = BunkerSheet.objects.get(club=None, slug="soviet-at-hmg-loghouse")
    w.sheet = BunkerSheet.objects.create(club=w.club, **{k: v for k, v in sheet_body(w.library).items()})
    w.their_sheet = BunkerSheet.objects.create(club=w.other, slug="theirs", name="Their Pillbox")
    return w


def editor(client, account, sheet):
    response = signed_in(client, account).get(reverse("sheet_edit", args=[sheet.pk]))
    assert response.status_code == 200
    return form_data(response, "sheet-form")


def save(client, sheet, data):
    return client.post(reverse("sheet_edit", args=[sheet.pk]), data)


def errors_at(response, slot):
    node = page(response).find(slot)
    assert node is not None, f"no error slot {slot!r}"
    return node.text()


def unchanged(sheet):
    before = (sheet_body(sheet), sheet.version)
    sheet.refresh_from_db()
    return (sheet_body(sheet), sheet.version) == before


# ---------------------------------------------------------------------------------- the page

def test_the_editor_shows_every_part_of_the_card_filled_in(client, world):
    response = signed_in(client, world.designer).get(reverse("sheet_edit", args=[world.sheet.pk]))
    assert response.status_code == 200
    assert_csp_clean(response)
    data = form_data(response, "sheet-form")
    assert data["name"] == "Soviet AT/HMG Loghouse" and data["kind"] == "bunker" and data["dm"] == "0"
    assert data["crew_total"] == "12" and data["leaders-0-rank"] == "NCO" and data["leaders-0-count"] == "1"
    assert (data["front-0-location"], data["front-0-d10_from"], data["front-0-d10_to"], data["front-0-av"]) == \
           ("Walls", "1", "8", "75")
    assert data["rear-1-location"] == "Entrance" and data["top_av"] == "25"
    assert data["weapons-1-name"] == "Maxim" and data["weapons-1-crew"] == "3" and data["weapons-1-mm"] == "-3"
    assert [data[f"pen_{i}"] for i in range(10)] == ["12", "24", "36", "48", "60", "72", "84", "96", "108", "120"]
    assert data["version"] == "1"
    # the live preview: the finished card and the computed lines
    assert text_of(response, "preview-title") == "Soviet AT/HMG Loghouse"
    assert "Men free to fire rifles: 3" in text_of(response, "preview-riflemen")
    assert page(response).find("preview-reference-odds") is not None
    assert 'hx-post="%s"' % reverse("sheet_preview", args=[world.sheet.pk]) in body(response)


def test_a_clubs_name_ending_in_s_owns_its_sheet_as_english_does(client, world):
    """Exploratory test: a club called Wargamers saw "Wargamers's sheet" on its sheet's page and editor."""
    Club.objects.filter(pk=world.club.pk).update(name="Wargamers")
    for name in ("sheet", "sheet_edit"):
        html = unescape(body(signed_in(client, world.designer).get(reverse(name, args=[world.sheet.pk]))))
        assert "Wargamers' sheet" in html and "Wargamers's" not in html
    Club.objects.filter(pk=world.club.pk).update(name="Home Guard")
    assert "Home Guard's sheet" in unescape(body(client.get(reverse("sheet", args=[world.sheet.pk]))))


def test_a_valid_save_writes_the_card_and_bumps_the_version(client, world):
    data = editor(client, world.designer, world.sheet)
    data.update({"name": "Loghouse Mk II", "dm": "-1", "crew_total": "14", "front-0-av": "80",
                 "weapons-2-crew": "all", "weapons-2-name": "Flare pistol", "features": "Basic Sights\nRadio"})
    response = save(client, world.sheet, data)
    assert response.status_code == 302
    world.sheet.refresh_from_db()
    assert world.sheet.version == 2 and world.sheet.name == "Loghouse Mk II" and world.sheet.dm == -1
    assert world.sheet.locations["front"][0] == {"location": "Walls", "d10_from": 1, "d10_to": 8, "av": 80}
    assert world.sheet.weapons[2]["crew"] == "all" and world.sheet.weapons[2]["name"] == "Flare pistol"
    assert world.sheet.features == ["Basic Sights", "Radio"]


def test_removing_rows(client, world):
    data = editor(client, world.designer, world.sheet)
    data["weapons-1-DELETE"] = "on"
    assert save(client, world.sheet, data).status_code == 302
    world.sheet.refresh_from_db()
    assert [w["name"] for w in world.sheet.weapons] == ["45mm"]


def test_add_a_row_without_javascript(client, world):
    data = editor(client, world.designer, world.sheet)
    data["add"] = "weapons"
    response = save(client, world.sheet, data)
    assert response.status_code == 200 and unchanged(world.sheet)
    after = form_data(response, "sheet-form")
    assert "weapons-3-name" in after and after["weapons-TOTAL_FORMS"] == "4"


# ---------------------------------------------------------------------------------- validation next to each field

@pytest.mark.parametrize("changes, slot, words", [
    # each facing's d10 ranges cover 1–10 exactly once
    ({"front-1-d10_from": "", "front-1-d10_to": "", "front-1-location": "", "front-1-av": ""},
     "err-front", "Front: d10 results 9, 10 hit no location"),
    ({"rear-1-d10_from": "7"}, "err-rear", "Rear: d10 results 7, 8 hit two locations"),
    ({"side-0-d10_to": "11"}, "err-id_side-0-d10_to", "A d10 rolls 1 to 10, not 11"),
    ({"front-0-d10_from": ""}, "err-id_front-0-d10_from", "Enter the d10 result"),
    # crew at least the men its weapons need
    ({"crew_total": "5"}, "err-id_crew_total", "Too few men: 5 men cannot man weapons needing 6"),
    # penetration row never decreasing, ten or none
    ({"pen_3": "30"}, "err-id_pen_3", "30 is lower than the column before (36)"),
    ({"pen_9": ""}, "err-id_penetration_row", "Fill in all ten columns or none (missing: 10+)"),
    # armour values not negative
    ({"front-1-av": "-5"}, "err-id_front-1-av", "Must not be negative (-5)"),
    ({"top_av": "-1"}, "err-id_top_av", "Must not be negative (-1)"),
    ({"pen_0": "-2"}, "err-id_pen_0", "Must not be negative (-2)"),
    # what the forms themselves check
    ({"weapons-0-crew": "three"}, "err-id_weapons-0-crew", '"all" for All Crew'),
    # the cards print a crew of 3, 4, 6, "All Crew" or none, and a rate of fire of 1 to 6 or none
    ({"weapons-0-crew": "0"}, "err-id_weapons-0-crew", "At least 1 man: leave it empty when it needs none"),
    ({"weapons-1-rof": "0"}, "err-id_weapons-1-rof", "At least 1 (leave it empty for none"),
    ({"name": ""}, "err-id_name", "This field is required."),
    ({"dm": "12"}, "err-id_dm", "less than or equal to 10"),
    ({"front-0-location": ""}, "err-id_front-0-location", "Name the location"),
    ({"leaders-0-count": ""}, "err-id_leaders-0-count", "How many?"),
    ({"weapons-0-name": ""}, "err-id_weapons-0-name", "Name the weapon"),
    # what the sheet import refuses: a sheet saved here must import back from its own export
    ({"front-1-location": " walls"}, "err-id_front-1-location", "Walls is already a location on this facing"),
    ({"features": "Basic Sights\n" + "A" * 81}, "err-id_features", "At most 80 characters a feature (line 2 has 81)"),
    ({"features": "\n".join(f"Feature {i}" for i in range(51))}, "err-id_features", "At most 50 features (there are 51)"),
    # "12 men, including 1 NCO": the NCOs are among the crew
    ({"leaders-0-count": "13"}, "err-leaders", "13 NCOs, more than the whole crew (12 men)"),
    ({"leaders-1-rank": "NCO", "leaders-1-count": "1"}, "err-id_leaders-1-rank",
     "NCO is listed twice: add up the count in one row"),
])
def test_each_rule_shows_its_message_beside_the_field_and_saves_nothing(client, world, changes, slot, words):
    data = editor(client, world.designer, world.sheet)
    data.update(changes)
    response = save(client, world.sheet, data)
    assert response.status_code == 400
    assert words in errors_at(response, slot)
    assert "Nothing was saved" in body(response)
    assert unchanged(world.sheet)
    # the designer's values are still in the form
    after = form_data(response, "sheet-form")
    assert all(after.get(k, "") == v for k, v in changes.items())


@pytest.mark.parametrize("d10_from, d10_to, words", [
    ("8", "1", "Reversed: a range runs from the lower result to the higher (1 to 8, not 8 to 1)"),
    ("9", "11", "A d10 rolls 1 to 10, not 11"),
])
def test_a_bad_d10_range_is_named_as_it_is_beside_the_number_that_is_wrong(client, world, d10_from, d10_to, words):
    """8–1 was "Range 8–1 is not within 1–10" (it is: it is reversed), and 9–11's error sat under "from", whose 9
    is right. The "to" field says what is wrong; "from" says nothing."""
    data = editor(client, world.designer, world.sheet)
    data.update({"front-1-d10_from": d10_from, "front-1-d10_to": d10_to})
    response = save(client, world.sheet, data)
    assert response.status_code == 400
    assert errors_at(response, "err-id_front-1-d10_to").strip() == words
    assert errors_at(response, "err-id_front-1-d10_from").strip() == ""
    assert unchanged(world.sheet)
    # The live preview's slots say the same.
    preview = client.post(reverse("sheet_preview", args=[world.sheet.pk]), {**data, "reference": "", "target": ""},
                          HTTP_HX_REQUEST="true")
    assert words in errors_at(preview, "err-id_front-1-d10_to")
    assert errors_at(preview, "err-id_front-1-d10_from").strip() == ""


def test_a_saved_sheet_imports_back_from_its_own_export(client, world):
    """The longest features and a location named once per facing are saved, exported and imported
    again as they are (the import's limits are the editor's)."""
    data = editor(client, world.designer, world.sheet)
    data.update({"features": "\n".join(["B" * 80] * 50), "rear-1-location": "Vision"})
    assert save(client, world.sheet, data).status_code == 302
    world.sheet.refresh_from_db()
    assert world.sheet.features == ["B" * 80] * 50
    exported = client.get(reverse("sheet_export", args=[world.sheet.pk])).content.decode()
    response = client.post(reverse("sheet_import"), {"club": world.club.pk, "text": exported})
    assert response.status_code == 302
    copy = BunkerSheet.objects.filter(club=world.club).latest("pk")
    assert {**sheet_body(copy), "slug": "", "name": ""} == {**sheet_body(world.sheet), "slug": "", "name": ""}


def test_a_rank_too_long_is_not_also_called_missing(client, world):
    data = editor(client, world.designer, world.sheet)
    response = save(client, world.sheet, {**data, "leaders-0-rank": "N" * 61})
    assert response.status_code == 400 and unchanged(world.sheet)
    assert errors_at(response, "err-id_leaders-0-rank") == "Ensure this value has at most 60 characters (it has 61)."


@pytest.mark.parametrize("crew, words", [("", "This field is required."),
                                          ("-1", "Ensure this value is greater than or equal to 0.")])
def test_a_crew_left_empty_or_refused_is_not_also_called_fewer_than_its_ncos(client, world, crew, words):
    """A Total crew left empty (or refused) was read as 0 men, and the NCO ranks beside it were told
    "1 NCOs, more than the whole crew (0 men)", of a crew nobody had typed: only the crew's own field says
    what is wrong (in the live preview too, which checks the same way)."""
    data = editor(client, world.designer, world.sheet)
    response = save(client, world.sheet, {**data, "crew_total": crew})
    assert response.status_code == 400 and unchanged(world.sheet)
    assert errors_at(response, "err-id_crew_total") == words
    assert errors_at(response, "err-leaders") == ""


def test_a_sheet_in_play_is_changed_there_only_when_the_designer_says_so(client, world):
    """A campaign's bunkers hold the club's sheet itself, not a copy: a designer tuning the card for next
    weekend's scenario changed the armour and weapons of a campaign being played, without a word. The
    editor names where it is in play, and a save that changes the card there needs the box ticked."""
    from apps.campaigns import services as campaign_services
    from apps.campaigns.models import Scenario
    from apps.structures.models import Material, Structure

    scenario = Scenario.objects.create(club=world.club, name="Hill 112", ruleset="dh")
    Structure.objects.create(scenario=scenario, name="Loghouse", kind="bunker", sheet=world.sheet, x=24, y=24,
                             wall_material=Material.objects.get(surface="wall", slug="logs"), crew_side="B", crew_men=12)
    campaign = campaign_services.start_campaign(scenario_id=scenario.pk, user=world.organiser, name="Winter line")
    data = editor(client, world.designer, world.sheet)
    assert "In play: the campaign Winter line holds this very card" in text_of(
        client.get(reverse("sheet_edit", args=[world.sheet.pk])), "in-play")

    response = save(client, world.sheet, {**data, "front-0-av": "150"})
    assert response.status_code == 400 and unchanged(world.sheet)
    assert errors_at(response, "err-id_in_play_too").startswith(
        "Soviet AT/HMG Loghouse is in play in the campaign Winter line: saving changes its bunkers there too.")
    # The same card saved again (nothing changed) needs no box; ticked, the change is saved.
    assert save(client, world.sheet, data).status_code == 302
    data = editor(client, world.designer, world.sheet)
    assert save(client, world.sheet, {**data, "front-0-av": "150", "in_play_too": "on"}).status_code == 302
    world.sheet.refresh_from_db()
    assert world.sheet.locations["front"][0]["av"] == 150
    assert campaign.structures.get().sheet.locations["front"][0]["av"] == 150
    # A sheet nobody plays with has no box.
    Structure.objects.filter(sheet=world.sheet).exclude(scenario=scenario).delete()
    page_ = body(client.get(reverse("sheet_edit", args=[world.sheet.pk])))
    assert 'id="in-play"' not in page_ and 'name="in_play_too"' not in page_


def test_a_crew_cut_below_a_scenarios_bunker_mans_it_with_the_new_crew_and_its_file_imports_back(client, world):
    """A designer cut the card's crew from 12 to 8 men: the scenario's bunker kept its 12, the builder started
    battles with 12 men in an 8-man bunker, and the scenario's own export was refused on import (structures[0].
    crew_men: more than its sheet's crew), a designer's backup lost. Its bunkers there now get the card's 8,
    the save says so; one manned below (4) keeps its men, and a campaign keeps the crew it was played with."""
    from apps.campaigns import services as campaign_services
    from apps.campaigns.formats import export_scenario, import_scenario
    from apps.campaigns.models import Scenario
    from apps.structures.models import Material, Structure

    logs = Material.objects.get(surface="wall", slug="logs")
    hill = Scenario.objects.create(club=world.club, name="Hill 112", ruleset="dh")
    full = Structure.objects.create(scenario=hill, name="Loghouse", kind="bunker", sheet=world.sheet, x=24, y=24,
                                    wall_material=logs, crew_side="B", crew_men=12)
    low = Structure.objects.create(scenario=hill, name="Outpost", kind="bunker", sheet=world.sheet, x=48, y=24,
                                   wall_material=logs, crew_side="B", crew_men=4)
    campaign = campaign_services.start_campaign(scenario_id=hill.pk, user=world.organiser, name="Winter line")
    data = editor(client, world.designer, world.sheet)
    response = save(client, world.sheet, {**data, "crew_total": "8", "in_play_too": "on"})
    assert response.status_code == 302
    full.refresh_from_db(), low.refresh_from_db()
    assert (full.crew_men, low.crew_men) == (8, 4)
    assert campaign.structures.get(name="Loghouse").crew_men == 12
    said = [str(m) for m in client.get(response["Location"]).context["messages"]]
    assert "Its bunkers in the scenario Hill 112 had more men than its crew of 8: they now have 8." in said
    copy_ = import_scenario(export_scenario(hill), club=world.club, user=world.designer)
    assert copy_.structures.get(name="Loghouse").crew_men == 8


def campaign_holding(world, lost):
    """A Disposable Heroes campaign started on the sheet, its bunker having lost the weapons at `lost`."""
    from apps.campaigns import services as campaign_services
    from apps.campaigns.models import Scenario
    from apps.structures.models import Material, Structure

    scenario = Scenario.objects.create(club=world.club, name="Hill 112", ruleset="dh")
    Structure.objects.create(scenario=scenario, name="Loghouse", kind="bunker", sheet=world.sheet, x=24, y=24,
                             wall_material=Material.objects.get(surface="wall", slug="logs"), crew_side="B", crew_men=12)
    campaign = campaign_services.start_campaign(scenario_id=scenario.pk, user=world.organiser, name="Winter line")
    bunker = campaign.structures.get()
    bunker.weapons_destroyed = lost
    bunker.save()
    return bunker


def lost_on_its_page(client, bunker):
    return text_of(client.get(reverse("structure", args=[bunker.pk])), "weapons-lost")


@pytest.mark.parametrize("changes, words", [
    # the 45mm gone: the lost Maxim (index 1) would point past the card, and the 45mm's place be the Maxim's
    ({"weapons-0-DELETE": "on"}, "removes 45mm (weapon 1)"),
    ({"weapons-1-name": "", "weapons-1-crew": "", "weapons-1-location": "", "weapons-1-range": "", "weapons-1-rof": "",
      "weapons-1-ap": "", "weapons-1-mm": "", "weapons-1-dm": "", "weapons-1-special": ""}, "removes Maxim (weapon 2)"),
    ({"weapons-TOTAL_FORMS": "1"}, "removes Maxim (weapon 2)"),
    # the rows swapped by retyping them: the 45mm would count as lost
    ({"weapons-0-name": "Maxim", "weapons-1-name": "45mm"}, "moves Maxim into weapon 1's place, 45mm into weapon 2's"),
])
def test_weapons_of_a_card_in_play_are_not_removed_or_moved(client, world, changes, words):
    """A campaign's bunker names its lost weapons by their place on the card (so do its battles' logs):
    removing or reordering the card's weapons made a lost weapon reappear and another count as lost.
    Refused beside the weapons even with the in-play box ticked; nothing changes anywhere."""
    bunker = campaign_holding(world, [1])
    assert lost_on_its_page(signed_in(client, world.designer), bunker) == "Maxim"
    data = editor(client, world.designer, world.sheet)
    response = save(client, world.sheet, {**data, **changes, "in_play_too": "on"})
    assert response.status_code == 400 and unchanged(world.sheet)
    message = errors_at(response, "err-weapons")
    assert words in message
    assert ("the campaign Winter line holds Soviet AT/HMG Loghouse and counts its bunkers' lost weapons by their "
            "place on the card") in message
    assert "clone the sheet" in message
    bunker.refresh_from_db()
    assert bunker.weapons_destroyed == [1] and lost_on_its_page(client, bunker) == "Maxim"
    # the live preview keeps saying so while the row is still removed
    preview = client.post(reverse("sheet_preview", args=[world.sheet.pk]), {**data, **changes}, HTTP_HX_REQUEST="true")
    assert words in errors_at(preview, "err-weapons")


def test_a_card_in_play_may_change_its_weapons_in_place_and_gain_one_at_the_end(client, world):
    bunker = campaign_holding(world, [1])
    data = editor(client, world.designer, world.sheet)
    data.update({"weapons-1-range": "30", "weapons-2-name": "DP-28", "weapons-2-crew": "2", "weapons-2-range": "36",
                 "in_play_too": "on"})
    assert save(client, world.sheet, data).status_code == 302
    world.sheet.refresh_from_db()
    assert [(w["name"], w["range"]) for w in world.sheet.weapons] == [("45mm", 48), ("Maxim", 30), ("DP-28", 36)]
    bunker.refresh_from_db()
    assert bunker.weapons_destroyed == [1] and lost_on_its_page(client, bunker) == "Maxim"


def test_weapons_of_a_scenario_bunker_that_starts_with_one_lost_keep_their_places(client, world):
    """A scenario's bunker may start with a weapon lost (an imported scenario): a campaign started from it
    copies those places."""
    from apps.campaigns.models import Scenario
    from apps.structures.models import Material, Structure

    scenario = Scenario.objects.create(club=world.club, name="Hill 112", ruleset="dh")
    Structure.objects.create(scenario=scenario, name="Loghouse", kind="bunker", sheet=world.sheet, x=24, y=24,
                             wall_material=Material.objects.get(surface="wall", slug="logs"), crew_side="B",
                             crew_men=12, weapons_destroyed=[1])
    data = editor(client, world.designer, world.sheet)
    response = save(client, world.sheet, {**data, "weapons-0-DELETE": "on"})
    assert response.status_code == 400 and unchanged(world.sheet)
    assert "the scenario Hill 112 holds Soviet AT/HMG Loghouse" in errors_at(response, "err-weapons")
    # one placed whole in a scenario is the designer's to change: no campaign counts its places yet
    Structure.objects.filter(scenario=scenario).update(weapons_destroyed=[])
    assert save(client, world.sheet, {**data, "weapons-0-DELETE": "on"}).status_code == 302


def test_several_problems_are_all_shown_at_once(client, world):
    data = editor(client, world.designer, world.sheet)
    data.update({"crew_total": "2", "front-0-av": "-1", "pen_5": "1"})
    response = save(client, world.sheet, data)
    assert response.status_code == 400
    assert "Too few men" in errors_at(response, "err-id_crew_total")
    assert "negative" in errors_at(response, "err-id_front-0-av")
    assert "lower than the column before" in errors_at(response, "err-id_pen_5")
    assert unchanged(world.sheet)


def test_a_blank_draft_may_be_saved_with_numbers_still_missing(client, world):
    signed_in(client, world.designer)
    response = client.post(reverse("sheet_new"), {"club": world.club.pk})
    draft = BunkerSheet.objects.get(club=world.club, slug="new-bunker")
    assert response["Location"] == reverse("sheet_edit", args=[draft.pk])
    data = editor(client, world.designer, draft)
    assert data["front-0-location"] == "Walls" and data["front-0-av"] == ""
    data["name"] = "Hill 112 pillbox"
    assert save(client, draft, data).status_code == 302
    draft.refresh_from_db()
    assert draft.name == "Hill 112 pillbox" and draft.locations["front"][0]["av"] is None
    response = client.get(reverse("sheet_edit", args=[draft.pk]))
    assert "Not ready for play yet" in body(response)


def test_a_new_sheet_takes_its_slug_from_the_name_it_is_given(client, world):
    """A sheet made with "New sheet" kept `new-bunker-2` after it was named, and its exported file and
    import messages said so. Named, it takes a slug from its name (suffixed when the club has it)."""
    from apps.structures.formats import export_sheet

    BunkerSheet.objects.create(club=world.club, slug="hill-112-pillbox", name="Old pillbox")
    signed_in(client, world.designer)
    client.post(reverse("sheet_new"), {"club": world.club.pk})
    client.post(reverse("sheet_new"), sheet_form(client, reverse("sheet_list")))
    draft = BunkerSheet.objects.get(club=world.club, slug="new-bunker-2")
    data = editor(client, world.designer, draft)
    assert save(client, draft, {**data, "name": "Hill 112 pillbox"}).status_code == 302
    draft.refresh_from_db()
    assert (draft.name, draft.slug) == ("Hill 112 pillbox", "hill-112-pillbox-2")
    assert export_sheet(draft)["slug"] == "hill-112-pillbox-2"
    # Named once, the slug stays: a later rename keeps it, as it does for every other sheet.
    data = editor(client, world.designer, draft)
    assert save(client, draft, {**data, "name": "Hill 113 pillbox"}).status_code == 302
    draft.refresh_from_db()
    assert (draft.name, draft.slug) == ("Hill 113 pillbox", "hill-112-pillbox-2")
    assert BunkerSheet.objects.get(club=world.club, slug="new-bunker").name == "New bunker"


def test_a_new_sheet_already_placed_keeps_its_slug_when_named(client, world):
    """A scenario's file names its sheets by slug, and importing it back finds the club's own sheet by it:
    a placed sheet keeps the slug it was placed with, so the file still comes back onto the same card."""
    from apps.campaigns.models import Scenario
    from apps.structures.models import Material, Structure

    signed_in(client, world.designer)
    client.post(reverse("sheet_new"), {"club": world.club.pk})
    draft = BunkerSheet.objects.get(club=world.club, slug="new-bunker")
    hill = Scenario.objects.create(club=world.club, name="Hill 112", ruleset="dh")
    Structure.objects.create(scenario=hill, name="Pillbox", kind="bunker", sheet=draft, x=24, y=24,
                             wall_material=Material.objects.get(surface="wall", slug="logs"))
    data = editor(client, world.designer, draft)
    assert save(client, draft, {**data, "name": "Hill 112 pillbox"}).status_code == 302
    draft.refresh_from_db()
    assert (draft.name, draft.slug) == ("Hill 112 pillbox", "new-bunker")


# ---------------------------------------------------------------------------------- live preview

def test_the_live_preview_recomputes_the_card_and_refreshes_every_error_slot(client, world):
    data = editor(client, world.designer, world.sheet)
    data.update({"crew_total": "20", "front-0-av": "-3", "reference": "", "target": ""})
    response = client.post(reverse("sheet_preview", args=[world.sheet.pk]), data, HTTP_HX_REQUEST="true")
    assert response.status_code == 200
    html = body(response)
    assert "<html" not in html and "Men free to fire rifles: 7" in html  # (20 - 6) // 2
    assert 'id="err-id_front-0-av" class="field-error" aria-live="polite" hx-swap-oob="true"' in html
    assert "Must not be negative (-3)" in html
    assert 'id="err-id_crew_total" class="field-error" aria-live="polite" hx-swap-oob="true"></div>' in html
    assert unchanged(world.sheet)


def test_preview_odds_against_a_chosen_reference_gun(client, world):
    data = editor(client, world.designer, world.sheet)
    catalogue_75 = "w%d" % __import__("apps.armies.models", fromlist=["Weapon"]).Weapon.objects.get(
        ruleset="dh", slug="7-5cm").pk
    data["reference"] = catalogue_75
    response = client.post(reverse("sheet_preview", args=[world.sheet.pk]), data, HTTP_HX_REQUEST="true")
    cells = [td.text() for td in page(response).find("preview-reference-odds").find_all("td")]
    # 7.5cm row 17 35 53 70 88 105 123 140 158 175 against front Walls 75 (1–8) / Vision 10 (9–10):
    # walls penetrated on 5+ (6/10), vision always: 8/10 × 6/10 + 2/10 = 34/50 = 68 %
    assert cells[0] == "68% 17/25"
    assert cells[3] == "90% 9/10"  # top AV 25: only the d10 <2 column (17) falls short
    rows = page(response).find("preview-weapon-odds").find_all("tr")
    assert rows[1].find_all("th")[0].text() == "45mm"  # the card's main gun row


def test_riflemen_with_all_crew_and_undermanned(client, world):
    data = editor(client, world.designer, world.sheet)
    data["weapons-0-crew"] = "all"
    response = client.post(reverse("sheet_preview", args=[world.sheet.pk]), data, HTTP_HX_REQUEST="true")
    assert "Men free to fire rifles: 0" in body(response) and "whole crew serves the weapons" in body(response)


# ---------------------------------------------------------------------------------- conflicts

def test_saving_over_someone_elses_change_is_a_conflict_not_an_overwrite(client, world, django_user_model):
    from django.test import Client

    mine = editor(client, world.designer, world.sheet)
    other = Client()
    theirs = editor(other, world.designer_b, world.sheet)
    theirs["name"] = "Dan's Loghouse"
    assert save(other, world.sheet, theirs).status_code == 302

    mine["name"] = "Dora's Loghouse"
    mine["dm"] = "2"
    response = save(client, world.sheet, mine)
    assert response.status_code == 409
    world.sheet.refresh_from_db()
    assert world.sheet.name == "Dan's Loghouse" and world.sheet.dm == 0 and world.sheet.version == 2
    conflict = page(response).find("conflict").text()
    assert "Someone else saved this sheet" in conflict and "You opened version 1; it is now version 2" in conflict
    assert "Name" in conflict and "DM" in conflict
    assert "Dan's Loghouse" in text_of(response, "theirs-title")
    again = form_data(response, "sheet-form")
    assert again["name"] == "Dora's Loghouse" and again["version"] == "2"

    # having seen theirs, saving again is a deliberate overwrite
    assert save(client, world.sheet, again).status_code == 302
    world.sheet.refresh_from_db()
    assert world.sheet.name == "Dora's Loghouse" and world.sheet.version == 3


def test_the_same_save_sent_twice_is_saved_not_a_conflict(client, world):
    """A double tap on Save: the second send carries the version the first replaced, and holds what
    it saved. It is told the sheet is saved, not shown a conflict with itself."""
    mine = editor(client, world.designer, world.sheet)
    mine["name"] = "Dora's Loghouse"
    assert save(client, world.sheet, mine).status_code == 302
    again = save(client, world.sheet, mine)
    assert again.status_code == 302 and again["Location"] == reverse("sheet_edit", args=[world.sheet.pk])
    assert "Saved Dora&#x27;s Loghouse (version 2)." in body(client.get(again["Location"]))
    world.sheet.refresh_from_db()
    assert world.sheet.name == "Dora's Loghouse" and world.sheet.version == 2


# ---------------------------------------------------------------------------------- clone, new, print

def test_clone_a_library_sheet_into_my_club(client, world):
    library = BunkerSheet.objects.get(club=None, slug="german-concrete-blockhouse")
    response = signed_in(client, world.designer).post(reverse("sheet_clone", args=[library.pk]),
                                                      {"club": world.club.pk})
    clone = BunkerSheet.objects.get(club=world.club, slug="german-concrete-blockhouse")
    assert response.status_code == 302 and response["Location"] == reverse("sheet_edit", args=[clone.pk])
    assert {k: v for k, v in sheet_body(clone).items()} == sheet_body(library)
    again = signed_in(client, world.designer).post(reverse("sheet_clone", args=[library.pk]), {"club": world.club.pk})
    assert again.status_code == 302
    second = BunkerSheet.objects.get(club=world.club, slug="german-concrete-blockhouse-2")
    assert BunkerSheet.objects.filter(club=None).count() == 9
    # Each clone is named apart from the club's other sheets, as an import is: the builder offers them by name.
    assert (clone.name, second.name) == ("German Concrete Blockhouse", "German Concrete Blockhouse (2)")


def test_a_sheet_is_not_renamed_to_another_of_the_clubs_sheets(client, world):
    """Two of a club's sheets of one name were offered alike in the builder's sheet list."""
    other = BunkerSheet.objects.create(club=world.club, slug="pit", name="Rifle pit Nord")
    data = editor(client, world.designer, world.sheet)
    response = save(client, world.sheet, {**data, "name": "Rifle pit Nord"})
    assert response.status_code == 400 and unchanged(world.sheet)
    assert errors_at(response, "err-id_name") == (
        "Your club already has a sheet called Rifle pit Nord: give this one a name of its own")
    # Another club's sheet, or the library's, may have it.
    other.club = world.other
    other.save()
    assert save(client, world.sheet, {**data, "name": "Rifle pit Nord"}).status_code == 302
    data = editor(client, world.designer, world.sheet)
    assert save(client, world.sheet, {**data, "name": "German AT Bunker"}).status_code == 302


def sheet_form(client, url):
    """What the page's New sheet or Clone form sends."""
    return {k: v for k, v in form_data(client.get(url), None).items() if k in ("club", "after")}


def test_the_clone_form_sent_twice_makes_one_clone(client, world):
    """A double tap on Clone without JavaScript (or the page's form sent again from another tab): the
    second send lands on the clone the first made. Cloning again from the page drawn after it makes
    another; only the sheets of the clubs the user designs for count as known."""
    url = reverse("sheet", args=[world.library.pk])
    data = sheet_form(signed_in(client, world.designer), url)
    assert data == {"club": str(world.club.pk), "after": str(world.sheet.pk)}  # (Rivals' sheet is newer)
    clone = reverse("sheet_clone", args=[world.library.pk])
    first, again = client.post(clone, data), client.post(clone, data)
    made = BunkerSheet.objects.get(club=world.club, slug=f"{world.library.slug}-2")  # world.sheet holds the slug
    assert first["Location"] == again["Location"] == reverse("sheet_edit", args=[made.pk])
    assert "Soviet AT/HMG Loghouse (2) is already made (the form was sent twice): here it is." in body(
        client.get(again["Location"]))
    assert client.post(clone, sheet_form(client, url)).status_code == 302
    assert BunkerSheet.objects.filter(club=world.club, slug__startswith=world.library.slug).count() == 3


def test_the_new_sheet_form_sent_twice_makes_one_sheet(client, world):
    """The same for "New sheet from the blank card": a second blank sheet is made from the page drawn
    after the first, not by sending the same form again."""
    url = reverse("sheet_list")
    data = sheet_form(signed_in(client, world.designer), url)
    first, again = client.post(reverse("sheet_new"), data), client.post(reverse("sheet_new"), data)
    draft = BunkerSheet.objects.get(club=world.club, slug="new-bunker")
    assert first["Location"] == again["Location"] == reverse("sheet_edit", args=[draft.pk])
    assert "New bunker is already made (the form was sent twice): here it is." in body(client.get(again["Location"]))
    assert client.post(reverse("sheet_new"), sheet_form(client, url))["Location"] != first["Location"]
    assert sorted(BunkerSheet.objects.filter(club=world.club, slug__startswith="new-bunker").values_list(
        "slug", flat=True)) == ["new-bunker", "new-bunker-2"]


def test_a_new_sheet_form_that_names_no_sheet_it_knew_makes_nothing(client, world):
    before = BunkerSheet.objects.count()
    response = signed_in(client, world.designer).post(reverse("sheet_new"), {"club": world.club.pk, "after": "-1"})
    assert response.status_code == 400 and "reload the page and try again" in body(response)
    assert BunkerSheet.objects.count() == before


def test_a_designer_deletes_a_sheet_nothing_stands_on(client, world):
    """There was no way to be rid of a draft or a clone. A sheet placed in a scenario, campaign or battle
    stays, the refusal naming where; players, library sheets and other clubs' sheets are refused."""
    from apps.campaigns.models import Scenario
    from apps.structures.models import Material, Structure

    draft = BunkerSheet.objects.create(club=world.club, slug="draft", name="Draft pillbox")
    url = reverse("sheet_delete", args=[draft.pk])
    assert signed_in(client, world.player).post(url).status_code == 403
    assert signed_in(client, world.outsider).post(url).status_code == 404
    assert signed_in(client, world.designer).post(reverse("sheet_delete", args=[world.library.pk])).status_code == 403
    assert "Delete Draft pillbox" in body(client.get(reverse("sheet", args=[draft.pk])))
    assert "Delete…" not in body(client.get(reverse("sheet", args=[world.library.pk])))

    scenario = Scenario.objects.create(club=world.club, name="Hill 112", ruleset="dh")
    Structure.objects.create(scenario=scenario, name="Pillbox", kind="bunker", sheet=draft, x=24, y=24,
                             wall_material=Material.objects.get(surface="wall", slug="concrete"))
    response = client.post(url)
    assert response.status_code == 409 and BunkerSheet.objects.filter(pk=draft.pk).exists()
    assert "Draft pillbox is placed in the scenario Hill 112" in body(response)

    scenario.structures.all().delete()
    response = client.post(url)
    assert response.status_code == 302 and response["Location"] == reverse("sheet_list")
    assert not BunkerSheet.objects.filter(pk=draft.pk).exists()
    assert "Deleted Draft pillbox." in body(client.get(response["Location"]))
    assert BunkerSheet.objects.filter(pk=world.sheet.pk).exists()


def test_the_sheet_page_offers_edit_and_clone_to_designers_only(client, world):
    html = body(signed_in(client, world.designer).get(reverse("sheet", args=[world.library.pk])))
    assert reverse("sheet_edit", args=[world.library.pk]) not in html
    assert reverse("sheet_clone", args=[world.library.pk]) in html and "Library sheets are read-only" in html
    html = body(client.get(reverse("sheet", args=[world.sheet.pk])))
    assert reverse("sheet_edit", args=[world.sheet.pk]) in html
    html = body(signed_in(client, world.player).get(reverse("sheet", args=[world.sheet.pk])))
    assert reverse("sheet_edit", args=[world.sheet.pk]) not in html and reverse("sheet_clone", args=[world.sheet.pk]) not in html
    assert reverse("sheet_print", args=[world.sheet.pk]) in html and reverse("sheet_export", args=[world.sheet.pk]) in html


def test_print_page_renders_one_card_with_the_print_stylesheet(client, world):
    response = signed_in(client, world.player).get(reverse("sheet_print", args=[world.library.pk]))
    assert response.status_code == 200
    assert_csp_clean(response)
    html = body(response)
    assert "css/print.css" in html and "js/designer.js" in html
    assert html.count('class="print-card"') == 1 and 'class="js-print button-primary" hidden' in html
    assert text_of(response, "sheet-title") == "Soviet AT/HMG Loghouse"


def test_reference_page_lists_armour_classes_and_templates(client, world):
    response = signed_in(client, world.player).get(reverse("sheet_reference"))
    assert response.status_code == 200
    assert_csp_clean(response)
    walls = {row.find_all("th")[0].text(): row.find_all("td")[0].text()
             for row in page(response).find("wall-classes").find_all("tr")[1:]}
    assert walls["Brick"] == "6" and walls["Concrete, reinforced"] == "9" and walls["Timber, light (burns)"] == "3"
    roofs = page(response).find("roof-classes").text()
    assert "Thatch (burns) 1" in roofs
    rows = {r.find_all("th")[0].text(): [td.text() for td in r.find_all("td")]
            for r in page(response).find("blueprints").find_all("tr")[1:]}
    assert rows["Brick house, 2 floors"][-3:] == ["4", "20", "24"]


def test_template_damage_points_scale_with_the_variant():
    house = blueprints.BY_KEY["house-brick-2"]
    assert [house.points(v) for v in (1, 2, 3)] == [4, 20, 24]  # seed 000: 24 suits variant 3
    for b in blueprints.BLUEPRINTS:
        assert b.points(1) < b.points(2) <= b.points(3)
        assert b.points(0) == b.points(3)  # no variant chosen: the variant-3 figure as a reference
    assert {b.key for b in blueprints.BLUEPRINTS} >= {
        *(f"house-{m}-{n}" for m in ("brick", "timber", "stone") for n in (1, 2, 3)),
        "church", "barn", "shed", "foxhole", "trench", "weapon-emplacement"}
    assert blueprints.BY_KEY["house-timber-2"].toughness < house.toughness < blueprints.BY_KEY["house-stone-2"].toughness


# ---------------------------------------------------------------------------------- who may do what

def test_players_and_library_sheets_are_read_only(client, world):
    data = editor(client, world.designer, world.sheet)
    data["name"] = "Hijacked"
    signed_in(client, world.player)
    assert client.get(reverse("sheet_edit", args=[world.sheet.pk])).status_code == 403
    assert save(client, world.sheet, data).status_code == 403
    assert client.post(reverse("sheet_preview", args=[world.sheet.pk]), data).status_code == 403
    assert client.post(reverse("sheet_clone", args=[world.library.pk]), {"club": world.club.pk}).status_code == 403
    assert client.post(reverse("sheet_new"), {"club": world.club.pk}).status_code == 403
    assert unchanged(world.sheet)

    signed_in(client, world.designer)
    assert client.get(reverse("sheet_edit", args=[world.library.pk])).status_code == 403
    assert save(client, world.library, data).status_code == 403
    assert unchanged(world.library)


def test_a_refused_editor_says_why_on_a_page_with_the_sites_navigation(client, world):
    """A library sheet's editor, opened by a player from a phone: the reason and a way on, not a bare 403."""
    signed_in(client, world.player)
    response = client.get(reverse("sheet_edit", args=[world.library.pk]))
    assert response.status_code == 403
    assert ("Library sheets are read-only (clone one), and only a club's organisers and designers edit its sheets."
            in " ".join(text_of(response, "main").split()))
    html = body(response)
    assert 'class="site-nav"' in html and f'href="{reverse("sheet_list")}"' in html and '<a href="/">Home</a>' in html
    assert_csp_clean(response)
    assert unchanged(world.library)


def test_other_clubs_sheets_are_not_found(client, world):
    signed_in(client, world.designer)
    for name in ("sheet_edit", "sheet_export", "sheet_print", "sheet"):
        assert client.get(reverse(name, args=[world.their_sheet.pk])).status_code == 404, name
    assert client.post(reverse("sheet_preview", args=[world.their_sheet.pk])).status_code == 404
    assert client.post(reverse("sheet_clone", args=[world.their_sheet.pk]), {"club": world.club.pk}).status_code == 404
    # nor can a designer clone into a club they do not design for
    assert client.post(reverse("sheet_clone", args=[world.library.pk]), {"club": world.other.pk}).status_code == 403
    assert not BunkerSheet.objects.filter(club=world.other, slug=world.library.slug).exists()


def test_anonymous_visitors_are_sent_to_sign_in(client, world):
    for url in (reverse("sheet_edit", args=[world.sheet.pk]), reverse("sheet_import"), reverse("sheet_reference"),
                reverse("sheet_print", args=[world.sheet.pk])):
        assert client.get(url).status_code == 302, url


# ---------------------------------------------------------------------------------- in a real browser

def browser_sign_in(page, live_server, account, password="pw-for-tests-123"):
    page.goto(live_server.url + reverse("login"))
    page.fill("#id_username", account.username)
    page.fill("#id_password", password)
    with page.expect_navigation():
        page.click("button[type=submit]")


@pytest.mark.browser
@pytest.mark.django_db(transaction=True)
def test_author_a_bunker_from_the_blank_card_on_a_phone(browser, live_server, settings):
    """Tap "new sheet", type the card; errors and the card follow as you type; save; it prints on one page."""
    import re

    load_reference()
    club = Club.objects.create(name="Home Guard", slug="home-guard")
    designer = user("dora", club, Role.DESIGNER)
    context = browser.new_context(viewport={"width": 390, "height": 844}, is_mobile=True, has_touch=True)
    page = context.new_page()
    problems = []
    page.on("pageerror", lambda error: problems.append(str(error)))
    browser_sign_in(page, live_server, designer)
    page.goto(live_server.url + reverse("sheet_list"))
    with page.expect_navigation():
        page.get_by_role("button", name="New sheet from the blank card").tap()
    assert page.evaluate("document.documentElement.scrollWidth") == 390  # one column, nothing sideways

    page.fill("#id_name", "Phone pillbox")
    page.fill("#id_crew_total", "6")
    for field, value in (("front-0-av", "60"), ("front-1-av", "-4"), ("side-0-av", "50"), ("rear-0-av", "40"),
                         ("rear-1-av", "20"), ("top_av", "20"), ("weapons-0-crew", "3"),
                         ("weapons-0-name", "MG34 HMG")):
        page.fill(f"#id_{field}", value)
    # expect() polls from outside the page: the CSP forbids the eval a wait_for_function string needs
    expect = pytest.importorskip("playwright.sync_api").expect
    expect(page.locator("#err-id_front-1-av")).to_have_text("Must not be negative (-4)")
    expect(page.locator("#preview-riflemen")).to_contain_text("Men free to fire rifles: 1")
    expect(page.locator("#preview-title")).to_have_text("Phone pillbox")
    page.fill("#id_front-1-av", "10")
    expect(page.locator("#err-id_front-1-av")).to_have_text("")
    with page.expect_navigation():
        page.get_by_role("button", name="Save sheet").tap()
    sheet = BunkerSheet.objects.get(club=club, name="Phone pillbox")
    assert sheet.locations["front"][1]["av"] == 10 and sheet.weapons[0]["crew"] == 3 and sheet.version == 2

    # Enter in a field saves: it once pressed the form's first button, "+ Add a rank".
    page.goto(live_server.url + reverse("sheet_edit", args=[sheet.pk]))
    page.fill("#id_name", "Phone pillbox Mk II")
    with page.expect_navigation():
        page.press("#id_name", "Enter")
    saved = BunkerSheet.objects.get(pk=sheet.pk)
    assert (saved.name, saved.leaders, saved.version) == ("Phone pillbox Mk II", sheet.leaders, 3)

    page.goto(live_server.url + reverse("sheet_print", args=[sheet.pk]))
    assert page.locator(".js-print").is_visible()
    for paper in ("A4", "Letter"):
        assert len(re.findall(rb"/Type\s*/Page[^s]", page.pdf(format=paper))) == 1, paper
    assert problems == []
    context.close()
