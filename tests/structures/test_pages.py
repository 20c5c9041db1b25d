"""The structure page and the bunker sheet pages: a sheet shows every number of its 003 card."""

from pathlib import Path

import pytest
from django.conf import settings
from django.core.management import call_command
from django.urls import reverse

from apps.structures.models import BunkerSheet, Structure
from tests.campaigns.test_pages import (  # noqa: F401 - fast_passwords is an autouse fixture
    assert_csp_clean,
    body,
    fast_passwords,
    make_world,
    page,
    signed_in,
    table_rows,
    text_of,
    user,
)

LIBRARY = Path(settings.BASE_DIR) / "fixtures" / "bunker_sheets.json"


@pytest.fixture
def world(db):
    return make_world()


def get(client, account, name, pk):
    response = signed_in(client, account).get(reverse(name, args=[pk]))
    assert response.status_code == 200
    assert_csp_clean(response)
    return response


# ---------------------------------------------------------------------------------- structure page

def test_structure_page_shows_footprint_materials_floors_damage_and_connections(client, world):
    response = get(client, world.player, "structure", world.house.pk)
    html = body(response)
    assert "Brick House" in html and "Building in the battle Crossroads Fight, turn 3" in text_of(response, "main")
    construction = page(response).find("construction-title")
    assert construction is not None
    text = page(response).text()
    assert "Walls Brick AC 6" in text and "Roof Slate AC 4" in text and "Flammable no" in text
    assert "Position 10″ from the left, 12″ from the top" in text
    assert "Size 6″ × 4″" in text and "Rotation 90°" in text
    assert "Damage 5/20 (25%)" in text and "Damaged 25%" in text
    assert "Fire not burning" in text and "Collapsed no" in text and "Impassable no" in text
    assert "Ground floor empty Front 2 windows Rear 1 door" in text
    assert "Floor 1 Rifle Section (Side A, 8 models) Front 2 windows Rear 1 door" in text
    assert reverse("structure", args=[world.barn.pk]) in html and "Burning Barn" in html
    assert reverse("battle", args=[world.battle.pk]) in html
    assert "Crew" not in page(response).find("main").text().split("Construction")[0]


def test_structure_page_fire_rubble_and_impassable(client, world):
    text = page(get(client, world.player, "structure", world.barn.pk)).text()
    assert "Fire burning, 12.5 sq in, since turn 2" in text
    assert "Roof Thatch AC 1" in text and "Flammable yes" in text
    assert reverse("structure", args=[world.house.pk]) in body(get(client, world.player, "structure", world.barn.pk))

    text = page(get(client, world.player, "structure", world.rubble.pk)).text()
    assert "Collapsed yes – rubble" in text and "Impassable yes" in text and "Roof none" in text
    assert "No floors" in text and "Stands alone." in text


def test_structure_page_of_a_fortification_shows_its_crew_and_sheet(client, world):
    response = get(client, world.player, "structure", world.bunker.pk)
    text = page(response).text()
    assert "Crew 9/12 men" in text and "Pins 2 of 3" in text and "Routed no" in text
    assert "Penetrating hits 1" in text and "Weapons destroyed 45mm" in text
    assert "Crew pinned (2)" in text
    assert f'href="{reverse("sheet", args=[world.sheet.pk])}"' in body(response)
    assert "Bunker sheet: Test AT/HMG Loghouse" in text


def test_campaign_and_scenario_structures(client, world):
    text = page(get(client, world.player, "structure", world.campaign_structure.pk)).text()
    assert "on the ground of the campaign Winter Line" in text and "Damaged 25%" in text
    text = page(get(client, world.player, "structure", world.scenario_structure.pk)).text()
    assert "in the scenario Crossroads" in text and "Intact" in text


def test_structure_of_another_club_is_not_found(client, world):
    assert signed_in(client, world.outsider).get(reverse("structure", args=[world.house.pk])).status_code == 404
    assert signed_in(client, world.player).get(reverse("structure", args=[world.other_structure.pk])).status_code == 404


# ---------------------------------------------------------------------------------- sheet pages

def sheet_page(client, account, sheet):
    return get(client, account, "sheet", sheet.pk)


def test_sheet_page_shows_every_number_of_the_card(client, world):
    """The sample Soviet AT/HMG Loghouse, cell by cell as the 003 card prints it."""
    response = sheet_page(client, world.player, world.sheet)
    assert "Test AT/HMG Loghouse" in text_of(response, "sheet-title")
    head = page(response).find_all("header", cls="sheet-head")[0].text()
    assert "Bunker" in head and "DM: +0" in head and "No Points" in head
    assert text_of(response, "sheet-crew") == "12 men, including 1 NCO"
    assert table_rows(response, "sheet-locations") == [
        ["Walls", "1-8 75 AV", "1-10 75 AV", "1-8 50 AV"],
        ["Entrance", "–", "–", "9-10 25 AV"],
        ["Vision", "9-10 10 AV", "–", "–"],
        ["Top", "25 AV"],
    ]
    assert table_rows(response, "sheet-weapons") == [
        ["3", "45mm", "Main Gun", '48"', "1", "1", "-1", "-1", "–"],
        ["3", "Maxim", "Infantry", '60"', "4", "8", "-3", "-3", "No Acq."],
    ]
    assert text_of(response, "sheet-features") == "Basic Sights"
    assert "Main gun penetration: 45mm" in page(response).text()
    cells = [li.text() for li in page(response).find("sheet-penetration").find_all("li")]
    assert cells == ["<2 12", "2 24", "3 36", "4 48", "5 60", "6 72", "7 84", "8 96", "9 108", "10+ 120"]


@pytest.fixture
def library(db):
    """The real library as the fixture ships it, and a signed-in reader (any account reads it)."""
    if not LIBRARY.exists():
        pytest.skip("the library fixture is not there yet")
    call_command("loaddata", str(LIBRARY), verbosity=0)
    return user("reader")


def test_every_library_sheet_page_matches_its_fixture(client, library):
    """Every sheet of the library renders, and every value it holds is in the right cell."""
    sheets = list(BunkerSheet.objects.filter(club__isnull=True))
    assert len(sheets) >= 9
    for sheet in sheets:
        response = sheet_page(client, library, sheet)
        assert sheet.name in text_of(response, "sheet-title")
        dm = f"+{sheet.dm}" if sheet.dm >= 0 else str(sheet.dm)
        assert f"DM: {dm}" in page(response).text()
        crew = text_of(response, "sheet-crew")
        assert crew.startswith(f"{sheet.crew_total} men")
        for rank in sheet.leaders:
            assert rank in crew, (sheet.name, rank)

        rows = {row[0]: row[1:] for row in table_rows(response, "sheet-locations")}
        for column, facing in enumerate(("front", "side", "rear")):
            for entry in sheet.locations.get(facing, []):
                cell = rows[entry["location"]][column]
                low, high = entry["d10_from"], entry["d10_to"]
                assert cell.startswith(str(low) if low == high else f"{low}-{high}"), (sheet.name, facing, cell)
                if entry["av"] is not None:
                    assert cell.endswith(f"{entry['av']} AV"), (sheet.name, facing, cell)
        top = sheet.locations.get("top", {}).get("av")
        assert rows["Top"] == [f"{top} AV" if top is not None else "–"]

        if sheet.weapons:
            weapons = table_rows(response, "sheet-weapons")
            assert len(weapons) == len(sheet.weapons)
            for row, weapon in zip(weapons, sheet.weapons):
                assert row[1] == weapon["name"], sheet.name
                for value, cell in zip([weapon["rof"], weapon["ap"]], row[4:6]):
                    assert cell == (str(value) if value is not None else "–"), (sheet.name, row)
                if weapon["range"] is not None:
                    assert row[3] == f'{weapon["range"]}"'
        for feature in sheet.features:
            assert feature in text_of(response, "sheet-features")
        if sheet.penetration_row:
            cells = [li.find_all("span", cls="pen-value")[0].text()
                     for li in page(response).find("sheet-penetration").find_all("li")]
            assert cells == [str(v) for v in sheet.penetration_row], sheet.name


def test_the_fort_card_reads_like_the_seed(client, library):
    response = sheet_page(client, library, BunkerSheet.objects.get(slug="german-concrete-blockhouse"))
    head = page(response).find_all("header", cls="sheet-head")[0].text()
    assert "Fort, Including Indirect Fire" in head and "DM: -3" in head
    assert text_of(response, "sheet-crew") == "24 men, including 1 Sr NCO (Platoon Sergeant)"
    assert table_rows(response, "sheet-locations") == [
        ["Walls", "1-9 250 AV", "1-10 200 AV", "1-9 175 AV"],
        ["Entrance", "–", "–", "10 75 AV"],
        ["Vision", "10 40 AV", "–", "–"],
        ["Top", "75 AV"],
    ]
    assert table_rows(response, "sheet-weapons") == [
        ["6", "10.5cm", "FG", '24"', "1", "4", "-3", "+2", "Indirect"],
        ["6", "10.5cm", "FG", '24"', "1", "4", "-3", "+2", "Indirect"],
    ]
    assert text_of(response, "sheet-features") == "Advanced Sights Radio"


def test_blank_sheet_renders_dashes(client, world):
    blank = BunkerSheet.objects.create(
        slug="blank-t", name="Blank card", is_blank=True,
        locations={"front": [{"location": "Walls", "d10_from": 1, "d10_to": 8, "av": None}], "top": {"av": None}},
    )
    response = sheet_page(client, world.player, blank)
    assert table_rows(response, "sheet-locations") == [["Walls", "1-8 –", "–", "–"], ["Top", "–"]]
    assert "No weapons filled in." in body(response) and "No penetration row." in body(response)


def test_sheet_list_shows_the_library_and_my_clubs_sheets(client, world):
    response = signed_in(client, world.player).get(reverse("sheet_list"))
    assert response.status_code == 200
    assert_csp_clean(response)
    html = body(response)
    assert "Test AT/HMG Loghouse" in html and reverse("sheet", args=[world.sheet.pk]) in html
    assert "Home Guard" in html and "Our Pillbox" in html
    assert "Their Secret Pillbox" not in html and "Rival Legion" not in html

    html = body(signed_in(client, world.outsider).get(reverse("sheet_list")))
    assert "Their Secret Pillbox" in html and "Test AT/HMG Loghouse" in html and "Our Pillbox" not in html


def test_sheet_access(client, world):
    assert signed_in(client, world.outsider).get(reverse("sheet", args=[world.sheet.pk])).status_code == 200
    assert client.get(reverse("sheet", args=[world.club_sheet.pk])).status_code == 404
    assert signed_in(client, world.player).get(reverse("sheet", args=[world.other_sheet.pk])).status_code == 404
    client.logout()
    assert client.get(reverse("sheet", args=[world.sheet.pk])).status_code == 302
    assert client.get(reverse("sheet_list")).status_code == 302
    assert Structure.objects.filter(sheet=world.sheet).exists()
