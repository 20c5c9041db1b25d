"""The whole-campaign file, "redoubt.campaign": export → import → export gives the same bytes, the
imported logs still verify, the imported campaign carries on (reopen, next session) exactly like the
original; a bad file lists every error with its path and saves nothing; the download and the import
page, and who may use them."""

import copy
import json
from unittest import mock

import pytest
from django.core.exceptions import PermissionDenied
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import call_command
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext
from django.urls import reverse
from django.utils.text import slugify
from django.db.models import Q

from apps.armies.models import Army, Unit
from apps.battles import services as battles
from apps.battles.log import first_broken_entry
from apps.battles.models import Battle, LogEntry
from apps.campaigns import export, services, session_views
from apps.campaigns.export import (BYTES_PER_ENTRY, WARN_FROM, campaign_text, export_campaign, import_campaign,
                                   max_bytes)
from apps.campaigns.formats import export_scenario
from apps.campaigns.models import Campaign, Club, Membership, Role, Scenario
from apps.structures.formats import FormatErrors
from apps.structures.models import BunkerSheet, Structure
from tests.campaigns.test_campaign_page import demo, demo_data, signed  # noqa: F401
from tests.campaigns.test_pages import body, fast_passwords  # noqa: F401
from tests.campaigns.test_pages import page as tree

ROWS = (Campaign, Scenario, Battle, Structure, Army, Unit, LogEntry, BunkerSheet)


def counts():
    return [model.objects.count() for model in ROWS]


def fresh_club(demo, slug="new-host"):
    """The club on its new host, its players joined again."""
    club = Club.objects.create(name="The new host", slug=slug)
    Membership.objects.create(club=club, user=demo.organiser, role=Role.ORGANISER)
    for player in (demo.alice, demo.bob):
        Membership.objects.create(club=club, user=player, role=Role.PLAYER)
    # permissions.role_in keeps the user's roles on the user object, as for one request.
    demo.organiser.__dict__.pop("_redoubt_roles", None)
    return club


def history(demo):
    """Three sessions of the demo campaign, through the services: session 1 played on (one action
    undone, one double-submitted), a section born in it, finished; session 2 finished; session 3
    in progress with a LaserGrenadiers-style sequence naming its units."""
    one = demo.session1
    ids = demo.ids(one)
    org = demo.organiser
    battles.perform(battle_id=one.pk, user=demo.alice, action="ba_he", attacker=ids.u["A", "Field gun team"],
                    inputs={"weapon": ids.w["he-2d6"], "structure": ids.s["Brick townhouse"],
                            "target": ids.u["B", "Grenadier Squad 2"], "hit": "yes"}, dice_values=["1", "1"])
    battles.undo_last(battle_id=one.pk, user=demo.alice)
    for _ in range(2):
        battles.perform(battle_id=one.pk, user=demo.bob, action="ba_he", attacker=ids.u["B", "Tiger I"],
                        inputs={"weapon": ids.w["he-2d6"], "structure": ids.s["Soviet AT/HMG Loghouse"],
                                "target": ids.u["A", "Anti-tank gun team"], "hit": "no"},
                        client_token="3f0c5c1e-0000-4000-8000-000000000001")
    army = Army.objects.get(battle=one, side="A")
    Unit.objects.create(army=army, name="Scout section", models_start=4, models_left=3, x=31, y=7)
    Structure.objects.filter(battle=one, name="Thatched barn").update(collapsed=True, fire_size=None)
    services.finish_battle(battle_id=one.pk, user=org, winner="A", result="The barn is gone")
    two = services.start_session(campaign_id=demo.campaign.pk, user=org, name="Second push", weather="mist")
    battles.start(battle_id=two.pk, user=org)
    Structure.objects.filter(battle=two, name="Church tower").update(damage_taken=9)
    services.finish_battle(battle_id=two.pk, user=org, winner="B")
    three = services.start_session(campaign_id=demo.campaign.pk, user=org)
    battles.start(battle_id=three.pk, user=org)
    units = [f"u{pk}" for pk in Unit.objects.filter(army__battle=three).order_by("pk").values_list("pk", flat=True)]
    Battle.objects.filter(pk=three.pk).update(sequence={
        "sides": ["A", "B"], "initiative": "A", "rolled": True, "pass_streak": 1, "activated": units[:2],
        "pending_morale": units[-1:], "events": [], "team": units[1:2]})
    return one, two, three


def export_text(campaign):
    return campaign_text(export_campaign(campaign))


def imported(demo, text, club=None):
    return import_campaign(json.loads(text), club=club or fresh_club(demo), user=demo.organiser)


# ---------------------------------------------------------------------------------- round trip

def test_export_import_export_is_byte_identical(demo):
    history(demo)
    first = export_text(demo.campaign)
    copy_ = imported(demo, first)
    assert copy_.pk != demo.campaign.pk and copy_.import_warnings == []
    assert export_text(copy_) == first
    # …and once more from the copy, into yet another club.
    assert export_text(imported(demo, first, fresh_club(demo, "third-host"))) == first


def test_a_bunker_crew_and_the_men_who_walked_out_of_it_go_through_export_and_import(demo):
    """Disposable Heroes (the demo's "Winter Line"): the Soviet Rifle Pit's crew after session 1, its
    losses, pin and penetrating hit, and the four men who walked out as a section."""
    winter = Campaign.objects.get(name="Winter Line")
    one = winter.battles.get(session_number=1)
    battles.start(battle_id=one.pk, user=demo.olga)
    Structure.objects.filter(battle=one, name="Soviet Rifle Pit").update(
        crew_men=3, crew_left=4, crew_pins=1, crew_penetrating_hits=1)
    Unit.objects.create(army=Army.objects.get(battle=one, side="A"), name="Soviet Rifle Pit crew 1", models_start=4,
                        models_left=4, x=30, y=11)
    services.finish_battle(battle_id=one.pk, user=demo.olga, winner="A")
    first = export_text(winter)
    club = Club.objects.create(name="Olga's new host", slug="olgas-new-host")
    Membership.objects.create(club=club, user=demo.olga, role=Role.ORGANISER)
    demo.olga.__dict__.pop("_redoubt_roles", None)
    copy_ = import_campaign(json.loads(first), club=club, user=demo.olga)
    pit = Structure.objects.get(campaign=copy_, name="Soviet Rifle Pit")
    assert (pit.crew_side, pit.crew_men, pit.crew_left, pit.crew_pins, pit.crew_penetrating_hits) == ("A", 3, 4, 1, 1)
    assert Unit.objects.filter(army__campaign=copy_, name="Soviet Rifle Pit crew 1").exists()
    assert export_text(copy_) == first


def thin_line(demo):
    """A Disposable Heroes campaign on "Farm by the ford" with its rifle pit manned by 5 of the sheet's 9
    men; in session 1 one of them falls."""
    scenario = Scenario.objects.get(name="Farm by the ford")
    Structure.objects.filter(scenario=scenario, name="Soviet Rifle Pit").update(crew_men=5)  # as the builder saves it
    campaign = services.start_campaign(scenario_id=scenario.pk, user=demo.olga, name="Thin line")
    one = campaign.battles.get(session_number=1)
    battles.start(battle_id=one.pk, user=demo.olga)
    pit = Structure.objects.get(battle=one, name="Soviet Rifle Pit")
    battles.perform(battle_id=one.pk, user=demo.olga, action="dh_crew_casualties",
                    inputs={"structure": f"s{pit.pk}", "casualties": "1", "guts_passed": "yes"})
    services.finish_battle(battle_id=one.pk, user=demo.olga, winner="A")
    return campaign


def olgas_new_host(demo, slug="olgas-new-host"):
    club = Club.objects.create(name=f"Olga's {slug}", slug=slug)
    Membership.objects.create(club=club, user=demo.olga, role=Role.ORGANISER)
    demo.olga.__dict__.pop("_redoubt_roles", None)
    return club


def pit_starts(campaign):
    """The crew the pit started the campaign with, as the campaign and each session keep it."""
    return sorted(Structure.objects.filter(Q(campaign=campaign) | Q(battle__campaign=campaign),
                                           name="Soviet Rifle Pit").values_list("battle_id", "crew_start"),
                  key=lambda row: row[0] or 0)


def test_the_crew_a_bunker_started_the_campaign_with_goes_through_export_and_import(demo):
    """A bunker manned below its sheet: the file says what its crew started with, so the new host's
    tally counts one man lost, not the five the sheet's nine would make it."""
    campaign = thin_line(demo)
    first = export_text(campaign)
    doc = json.loads(first)
    pit = [s["name"] for s in doc["structures"]].index("Soviet Rifle Pit")
    assert (doc["structures"][pit]["crew_men"], doc["structures"][pit]["crew_start"]) == (4, 5)
    assert doc["battles"][0]["structures"][pit]["crew_start"] == 5
    copy_ = import_campaign(json.loads(first), club=olgas_new_host(demo), user=demo.olga)
    assert [start for _, start in pit_starts(copy_)] == [5, 5]
    assert export_text(copy_) == first


def test_a_campaign_file_from_before_crew_starts_still_imports(demo):
    """Files written before the app kept a crew's start have none: a campaign's bunker then starts
    with its sheet's crew (what the tally assumed when the file was written), a session's copy with
    the start of the campaign structure it came from."""
    doc = json.loads(export_text(thin_line(demo)))
    for battle in doc["battles"]:
        for s in battle["structures"]:
            s.pop("crew_start", None)
    copy_ = import_campaign(copy.deepcopy(doc), club=olgas_new_host(demo), user=demo.olga)
    assert copy_.import_warnings == [] and [start for _, start in pit_starts(copy_)] == [5, 5]
    for s in doc["structures"]:
        s.pop("crew_start", None)
    copy_ = import_campaign(doc, club=olgas_new_host(demo, "third-host"), user=demo.olga)
    assert copy_.import_warnings == [] and [start for _, start in pit_starts(copy_)] == [9, 9]


def test_a_campaign_file_keeps_a_crew_the_builder_would_refuse_now(demo):
    """A scenario file is refused a bunker crew of neither side or above its sheet (the builder's rule);
    a campaign's file is not: its scenarios and ground were played as they stood (the builder gave a
    bunker its sheet's crew for neither side until it asked), and a club's backup must import."""
    scenario = Scenario.objects.get(name="Farm by the ford")
    campaign = services.start_campaign(scenario_id=scenario.pk, user=demo.olga, name="Nobody's pit")
    # as campaigns started before a bunker crew of neither side was refused at the start
    Structure.objects.filter(Q(scenario=scenario) | Q(campaign=campaign) | Q(battle__campaign=campaign),
                             name="Soviet Rifle Pit").update(crew_side="")
    doc = json.loads(export_text(campaign))
    pit = [s["name"] for s in doc["structures"]].index("Soviet Rifle Pit")
    doc["structures"][pit].update(crew_men=10, crew_start=10)  # as an older builder let a designer man it
    # the club's scenario as it was when the file was written, carried beside its campaign
    doc["scenarios"] = [export_scenario(scenario)]
    farm_pit = [s["name"] for s in doc["scenarios"][0]["structures"]].index("Soviet Rifle Pit")
    doc["scenarios"][0]["structures"][farm_pit]["crew_men"] = 10
    assert doc["structures"][pit]["crew_side"] == doc["scenarios"][0]["structures"][farm_pit]["crew_side"] == ""
    copy_ = import_campaign(doc, club=olgas_new_host(demo), user=demo.olga)
    assert copy_.import_warnings == []
    held = Structure.objects.get(campaign=copy_, name="Soviet Rifle Pit")
    assert (held.crew_side, held.crew_men) == ("", 10)
    assert Structure.objects.get(scenario__in=copy_.club.scenarios.all(), name="Soviet Rifle Pit").crew_side == ""


def test_a_campaign_with_no_session_and_a_unit_where_no_move_puts_it_is_told_to_fix_the_file(client, demo):
    """A club's file imported with its sessions left out (or its only session discarded since) and a tank
    standing on a floor: "Set up the next session" was refused with "put the unit right in the last session's
    battle", and there was none. It says to put it right in the file; done so, the next session starts."""
    doc = export_campaign(demo.campaign)
    doc["battles"] = []
    tiger = next(u for army in doc["armies"] for u in army["units"] if u["name"] == "Tiger I")
    tiger["at"] = {"structure": 0, "floor": 0}  # Brick house at the crossroads, its ground floor
    campaign = import_campaign(doc, club=fresh_club(demo), user=demo.organiser)
    said = ("Set up on the campaign's ground where a battle's Move never puts it: Tiger I in Brick house at the "
            "crossroads (a vehicle stands on the table). The campaign has no session to correct it in: an organiser "
            "downloads it (“Export campaign”), puts it right in the file (the unit's “at”: a point on the table, or "
            "a structure it may hold) and imports that file (“Import a campaign”).")
    before = counts()
    response = signed(client, demo.organiser).post(reverse("campaign_session_start", args=[campaign.pk]),
                                                   {"name": "", "weather": "clear"})
    assert response.status_code == 303
    assert said in " ".join(str(m) for m in list(response.wsgi_request._messages))
    assert counts() == before

    fixed = json.loads(export_text(campaign))
    next(u for army in fixed["armies"] for u in army["units"] if u["name"] == "Tiger I")["at"] = {"x": 50, "y": 40}
    again = import_campaign(fixed, club=campaign.club, user=demo.organiser)
    battle = services.start_session(campaign_id=again.pk, user=demo.organiser)
    assert battle.session_number == 1
    assert Unit.objects.get(army__battle=battle, name="Tiger I").floor_id is None


@pytest.mark.parametrize("value, message", [
    ("five", "must be a whole number, not a string"),
    (3, "is fewer than the 4 men it has: a crew never gains men (3 < 4)"),
])
def test_a_bad_crew_start_is_refused_at_its_path_and_saves_nothing(demo, value, message):
    doc = json.loads(export_text(thin_line(demo)))
    pit = [s["name"] for s in doc["structures"]].index("Soviet Rifle Pit")
    doc["structures"][pit]["crew_start"] = value
    club = olgas_new_host(demo)
    before = counts()
    with pytest.raises(FormatErrors) as caught:
        import_campaign(doc, club=club, user=demo.olga)
    assert caught.value.errors == [(f"structures[{pit}].crew_start", message)]
    assert counts() == before and club.campaigns.count() == 0


def test_a_crew_start_in_a_bolt_action_file_is_left_out_and_says_where(demo):
    history(demo)
    doc = json.loads(export_text(demo.campaign))
    assert not any("crew_start" in s for s in doc["structures"])
    log = [s["name"] for s in doc["structures"]].index("Soviet AT/HMG Loghouse")
    doc["structures"][log]["crew_start"] = 12
    campaign = import_campaign(doc, club=fresh_club(demo), user=demo.organiser)
    assert [w for w in campaign.import_warnings if "crew_start" in w] == [
        f"structures[{log}].crew_start: was left out: a Bolt Action structure has no crew (a sheet's crew is "
        "Disposable Heroes'; units hold a bunker, as they hold a building)"]
    assert Structure.objects.get(campaign=campaign, name="Soviet AT/HMG Loghouse").crew_start == 0


def test_imported_into_a_club_that_has_the_name_its_sessions_take_the_new_name(demo):
    """The club already runs "Operation Crossroads": the copy is "Operation Crossroads (2)", its
    sessions "Operation Crossroads (2) — session 3", and one named otherwise "Second push (2)": no two
    battles on the home page read alike."""
    history(demo)
    copy_ = imported(demo, export_text(demo.campaign), club=demo.campaign.club)
    assert copy_.name == "Operation Crossroads (2)"
    names = sorted(copy_.battles.values_list("name", flat=True))
    assert names == ["Operation Crossroads (2) — session 3", "Second push (2)", "Village crossroads — session 1 (2)"]
    assert not set(names) & set(demo.campaign.battles.values_list("name", flat=True))


def test_the_file_holds_everything_and_names_rows_by_their_place(demo):
    one, two, three = history(demo)
    doc = export_campaign(demo.campaign)
    assert (doc["format"], doc["version"], doc["name"]) == ("redoubt.campaign", 1, "Operation Crossroads")
    assert doc["settings"] == {"fires_persist": False, "single_open_battle": True}
    assert [s["slug"] for s in doc["sheets"]] == ["german-concrete-blockhouse", "soviet-at-hmg-loghouse"]
    assert [s["name"] for s in doc["scenarios"]] == ["Village crossroads"]
    assert doc["scenarios"][0] == export_scenario(one.scenario)
    assert len(doc["structures"]) == 13 and [a["owner"] for a in doc["armies"]] == ["alice", "bob"]
    # The section born in session 1 joined side A's roster.
    assert doc["armies"][0]["units"][-1]["name"] == "Scout section"
    assert [(b["session_number"], b["status"], b["winner"], b["scenario"]) for b in doc["battles"]] == [
        (1, "finished", "A", 0), (2, "finished", "B", None), (3, "in_progress", "", None)]
    first = doc["battles"][0]
    assert first["structures"][0]["origin"] == 0 and first["armies"][0]["origin"] == "A"
    assert first["armies"][0]["units"][0]["origin"] == "A:0"
    assert first["armies"][0]["units"][-1]["origin"] is None
    assert first["campaign_before"]["created_units"] == ["A:5"]
    # What reopening session 1 needs: the barn (structure 10) before it collapsed, every unit's losses.
    barn = first["campaign_before"]["structures"][10]
    assert barn["structure"] == 10 and barn["collapsed"] is False and barn["fire_size"] is None
    assert doc["structures"][10]["name"] == "Thatched barn" and doc["structures"][10]["state"]["collapsed"]
    assert [u["unit"] for u in first["campaign_before"]["units"]] == [f"A:{i}" for i in range(5)] + \
        [f"B:{i}" for i in range(8)]
    assert doc["battles"][2]["sequence"]["activated"] == ["A:0", "A:1"]
    assert doc["battles"][2]["sequence"]["pending_morale"] == ["B:7"]
    assert doc["battles"][2]["sequence"]["team"] == ["A:1"]  # a fireteam that may still fire names units too
    log = first["log"]
    assert [e["seq"] for e in log] == list(range(1, len(log) + 1))
    undo = next(e for e in log if e["action"] == "undo")
    assert log[undo["undoes"] - 1]["undone"] is True
    assert sum(e["client_token"] == "3f0c5c1e-0000-4000-8000-000000000001" for e in log) == 1
    assert log[-1]["entry_hash"] == first["log_head"] and log[1]["prev_hash"] == log[0]["entry_hash"]
    assert (log[0]["actor"], log[2]["actor"]) == ("demo", "alice") and log[0]["created_at"].endswith("+00:00")


def test_imported_logs_verify_and_keep_every_field(demo):
    history(demo)
    copy_ = imported(demo, export_text(demo.campaign))
    for original, twin in zip(demo.campaign.battles.order_by("session_number"), copy_.battles.order_by("session_number")):
        call_command("verify_log", twin.pk, stdout=open("/dev/null", "w"))
        assert first_broken_entry(twin) is None and twin.log_head == original.log_head
        fields = ("seq", "turn", "actor_id", "actor_name", "side", "action", "inputs", "dice", "outcome", "summary",
                  "undo", "undone", "undoes__seq", "client_token", "prev_hash", "entry_hash", "created_at")
        assert list(twin.log_entries.order_by("seq").values(*fields)) == \
            list(original.log_entries.order_by("seq").values(*fields))
        assert (twin.created_at, twin.finished_at, twin.turn, twin.status) == \
            (original.created_at, original.finished_at, original.turn, original.status)
    assert copy_.created_at == demo.campaign.created_at


def test_the_imported_campaign_carries_on_like_the_original(demo):
    one, two, three = history(demo)
    copy_ = imported(demo, export_text(demo.campaign))
    # The open battle's sequence names the imported units.
    twin = copy_.battles.get(session_number=3)
    units = [f"u{pk}" for pk in Unit.objects.filter(army__battle=twin).order_by("pk").values_list("pk", flat=True)]
    assert twin.sequence["activated"] == units[:2] and twin.sequence["pending_morale"] == units[-1:]
    assert twin.sequence["team"] == units[1:2]
    # Finish session 3 in both, then reopen it in both: each campaign is back where it was.
    for campaign in (demo.campaign, copy_):
        battle = campaign.battles.get(session_number=3)
        Structure.objects.filter(battle=battle, name="Timber workshop").update(collapsed=True)
        services.finish_battle(battle_id=battle.pk, user=demo.organiser, winner="D")
    finished = [export_campaign(c) for c in (demo.campaign, copy_)]
    assert finished[0]["structures"] == finished[1]["structures"] and finished[0]["armies"] == finished[1]["armies"]
    assert finished[0]["structures"][12]["state"] == {"collapsed": True}
    for campaign in (demo.campaign, copy_):
        services.reopen_last(campaign_id=campaign.pk, user=demo.organiser)
        services.finish_battle(battle_id=campaign.battles.get(session_number=3).pk, user=demo.organiser, winner="A")
        services.reopen_last(campaign_id=campaign.pk, user=demo.organiser)
    reopened = [export_campaign(c) for c in (demo.campaign, copy_)]
    for key in ("structures", "armies"):
        assert reopened[0][key] == reopened[1][key]
    # The next session starts from the imported ground and rosters, copied with their origins.
    services.finish_battle(battle_id=copy_.battles.get(session_number=3).pk, user=demo.organiser, winner="A")
    four = services.start_session(campaign_id=copy_.pk, user=demo.organiser)
    assert four.session_number == 4
    assert Structure.objects.filter(battle=four, origin__campaign=copy_).count() == 13


def test_users_are_matched_by_name_and_missing_ones_leave_the_name_in_the_log(demo):
    history(demo)
    doc = json.loads(export_text(demo.campaign))
    for army in doc["armies"] + doc["battles"][0]["armies"]:
        if army["owner"] == "bob":
            army["owner"] = "robert"
        elif army["owner"] == "alice":
            army["owner"] = "olga"  # an account here, but not of this club: a name alone links no stranger
    for entry in doc["battles"][0]["log"]:
        if entry["actor"] == "bob":
            entry["actor"] = "robert"
    copy_ = import_campaign(doc, club=fresh_club(demo), user=demo.organiser)
    assert dict(copy_.armies.values_list("side", "owner__username")) == {"A": None, "B": None}
    assert any(w.startswith("Not members of The new host, so not linked: olga, robert.") for w in copy_.import_warnings)
    one = copy_.battles.get(session_number=1)
    robert = one.log_entries.filter(actor_name="bob")
    assert robert.exists() and not robert.filter(actor__isnull=False).exists()
    assert one.log_entries.filter(actor__username="alice").exists()
    assert first_broken_entry(one) is None


def test_an_identical_scenario_and_the_library_sheets_are_reused(demo):
    history(demo)
    text = export_text(demo.campaign)
    sheets, scenarios = BunkerSheet.objects.count(), Scenario.objects.count()
    copy_ = imported(demo, text, club=demo.campaign.club)
    assert copy_.name == "Operation Crossroads (2)" and copy_.club_id == demo.campaign.club_id
    assert (BunkerSheet.objects.count(), Scenario.objects.count()) == (sheets, scenarios)
    assert copy_.battles.get(session_number=1).scenario == demo.session1.scenario


def test_a_log_that_no_longer_matches_its_hashes_is_imported_as_it_is_and_reported(demo):
    history(demo)
    doc = json.loads(export_text(demo.campaign))
    doc["battles"][0]["log"][2]["summary"] = "Nothing happened, honestly"
    copy_ = import_campaign(doc, club=fresh_club(demo), user=demo.organiser)
    assert copy_.import_warnings == [
        "Village crossroads — session 1: entry #3 was changed after it was written (hash differs); "
        "verify_log reports it too"]
    seq, _ = first_broken_entry(copy_.battles.get(session_number=1))
    assert seq == 3


# ---------------------------------------------------------------------------------- bad files

def test_a_bad_file_lists_every_error_with_its_path_and_saves_nothing(demo):
    history(demo)
    doc = json.loads(export_text(demo.campaign))
    bad = copy.deepcopy(doc)
    bad["name"] = ""
    bad["settings"]["fires_persist"] = "yes"
    bad["sheets"][0]["kind"] = "castle"
    bad["scenarios"][0]["table"]["width"] = -1
    bad["structures"][1]["wall_material"] = "unobtainium"
    bad["structures"][2]["x"] = -99999
    bad["armies"][0]["units"][0]["weapons"][0]["weapon"] = "laser"
    bad["armies"][1]["owner"] = 7
    one = bad["battles"][0]
    one["status"] = "paused"
    one["structures"][0]["origin"] = 99
    one["armies"][0]["units"][0]["origin"] = "Z:9"
    one["campaign_before"]["units"][0]["unit"] = "A:99"
    one["log"][1]["seq"] = 7
    one["log"][2]["entry_hash"] = "not a hash"
    one["log"][3]["created_at"] = "yesterday"
    bad["battles"][1]["session_number"] = 1
    bad["battles"][2]["sequence"]["activated"] = ["B:77"]
    bad["battles"][2]["finished_at"] = None
    bad["battles"][2]["status"] = "finished"
    before = counts()
    with pytest.raises(FormatErrors) as caught:
        import_campaign(bad, club=fresh_club(demo), user=demo.organiser)
    paths = [path for path, _ in caught.value.errors]
    for path in ("name", "settings.fires_persist", "sheets[0].kind", "scenarios[0].table.width",
                 "structures[1].wall_material", "armies[0].units[0].weapons[0].weapon", "armies[1].owner",
                 "battles[0].status", "battles[0].structures[0].origin", "battles[0].armies[0].units[0].origin",
                 "battles[0].campaign_before.units[0].unit", "battles[0].log[1].seq", "battles[0].log[2].entry_hash",
                 "battles[0].log[3].created_at", "battles[1].session_number", "battles[2].sequence.activated[0]",
                 "battles[2].finished_at"):
        assert path in paths, (path, caught.value.errors)
    # Each message says which bound was crossed: below zero is not "too large".
    assert dict(caught.value.errors)["structures[2].x"] == "must be at least 0 (it is -99999)"
    assert counts() == before
    assert Club.objects.get(slug="new-host").campaigns.count() == 0


def test_what_a_log_entry_carries_freely_is_checked_to_the_key(demo):
    """Inputs, dice, outcome and undo data are free-form JSON: whatever the database cannot store is
    named by its path (they are first checked without paths, as a long campaign's log is large)."""
    history(demo)
    bad = json.loads(export_text(demo.campaign))
    log = bad["battles"][0]["log"]
    deep = 1
    for _ in range(40):
        deep = [deep]
    log[0]["inputs"]["note"] = "a\x00b"
    log[1]["inputs"]["odd key"] = {"x": "\ud800"}
    log[2]["outcome"]["n"] = 1e308
    log[3]["dice"] = [deep]
    log[5]["dice"] = [{"sides": 6, "count": 1, "faces": [1]}] * 2_001  # every page showing it draws each
    # As deep as allowed, a leaf still counts as a level: 32 lists and no more.
    just = 1
    for _ in range(31):
        just = [just]
    log[4]["inputs"]["fine"] = just
    with pytest.raises(FormatErrors) as caught:
        import_campaign(bad, club=fresh_club(demo), user=demo.organiser)
    errors = dict(caught.value.errors)
    assert errors["battles[0].log[0].inputs.note"] == "must not contain a NUL character"
    assert errors['battles[0].log[1].inputs["odd key"].x'] == "contains a character that is not valid Unicode"
    assert errors["battles[0].log[2].outcome.n"] == "is too large"
    assert any(path.startswith("battles[0].log[3].dice[0]") and message.startswith("is nested too deeply")
               for path, message in caught.value.errors)
    assert not any(path.startswith("battles[0].log[4]") for path in errors)
    assert errors["battles[0].log[5].dice"] == "holds 2,001 rolls; an entry has at most 2,000"


def test_a_bolt_action_campaign_file_giving_a_bunker_a_crew_is_imported_without_it_and_says_where(demo):
    """Sheet crews are Disposable Heroes': a Bolt Action file that gives its loghouse one, in the
    campaign's ground, in a session or in what reopening a session restores (as every file this app
    wrote before Bolt Action bunkers lost their crews did), is imported with the crews left out, and
    the importer is told where."""
    history(demo)
    doc = json.loads(export_text(demo.campaign))
    names = [s["name"] for s in doc["structures"]]
    log = names.index("Soviet AT/HMG Loghouse")
    doc["structures"][log].update(crew_side="A", crew_men=12)
    one = doc["battles"][0]
    battle_log = [s["origin"] for s in one["structures"]].index(log)
    one["structures"][battle_log]["state"] = {"crew_routed": True}
    one["campaign_before"]["structures"].append({"structure": log, "crew_men": 12, "crew_pins": 0})
    doc["scenarios"][0]["structures"][log]["crew_men"] = 12
    campaign = import_campaign(doc, club=fresh_club(demo), user=demo.organiser)
    left_out = [w.split(":")[0] for w in campaign.import_warnings if "its crew was left out" in w]
    assert left_out == [f"scenarios[0].structures[{log}]", f"structures[{log}]",
                        f"battles[0].structures[{battle_log}]",
                        f"battles[0].campaign_before.structures[{len(one['campaign_before']['structures']) - 1}]"]
    rows = Structure.objects.filter(Q(campaign=campaign) | Q(battle__campaign=campaign), sheet__isnull=False)
    assert rows.exists() and not rows.exclude(crew_side="", crew_men=0, crew_routed=False).exists()
    reopened = Battle.objects.get(campaign=campaign, session_number=1).campaign_before["structures"]
    assert all(not v.get("crew_men") for v in reopened.values())


def test_an_army_on_a_bad_side_is_reported_once_not_again_at_every_reference_to_its_units(demo):
    history(demo)
    doc = json.loads(export_text(demo.campaign))
    bad = copy.deepcopy(doc)
    bad["armies"][0]["side"] = "C"  # side A's army: the battles' units still name their origins "A:n"
    with pytest.raises(FormatErrors) as caught:
        import_campaign(bad, club=fresh_club(demo), user=demo.organiser)
    assert caught.value.errors == [("armies[0].side", 'must be one of "A", "B", not "C"')]
    # A reference to a side no army has is still an error when every army's side was fine.
    bad = copy.deepcopy(doc)
    bad["battles"][0]["armies"][0]["units"][0]["origin"] = "C:0"
    bad["battles"][1]["armies"][0]["origin"] = ["A"]
    with pytest.raises(FormatErrors) as caught:
        import_campaign(bad, club=fresh_club(demo, slug="second-host"), user=demo.organiser)
    assert [path for path, _ in caught.value.errors] == ["battles[0].armies[0].units[0].origin",
                                                         "battles[1].armies[0].origin"]


@pytest.mark.parametrize("data, path, message", [
    ([], "document", 'must be a JSON object with "format": "redoubt.campaign", not an array'),
    ({"format": "redoubt.scenario", "version": 1}, "format",
     'must be "redoubt.campaign" (this is a "redoubt.scenario" file)'),
    ({"format": "redoubt.campaign", "version": 2}, "version", "is 2; this Redoubt reads version 1 of redoubt.campaign"),
    ({"format": "redoubt.campaign", "version": 1, "name": "X", "rules": {"ruleset": "ba"}, "colour": "red"},
     "colour", "is not a field here"),
])
def test_the_envelope_is_checked_first(demo, data, path, message):
    with pytest.raises(FormatErrors) as caught:
        import_campaign(data, club=fresh_club(demo), user=demo.organiser)
    assert caught.value.errors[0][0] == path and caught.value.errors[0][1].startswith(message)


def test_only_an_organiser_of_the_club_imports_into_it(demo):
    text = export_text(demo.campaign)
    for user in (demo.alice, demo.dora, demo.olga):
        with pytest.raises(PermissionDenied):
            import_campaign(json.loads(text), club=demo.campaign.club, user=user)


# ---------------------------------------------------------------------------------- the pages

def test_members_download_the_campaign_file(client, demo):
    history(demo)
    response = signed(client, demo.alice).get(reverse("campaign_export", args=[demo.campaign.pk]))
    assert response.status_code == 200 and response["Content-Type"] == "application/json; charset=utf-8"
    assert response["Content-Disposition"] == \
        f'attachment; filename="{slugify(demo.campaign.name)}-{demo.campaign.pk}.redoubt-campaign.json"'
    assert response.getvalue().decode() == export_text(demo.campaign)


def test_the_import_page_imports_into_a_club_the_user_organises(client, demo):
    history(demo)
    club = fresh_club(demo)
    signed(client, demo.organiser)
    page = body(client.get(reverse("campaign_import")))
    assert "The new host" in page and "Redoubt Demo Club" in page and "Olga" not in page
    upload = SimpleUploadedFile("crossroads.json", export_text(demo.campaign).encode(), "application/json")
    response = client.post(reverse("campaign_import"), {"club": club.pk, "file": upload})
    copy_ = club.campaigns.get()
    assert response.status_code == 303 and response["Location"] == reverse("campaign", args=[copy_.pk])
    html = body(client.get(response["Location"]))
    assert "Imported the campaign Operation Crossroads into The new host." in html
    assert copy_.battles.count() == 3


def test_the_download_is_sent_in_pieces_the_same_bytes_as_the_whole_file_and_imports_back(client, demo, monkeypatch):
    """The download writes the file as it is sent (a 30,000-entry log, built as one dict, took a worker
    500 MB): byte for byte what `campaign_text(export_campaign(…))` writes whole, with pieces and log
    chunks ending inside every session's log here. Its import verifies, and downloads again the same."""
    history(demo)
    monkeypatch.setattr(export, "PIECE", 1500)
    monkeypatch.setattr(export, "LOG_CHUNK", 2)
    response = signed(client, demo.alice).get(reverse("campaign_export", args=[demo.campaign.pk]))
    assert response.status_code == 200 and response.streaming
    pieces = list(response.streaming_content)
    file = b"".join(pieces)
    assert len(pieces) > 4 and file.decode() == export_text(demo.campaign)
    copy_ = imported(demo, file.decode())
    assert [first_broken_entry(b) for b in copy_.battles.all()] == [None, None, None]
    assert signed(client, demo.organiser).get(reverse("campaign_export", args=[copy_.pk])).getvalue() == file


def test_a_campaign_without_sessions_downloads_as_the_whole_file_writes_it(client, demo):
    bare = Campaign.objects.create(club=demo.campaign.club, name="Not started", ruleset="ba")
    file = signed(client, demo.alice).get(reverse("campaign_export", args=[bare.pk])).getvalue().decode()
    assert file == export_text(bare) and json.loads(file)["battles"] == []


def longer_log(battle, user, entries):
    """`entries` more entries at the end of the battle's log (not chained: only their number matters)."""
    last = battle.log_entries.order_by("-seq").first()
    LogEntry.objects.bulk_create([
        LogEntry(battle=battle, seq=last.seq + n, turn=last.turn, actor=user, actor_name=user.username, side="A",
                 action="move", inputs={"unit": "u1", "x": "8"}, summary=f"Entry {n}", undo={"units": {}})
        for n in range(1, entries + 1)])


def test_the_downloads_queries_do_not_grow_with_the_log(client, demo, monkeypatch):
    """The rule: a download makes the same queries whatever its logs' length. Every battle's log is one
    SELECT, read LOG_CHUNK rows at a time: on PostgreSQL a server-side cursor's FETCHes, which are not
    statements of their own (Django's log, counted here, holds the cursor's one query), on SQLite
    fetches from the one cursor. The chunks cost round trips (entries / LOG_CHUNK), never queries."""
    history(demo)
    monkeypatch.setattr(export, "LOG_CHUNK", 100)
    signed(client, demo.alice)
    url = reverse("campaign_export", args=[demo.campaign.pk])
    client.get(url).getvalue()  # the first request after signing in may touch the session differently

    def download():
        with CaptureQueriesContext(connection) as queries:
            file = json.loads(client.get(url).getvalue())
        return len(queries), sum(len(b["log"]) for b in file["battles"])

    few, entries = download()
    longer_log(demo.session1, demo.alice, 3000)
    assert download() == (few, entries + 3000)


def test_another_clubs_member_is_refused_before_the_file_is_begun(client, demo, monkeypatch):
    """404, not a 200 whose body then fails: the file is not started, its log not read."""
    begun = []
    monkeypatch.setattr(session_views, "campaign_file", lambda **kw: begun.append(kw) or iter([b"{}"]))
    url = reverse("campaign_export", args=[demo.campaign.pk])
    with CaptureQueriesContext(connection) as queries:
        response = signed(client, demo.olga).get(url)
    assert response.status_code == 404 and not response.streaming and begun == []
    assert not [q for q in queries.captured_queries if LogEntry._meta.db_table in q["sql"]]
    assert Client().get(url).status_code == 302 and begun == []  # signed out: to the sign-in page
    # The view does call what was replaced: a member's download begins it.
    assert signed(client, demo.alice).get(url).getvalue() == b"{}"
    assert begun == [{"campaign_id": demo.campaign.pk}]


def test_the_import_page_lists_every_error_and_saves_nothing(client, demo):
    doc = export_campaign(demo.campaign)
    doc["structures"][0]["x"] = "left"
    doc["battles"][0]["log"][0]["undone"] = "maybe"
    before = counts()
    response = signed(client, demo.organiser).post(reverse("campaign_import"), {
        "club": demo.campaign.club_id, "text": json.dumps(doc)})
    assert response.status_code == 400
    html = body(response)
    assert "Nothing was imported: 2 problems" in html
    assert "structures[0].x" in html and "battles[0].log[0].undone" in html
    assert counts() == before


# A campaign of 10 sessions of 3,000 log entries each (a session of the demo's 13 units plays 100 to 300),
# and half as many again to spare: the import must take its file.
LONG_CAMPAIGN = 45_000


def played_on(demo, moves):
    """The rifle squad into the timber workshop and out again `moves` times in session 1: a move's undo
    data holds the house's whole state, the commonest entry and one of the larger (1.7 kB in the file)."""
    ids = demo.ids(demo.session1)
    for n in range(moves):
        into = {"structure": ids.s["Timber workshop"], "floor": "1"} if n % 2 == 0 else {"x": str(8 + n % 5), "y": "14"}
        battles.perform(battle_id=demo.session1.pk, user=demo.alice, action="move",
                        inputs={"unit": ids.u["A", "1st Rifle Squad"], **into})


def test_a_long_campaigns_download_is_a_file_the_import_page_takes(client, demo):
    """The import takes files up to CAMPAIGN_FILE_MAX_BYTES, meant for LONG_CAMPAIGN log entries with room
    to spare (docs/formats.md). Written with the other formats' two-space indents, an entry of a unit
    moving in and out of a house (the commonest entry; its undo data holds the house's whole state) took
    3.8 kB, so a club's backup of 13,000 such entries could not be imported on its own host. Now about
    1.7 kB."""
    org = demo.organiser
    url = reverse("campaign_export", args=[demo.campaign.pk])
    before = len(signed(client, org).get(url).getvalue())
    moves = 40
    played_on(demo, moves)
    file = client.get(url).getvalue()
    per_entry = (len(file) - before) / moves
    assert per_entry * LONG_CAMPAIGN <= max_bytes(), f"{per_entry:.0f} bytes an entry"
    # The campaign page's estimate (file_estimate) warns from WARN_FROM of the limit: it must do so before
    # a real file of such entries passes it.
    assert per_entry * WARN_FROM <= BYTES_PER_ENTRY, f"{per_entry:.0f} bytes an entry"
    # The same campaign all the same: it imports, and exports again to the same bytes.
    copy_ = imported(demo, file.decode())
    assert signed(client, org).get(reverse("campaign_export", args=[copy_.pk])).getvalue() == file


def upload_import(client, demo, file, club):
    return signed(client, demo.organiser).post(reverse("campaign_import"), {
        "club": club.pk, "file": SimpleUploadedFile("campaign.json", file, "application/json")})


def test_a_downloaded_file_exactly_at_the_limit_imports(client, demo, settings):
    """The limit is the one setting CAMPAIGN_FILE_MAX_BYTES: a file of exactly that many bytes, as the
    download wrote it, is a whole campaign again. (The 30,000-entry file the download wrote, 51.4 MB,
    was refused by the old 50 MB limit; bench/bench_export.py --import imports it.)"""
    file = signed(client, demo.organiser).get(reverse("campaign_export", args=[demo.campaign.pk])).getvalue()
    settings.CAMPAIGN_FILE_MAX_BYTES = len(file)
    club = fresh_club(demo)
    response = upload_import(client, demo, file, club)
    assert response.status_code == 303, body(response)
    copy_ = Campaign.objects.get(club=club)
    assert response["Location"] == reverse("campaign", args=[copy_.pk])
    assert client.get(reverse("campaign_export", args=[copy_.pk])).getvalue() == file


def test_a_file_one_byte_over_the_limit_is_refused_beside_the_file_field_unread(client, demo, settings):
    file = signed(client, demo.organiser).get(reverse("campaign_export", args=[demo.campaign.pk])).getvalue()
    settings.CAMPAIGN_FILE_MAX_BYTES = len(file) - 1
    before = counts()
    with mock.patch("apps.campaigns.session_views.parse_document") as parse:
        response = upload_import(client, demo, file, demo.campaign.club)
    parse.assert_not_called()
    assert response.status_code == 400
    html = tree(response)
    said = html.find(id="id_file_error").text()
    assert f"This is {len(file):,} bytes; this server imports campaign files of at most {len(file) - 1:,} bytes" \
        in said and "CAMPAIGN_FILE_MAX_BYTES" in said
    assert "at most" not in html.find(id="id_text_error").text()
    assert counts() == before
    # Pasted, the text is measured the same way (without the final newline the field strips), beside it.
    text = file.strip()
    settings.CAMPAIGN_FILE_MAX_BYTES = len(text) - 1
    response = client.post(reverse("campaign_import"), {"club": demo.campaign.club_id, "text": text.decode()})
    assert response.status_code == 400
    assert f"This is {len(text):,} bytes" in tree(response).find(id="id_text_error").text()
    assert counts() == before


def test_a_log_longer_than_a_paste_may_be_still_imports_as_a_file(client, demo, settings):
    """Django refuses form data above DATA_UPLOAD_MAX_MEMORY_SIZE (2.5 MB) before any view runs, about
    1,500 log entries pasted: the page says to choose the file instead. A file is not form data, and one
    above FILE_UPLOAD_MAX_MEMORY_SIZE goes to a temporary file on disk: the upload imports."""
    played_on(demo, 12)
    log = sum(len(json.dumps(e)) for e in export_campaign(demo.campaign)["battles"][0]["log"])
    settings.DATA_UPLOAD_MAX_MEMORY_SIZE = settings.FILE_UPLOAD_MAX_MEMORY_SIZE = log // 2
    file = signed(client, demo.organiser).get(reverse("campaign_export", args=[demo.campaign.pk])).getvalue()
    before = counts()
    response = client.post(reverse("campaign_import"), {"club": demo.campaign.club_id, "text": file.decode()})
    assert response.status_code == 400
    assert "Too much text" in body(response) and "choose it as a file instead of pasting it" in body(response)
    assert counts() == before
    club = fresh_club(demo)
    response = upload_import(client, demo, file, club)
    assert response.status_code == 303, body(response)
    copy_ = Campaign.objects.get(club=club)
    assert client.get(reverse("campaign_export", args=[copy_.pk])).getvalue() == file


def test_the_import_page_is_for_organisers_and_their_clubs_only(client, demo):
    response = signed(client, demo.alice).get(reverse("campaign_import"))
    assert response.status_code == 403 and "Only a club&#x27;s organisers import campaigns" in body(response)
    olgas = demo.olga.clubs.get()
    before = counts()
    response = signed(client, demo.organiser).post(reverse("campaign_import"), {
        "club": olgas.pk, "text": export_text(demo.campaign)})
    assert response.status_code == 400 and "Select a valid choice" in body(response)
    assert counts() == before


def test_importing_a_battle_in_progress_warns_that_its_past_cannot_be_undone_here(demo):
    copy_ = imported(demo, export_text(demo.campaign))
    assert copy_.import_warnings == [
        "Village crossroads — session 1 is still open: what was done in it before the import cannot be undone "
        "here (its log names the old host's rows). Play on, or finish it."]


def test_what_was_played_before_the_import_is_never_undone_here(client, demo):
    """An imported entry's undo data names the old host's rows, and a file can say anything there: a
    forged entry whose undo points at another club's battle changes nothing, there or here. What is
    played after the import undoes as usual."""
    doc = json.loads(export_text(demo.campaign))
    session = next(b for b in doc["battles"] if b["status"] == "in_progress")
    victim = Battle.objects.exclude(club=demo.campaign.club).get()  # olga's club's battle
    last = session["log"][-1]
    session["log"].append({**last, "seq": last["seq"] + 1, "action": "ba_damage", "summary": "Forged", "undoes": None,
                           "undone": False, "client_token": None,
                           "undo": {"structures": {}, "units": {}, "battle": {"id": victim.pk, "turn": 77}}})
    copy_ = imported(demo, json.dumps(doc))
    battle = copy_.battles.get(status="in_progress")
    victim_before = (victim.turn, victim.log_head, victim.log_entries.count())
    before = (battle.turn, battle.log_entries.count())
    with pytest.raises(battles.ActionRefused, match="played before this battle was imported"):
        battles.undo_last(battle_id=battle.pk, user=demo.organiser)
    victim.refresh_from_db()
    battle.refresh_from_db()
    assert (victim.turn, victim.log_head, victim.log_entries.count()) == victim_before
    assert (battle.turn, battle.log_entries.count()) == before
    # The page offers no Undo for it and says why.
    turns = body(signed(client, demo.organiser).get(reverse("battle", args=[battle.pk])))
    assert 'class="undo-form"' not in turns and "was played before this battle was imported" in turns

    ids = demo.ids(battle)
    entry = battles.perform(battle_id=battle.pk, user=demo.organiser, action="ba_he",
                            attacker=ids.u["A", "Field gun team"],
                            inputs={"weapon": ids.w["he-2d6"], "structure": ids.s["Brick townhouse"],
                                    "target": ids.u["B", "Grenadier Squad 2"], "hit": "no"})
    assert battles.undo_last(battle_id=battle.pk, user=demo.organiser).undoes_id == entry.pk
    with pytest.raises(battles.ActionRefused, match="played before this battle was imported"):
        battles.undo_last(battle_id=battle.pk, user=demo.organiser)


def test_markup_anywhere_in_an_imported_file_is_text_on_every_page_that_shows_it(client, demo):
    """A campaign file is whatever its sender wrote: markup and quotes in every name, in the log's
    summaries and actors and in its free-form dice, inputs and outcome (the log's dice are drawn in
    Python, views.rolls_html; the map's pieces too, piece_svg and units_svg). Imported through the
    page, the campaign page, each session's battle page, its log and its spectator page show all of
    it as text."""
    import re

    from django.test import Client

    from apps.battles import watch
    from apps.campaigns.models import SpectatorLink

    evil = '<x-evil a="1">\'"&'

    def poisoned(value):
        if isinstance(value, dict):
            return {k: v + evil if k in ("name", "description", "summary", "actor_name", "result") and
                    isinstance(v, str) else poisoned(v) for k, v in value.items()}
        return [poisoned(v) for v in value] if isinstance(value, list) else value

    history(demo)
    doc = poisoned(json.loads(export_text(demo.campaign)))
    for battle in doc["battles"]:
        for entry in battle["log"]:
            entry["dice"] = [{"sides": evil, "count": 2, "faces": [evil, 3], "value": evil, "target": evil,
                              "source": evil, "purpose": evil}, {"sides": 6, "count": evil, "faces": [[evil]]}]
            entry["inputs"][evil] = evil
            entry["outcome"][evil] = {evil: [evil]}
    club = fresh_club(demo)
    response = signed(client, demo.organiser).post(reverse("campaign_import"), {"club": club.pk, "text": json.dumps(doc)})
    assert response.status_code == 303
    campaign = club.campaigns.get()
    assert campaign.name.endswith(evil) and LogEntry.objects.filter(battle__campaign=campaign, dice__0__sides=evil).exists()
    pages = [client.get(response["Location"])]
    for battle in campaign.battles.all():
        link = SpectatorLink.objects.create(battle=battle, secret=watch.new_link_secret(), created_by=demo.organiser)
        pages += [client.get(reverse("battle", args=[battle.pk])),
                  client.get(reverse("battle_log", args=[battle.pk]), HTTP_HX_REQUEST="true"),
                  Client().get(reverse("spectator", args=[watch.link_token(link)]))]
    for page in pages:
        html = body(page)
        assert page.status_code == 200 and "&lt;x-evil a=&quot;1&quot;&gt;&#x27;&quot;&amp;" in html
        found = re.search("<x-evil", html)
        assert found is None, html[found.start() - 200:found.end() + 50]


def rejoined_in_session_two(demo):
    """Winter Line: the pit's nine walk out in session 1, finished; in session 2 their section is moved
    back into the pit and rejoins the crew, finished."""
    winter = Campaign.objects.get(name="Winter Line")
    one = winter.battles.get(session_number=1)
    battles.start(battle_id=one.pk, user=demo.olga)
    pit = Structure.objects.get(battle=one, name="Soviet Rifle Pit")
    battles.perform(battle_id=one.pk, user=demo.olga, action="dh_leave", inputs={"structure": f"s{pit.pk}"})
    services.finish_battle(battle_id=one.pk, user=demo.olga, winner="A")
    two = services.start_session(campaign_id=winter.pk, user=demo.olga)
    battles.start(battle_id=two.pk, user=demo.olga)
    pit = Structure.objects.get(battle=two, name="Soviet Rifle Pit")
    section = Unit.objects.get(army__battle=two, name="Soviet Rifle Pit crew 1")
    battles.perform(battle_id=two.pk, user=demo.olga, action="move",
                    inputs={"unit": f"u{section.pk}", "structure": f"s{pit.pk}"})
    services.finish_battle(battle_id=two.pk, user=demo.olga, winner="A")
    return winter


def test_a_section_back_in_its_crew_goes_through_export_and_import(demo):
    """The file names the fortification a section walked out of (`crew_of`, its place in the file) and
    says it rejoined; the new host's section is still that pit's, and reopening session 2 there takes
    it out of the crew again, as it would have on the old host."""
    first = export_text(rejoined_in_session_two(demo))
    doc = json.loads(first)
    pit = [s["name"] for s in doc["structures"]].index("Soviet Rifle Pit")
    army = next(a for a in doc["armies"] if a["side"] == "A")
    section = next(u for u in army["units"] if u["name"] == "Soviet Rifle Pit crew 1")
    assert section["crew_of"] == pit and section["state"]["rejoined"] is True
    copy_ = import_campaign(json.loads(first), club=olgas_new_host(demo), user=demo.olga)
    assert export_text(copy_) == first
    ground = Structure.objects.get(campaign=copy_, name="Soviet Rifle Pit")
    row = Unit.objects.get(army__campaign=copy_, name="Soviet Rifle Pit crew 1")
    assert (row.crew_of_id, row.rejoined, ground.crew_men, ground.crew_left) == (ground.pk, True, 9, 0)
    two = copy_.battles.get(session_number=2)
    assert Unit.objects.get(army__battle=two, name="Soviet Rifle Pit crew 1").crew_of.battle_id == two.pk
    services.reopen_last(campaign_id=copy_.pk, user=demo.olga)
    ground.refresh_from_db()
    row.refresh_from_db()
    assert (row.rejoined, ground.crew_men, ground.crew_left) == (False, 0, 9)


def test_a_campaign_file_from_before_sections_rejoined_still_imports(demo):
    """Files written before a section could rejoin its crew name no `crew_of`, no `rejoined` and no
    `rejoined` in `campaign_before`: they import, their sections nobody's crew."""
    doc = json.loads(export_text(rejoined_in_session_two(demo)))
    for ground in [doc, *doc["battles"]]:
        for army in ground["armies"]:
            for unit in army["units"]:
                unit.pop("crew_of", None)
                unit.get("state", {}).pop("rejoined", None)
    for battle in doc["battles"]:
        for unit in (battle.get("campaign_before") or {}).get("units", []):
            unit.pop("rejoined", None)
    copy_ = import_campaign(doc, club=olgas_new_host(demo), user=demo.olga)
    assert copy_.import_warnings == []
    row = Unit.objects.get(army__campaign=copy_, name="Soviet Rifle Pit crew 1")
    assert (row.crew_of_id, row.rejoined) == (None, False)


def test_a_section_naming_a_fortification_the_file_lacks_is_refused_at_its_path(demo):
    doc = json.loads(export_text(rejoined_in_session_two(demo)))
    army = next(a for a in doc["armies"] if a["side"] == "A")
    unit = next(i for i, u in enumerate(army["units"]) if u["name"] == "Soviet Rifle Pit crew 1")
    army["units"][unit]["crew_of"] = 99
    before = counts()
    with pytest.raises(FormatErrors) as refused:
        import_campaign(doc, club=olgas_new_host(demo), user=demo.olga)
    side = doc["armies"].index(army)
    assert any(path == f"armies[{side}].units[{unit}].crew_of" for path, _ in refused.value.errors)
    assert counts() == before


def test_a_campaign_file_keeps_a_weapon_crew_or_rof_of_0_the_sheet_import_refuses(demo):
    """A sheet or scenario file is refused a weapon crew or ROF of 0 (the editor's rule); a campaign file is
    the club's record of what was played with the card as it stood then, and its backup must import."""
    scenario = Scenario.objects.get(name="Farm by the ford")
    campaign = services.start_campaign(scenario_id=scenario.pk, user=demo.olga, name="Zero crews")
    doc = json.loads(export_text(campaign))
    i = next(i for i, s in enumerate(doc["sheets"]) if s["weapons"])
    doc["sheets"][i]["weapons"][0].update(crew=0, rof=0)
    slug = doc["sheets"][i]["slug"]
    copy_ = import_campaign(doc, club=olgas_new_host(demo), user=demo.olga)
    sheet = Structure.objects.filter(campaign=copy_, sheet__isnull=False).get(sheet__weapons__0__crew=0).sheet
    assert (sheet.weapons[0]["crew"], sheet.weapons[0]["rof"]) == (0, 0) and sheet.slug.startswith(slug)


def test_two_sessions_imported_open_still_add_up_when_finished(client, demo):
    """A file with two sessions open at once: each session's setting up (its 'session_start' entry) names
    the old host's rows, so imported, each wrote back its whole end state and the last to finish undid the
    other: the tower took 3 damage at one table and 2 at the other, and had 2. Now 5, as on the old host."""
    from tests.campaigns.test_two_sessions import TOWER, second_table_opened
    one, two = second_table_opened(client, demo)
    tower = Structure.objects.get(campaign=demo.campaign, name=TOWER).damage_taken
    Structure.objects.filter(battle=one, name=TOWER).update(damage_taken=tower + 3)
    Structure.objects.filter(battle=two, name=TOWER).update(damage_taken=tower + 2)
    squad = Unit.objects.get(army__campaign=demo.campaign, name="Grenadier Squad 2").models_left
    for battle, lost in ((one, 3), (two, 2)):
        Unit.objects.filter(army__battle=battle, name="Grenadier Squad 2").update(models_left=squad - lost)
    copy_ = imported(demo, export_text(demo.campaign))
    for battle in copy_.battles.order_by("session_number"):
        services.finish_battle(battle_id=battle.pk, user=demo.organiser, winner="A")
    assert Structure.objects.get(campaign=copy_, name=TOWER).damage_taken == tower + 5
    assert Unit.objects.get(army__campaign=copy_, name="Grenadier Squad 2").models_left == squad - 5
