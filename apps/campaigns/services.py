"""A campaign is a sequence of sessions: each battle starts from the campaign's ground and rosters as
they stand, and finishing it writes its end state back, in one transaction.

The campaign's own rows are its memory; a battle works on copies (`origin` points back), so a
session can be reopened and the campaign restored to exactly what it was before that battle ended.
"""

from copy import deepcopy
import json

from django.core.serializers.json import DjangoJSONEncoder
from django.db import transaction
from django.db.models import F, Max, Q
from django.utils import timezone

from apps.armies.models import Army, Unit, UnitWeapon
from apps.battles.log import append_entry
from apps.battles.models import Battle, BattleStatus
from apps.battles.snapshot import STRUCTURE_WRITE_FIELDS
from apps.campaigns import permissions
from apps.campaigns.copying import copy_battlefield
from apps.campaigns.formats import crews_as_built, vehicles_outside
from apps.campaigns.models import Campaign, Club, Membership, Role, Scenario
from apps.rules import ActionRefused
from apps.rules.dh import validate_sheet
from apps.rules.tables import DH_PINS_TO_ROUT
from apps.structures.formats import Checker, rules_dict, sheet_body
from apps.structures.models import Floor, Structure, has_crews

RULES_FIELDS = ("ruleset", "damage_variant", "collapse_check", "fires", "uncontrolled_events", "fireteam_initiative",
                "weather", "options")
# What a unit carries from one session to the next: its losses, and whether a crew's section went back
# in as its crew (Disposable Heroes). Pins, Down and having acted are for one battle only.
UNIT_CARRIED = ["models_left", "destroyed", "rejoined"]


def _organiser(user, campaign, what):
    if not permissions.is_organiser(user, campaign.club_id):
        raise ActionRefused("campaign", campaign.pk, f"Only an organiser of {campaign.club} may {what}")


NAME_LENGTH = 120  # Battle.name, Campaign.name


def with_suffix(name, suffix):
    """`name` and `suffix` within a name field: a 120-letter campaign's sessions must still be named."""
    return name[:NAME_LENGTH - len(suffix)].rstrip() + suffix


class CrewsOfNobody(ActionRefused):
    """The scenario has Disposable Heroes bunkers whose crew holds them for neither side: nothing started."""

    def __init__(self, names):
        listed = ", ".join(names)
        super().__init__("scenario", names, f"The crew of {listed} holds {'it' if len(names) == 1 else 'them'} for "
                                            "neither side yet: a designer chooses the side whose men hold it on its "
                                            "page in the builder (“Edit floors, openings…”), then start again.")
        self.names = names


def crews_of_nobody(scenario):
    """Names of the scenario's bunkers whose Disposable Heroes crew holds them for neither side (added from a
    sheet, or imported, before anyone said whose). Played so, both sides could attack that crew, nobody
    could lead it out and no side's tally would count it: a battle or campaign is not started from it."""
    if not has_crews(scenario.ruleset):
        return []
    return list(scenario.structures.filter(sheet__isnull=False, crew_men__gt=0, crew_side="")
                .order_by("name").values_list("name", flat=True))


class SheetsNotReady(ActionRefused):
    """Bunkers whose sheet is not ready for play (`unready_sheets`): nothing started."""

    def __init__(self, unready):
        listed = ", ".join(f"{name} (its sheet {sheet.name}: {problems[0][0]} {problems[0][1]}"
                           f"{f', and {len(problems) - 1} more' if len(problems) > 1 else ''})"
                           for name, sheet, problems in unready)
        names = [name for name, _, _ in unready]
        super().__init__("scenario", names, f"Not ready for play: {listed}. Every attack on "
                                            f"{'it' if len(names) == 1 else 'them'} would be refused at the table. "
                                            "A designer fills the sheet in on its page under Sheets (Edit; the "
                                            "scenario builder links to it beside the bunker), then start again.")
        self.names = names


def unready_sheets(source):
    """[(structure name, sheet, problems)] for `source`'s (a scenario's or campaign's) bunkers whose sheet is not
    ready for play: a club's sheet still being drawn up may be placed, but the rules refuse every attack on its
    bunker (apps.rules.dh), which a club would only find out at the table, mid-game."""
    if not has_crews(source.ruleset):
        return []
    found = []
    for s in source.structures.filter(sheet__isnull=False).select_related("sheet").order_by("name"):
        problems = validate_sheet(rules_dict(sheet_body(s.sheet)))
        if problems:
            found.append((s.name, s.sheet, problems))
    return found


class SetUpWrongly(ActionRefused):
    """Units set up where the builder now refuses them (`set_up_wrongly`): nothing started. `ground` says whose
    rows they are: a scenario's are set right in its builder, a campaign's at its last session's table."""

    def __init__(self, wrong, *, ground="scenario", sessions=True):
        listed = "; ".join(f"{unit} in {structure} ({why})" for unit, structure, why in wrong)
        it = "it" if len(wrong) == 1 else "them"
        if ground == "scenario":
            said = (f"Set up where the builder now refuses {it}: {listed}. Edit the unit in the builder (“Where” on "
                    "its page: a point on the table, or a structure it may hold), then start again.")
        elif not sessions:
            # Imported so with no session, or its only sessions discarded: there is no battle to correct it in.
            said = (f"Set up on the campaign's ground where a battle's Move never puts {it}: {listed}. The campaign "
                    f"has no session to correct {it} in: an organiser downloads it (“Export campaign”), puts {it} "
                    "right in the file (the unit's “at”: a point on the table, or a structure it may hold) and "
                    "imports that file (“Import a campaign”).")
        else:
            said = (f"Set up on the campaign's ground where a battle's Move never puts {it}: {listed}. An organiser "
                    "puts the unit right in the last session's battle (“Correct a piece's position (organisers)”; "
                    "reopen that session first if it is finished) and finishes it, then sets up the next session.")
        super().__init__(ground, [unit for unit, _, _ in wrong], said)
        self.wrong = wrong


def set_up_wrongly(source, *, played=False):
    """[(unit name, structure name, why)] for `source`'s (a scenario's or campaign's) units the builder would
    not place where they stand: a vehicle on a floor of a structure (`formats.vehicles_outside`), a unit inside
    a bunker the other side's crew holds (`formats.crews_as_built`). A scenario saved before the builder
    refused them, or a campaign file imported as played, still holds them, and a battle started so had a tank
    in a house or both sides in one bunker, where its Move never puts anyone. The builder's own checks read
    the rows as a scenario file would hold them. `played`: a campaign's ground, where a crew routed out holds
    nothing (`turns.resolve_move` lets anyone in), so a unit inside it is where play left it."""
    structures = list(source.structures.order_by("pk"))
    index = {s.pk: i for i, s in enumerate(structures)}
    doc = {
        "rules": {"ruleset": source.ruleset},
        # No sheet: crews_as_built then asks only who is inside (a crew of neither side is CrewsOfNobody's, and
        # a campaign's crew is its men as played).
        "structures": [{"name": s.name, "sheet": None, "crew_side": s.crew_side,
                        "crew_men": 0 if played and s.crew_routed else s.crew_men} for s in structures],
        "armies": [],
    }
    units = []
    for army in source.armies.order_by("side", "pk"):
        rows = list(army.units.select_related("floor").order_by("name", "pk"))
        doc["armies"].append({"side": army.side, "units": [
            {"name": u.name, "kind": u.kind,
             "at": {"structure": index[u.floor.structure_id], "floor": u.floor.level} if u.floor_id else None}
            for u in rows]})
        units.append(rows)
    wrong = {}
    for check in (vehicles_outside, crews_as_built):
        c = Checker()
        check(c, doc)
        for path, _ in c.errors:  # "armies[i].units[j].at"
            i, j = (int(part.split("[")[1].rstrip("]")) for part in path.split(".")[:2])
            unit = units[i][j]
            structure = structures[index[unit.floor.structure_id]]
            why = ("a vehicle stands on the table" if check is vehicles_outside else
                   f"side {structure.crew_side}'s crew holds it against side {unit.army.side}")
            wrong.setdefault((i, j), [unit.name, structure.name, []])[2].append(why)
    return [(name, structure, ", and ".join(why)) for _, (name, structure, why) in sorted(wrong.items())]


def start_campaign(*, scenario_id, user, name, fires_persist=False, single_open_battle=True):
    """A campaign on a scenario's ground, forces and deployment zones (its own copies: the scenario stays as
    it is, and a later change to it moves nothing in the campaign), with
    its first session set up on the scenario's table. Organisers only. A name the club already uses (in
    any case) is refused: the form checks it too, but two tabs or a double tap can pass that check
    together, and only the club's lock decides between them. A bunker crew of neither side is refused
    (CrewsOfNobody), and so is a bunker whose sheet is not ready for play (SheetsNotReady) and a unit set up
    where the builder refuses it (SetUpWrongly)."""
    with transaction.atomic():
        # Locked as every builder change locks it (scenario_views.one_writer): the copy is never half of one.
        scenario = Scenario.objects.select_for_update().get(pk=scenario_id)
        if not permissions.is_organiser(user, scenario.club_id):
            raise ActionRefused("campaign", None, f"Only an organiser of {scenario.club} may start a campaign")
        unsided = crews_of_nobody(scenario)
        if unsided:
            raise CrewsOfNobody(unsided)
        unready = unready_sheets(scenario)
        if unready:
            raise SheetsNotReady(unready)
        wrong = set_up_wrongly(scenario)
        if wrong:
            raise SetUpWrongly(wrong)
        club = Club.lock(scenario.club_id)
        if club.campaigns.filter(name__iexact=name).exists():
            raise ActionRefused("name", name, f"{club.name} already has a campaign called {name}.")
        campaign = Campaign.objects.create(
            club_id=scenario.club_id, name=name, description=scenario.description, fires_persist=fires_persist,
            single_open_battle=single_open_battle, deployment_zones=deepcopy(scenario.deployment_zones or []),
            table_width=scenario.table_width, table_depth=scenario.table_depth,
            **{field: getattr(scenario, field) for field in RULES_FIELDS})
        copy_battlefield(scenario, campaign=campaign)
        start_session(campaign_id=campaign.pk, user=user, table=(scenario.table_width, scenario.table_depth))
        return campaign


class AlreadySetUp(ActionRefused):
    """The session a form was for is set up already: the form was sent twice, or from another tab."""

    def __init__(self, battle):
        super().__init__("number", battle.session_number, f"Session {battle.session_number} is already set up (the "
                                                          "form was sent twice, or from another tab): here it is.")
        self.battle = battle


def start_session(*, campaign_id, user, name="", weather=None, table=None, number=None):
    """A new battle on the campaign's ground as it stands: damage, rubble, fires (out, unless the
    campaign keeps them burning), bunker crews with their losses, penetrating hits, pins and rout (a
    bunker keeps its pinned, half-dead crew); every army's roster with its losses, the units' pins,
    Down and activations cleared. On `table` (width, depth), by default the last session's.
    With no session left (the first discarded), on the campaign's first table.
    `number` is the session the form offered to set up: if that one exists now, AlreadySetUp. A bunker
    whose sheet is not ready for play (edited since the campaign started) is refused: SheetsNotReady; so is a
    unit of its ground where no battle's Move puts one: SetUpWrongly."""
    with transaction.atomic():
        campaign = Campaign.objects.select_for_update().get(pk=campaign_id)
        _organiser(user, campaign, "start a session")
        if number is not None:
            done = campaign.battles.filter(session_number=number).first()
            if done is not None:
                raise AlreadySetUp(done)
        open_battle = campaign.battles.exclude(status=BattleStatus.FINISHED).first()
        if open_battle is not None and campaign.single_open_battle:
            raise ActionRefused("campaign", campaign.pk,
                                f"{open_battle.name} is still open: finish it before starting the next session")
        unready = unready_sheets(campaign)
        if unready:
            raise SheetsNotReady(unready)
        # Its ground, not its scenario: a campaign started before the builder refused them, or imported as played.
        wrong = set_up_wrongly(campaign, played=True)
        if wrong:
            raise SetUpWrongly(wrong, ground="campaign", sessions=campaign.battles.exists())
        number = (campaign.battles.aggregate(n=Max("session_number"))["n"] or 0) + 1
        last = (campaign.battles.order_by(F("session_number").desc(nulls_last=True), "-created_at")
                .values("table_width", "table_depth").first())
        if table is None and last is not None:
            table = (last["table_width"], last["table_depth"])
        elif table is None and campaign.table_width is not None:
            table = (campaign.table_width, campaign.table_depth)
        battle = Battle.objects.create(
            club_id=campaign.club_id, campaign=campaign,
            name=name or with_suffix(campaign.name, f" — session {number}"),
            session_number=number, status=BattleStatus.SETUP,
            **({"table_width": table[0], "table_depth": table[1]} if table else {}),
            **{field: getattr(campaign, field) for field in RULES_FIELDS},
        )
        if weather:
            battle.weather = weather
            battle.save(update_fields=["weather"])
        copy_battlefield(campaign, battle=battle)
        # A new session starts at turn 1, so a fire that kept burning restarts its growth clock.
        structures = battle.structures.all()
        if campaign.fires_persist:
            structures.filter(fire_size__isnull=False).update(fire_started_turn=1)
        else:
            structures.update(fire_size=None, fire_started_turn=None)
        Unit.objects.filter(army__battle=battle).update(pins=0, down=False, acted=False, incapacitated=False,
                                                        morale_check_pending=False)
        record_setup(battle, campaign, user)
        return battle


def record_setup(battle, campaign, user):
    """What a session starts from, for finishing it: where several sessions are open at once, it writes
    back only what it changed (`_write_back`). In the log, not on the battle row, which every action
    reads. Its first entry: call it once the battle's copies are made, before anything is played."""
    at_setup = json.loads(json.dumps(_campaign_state(campaign), cls=DjangoJSONEncoder))
    append_entry(battle, action="session_start", actor=user, outcome={SETUP_KEY: at_setup},
                 summary=f"Session {battle.session_number} of {campaign.name} set up from the campaign's ground "
                         "and rosters")


class ChangedMeanwhile(ActionRefused):
    """Someone else changed what a form was drawn from, and saving it would put that back (or change it
    again): nothing was saved. `changed` names what they changed, `stored` holds what is stored now."""

    def __init__(self, campaign, changed, stored):
        super().__init__("seen", None, f"{campaign.name} was changed meanwhile: {', '.join(changed)}")
        self.changed, self.stored = changed, stored


def change_settings(*, campaign_id, user, fires_persist, single_open_battle, seen=None):
    """The campaign's two session settings. `seen` holds them as the form showed them (None: not checked,
    the last save wins): a save that would put back, or change again, one someone else changed since is
    refused with ChangedMeanwhile; one holding what is stored already (the same form sent twice) is saved."""
    values = {"fires_persist": fires_persist, "single_open_battle": single_open_battle}
    with transaction.atomic():
        campaign = Campaign.objects.select_for_update().get(pk=campaign_id)
        _organiser(user, campaign, "change the campaign's settings")
        stored = {name: getattr(campaign, name) for name in values}
        changed = [name for name, value in stored.items() if name in (seen or {}) and seen[name] != value]
        if any(values[name] != stored[name] for name in changed):
            raise ChangedMeanwhile(campaign, changed, stored)
        Campaign.objects.filter(pk=campaign.pk).update(**values)


def _side_changes_hands(club_id, battles, side, was, now):
    """A member who starts or stops playing in `battles` when `side` goes from `was` to `now`: their open pages
    of them reload on the next poll (the poll refuses a token of an older epoch). A page drawn for a member who
    plays no side has no attack form and does not ask for one when the battle changes: it said "You are
    watching…" until reloaded. One who keeps the other side keeps their page (the poll redraws the armies), as
    do organisers, who command both sides whoever owns them. Call it before the side changes hands."""
    if was == now or not battles:
        return
    moved = [user for user in (was, now) if user is not None and Army.objects.filter(
        battle__in=battles, owner_id=user).exclude(side=side).count() < len(battles)]
    Membership.objects.filter(club_id=club_id, user_id__in=moved).exclude(role=Role.ORGANISER).end_watches()


def set_commander(*, campaign_id, user, side, owner_id):
    """Who commands a side: the campaign's army, and the same side in its open battles (a club whose
    players changed between sessions, or whose campaign came from a file with other names). `owner_id`
    None leaves the side to the organisers. Returns the army and the open battles it changed."""
    with transaction.atomic():
        campaign = Campaign.objects.select_for_update().get(pk=campaign_id)
        _organiser(user, campaign, "choose who commands a side")
        army = campaign.armies.filter(side=side).first()
        if army is None:
            raise ActionRefused("side", side, f"{campaign.name} has no army on side {side}")
        if owner_id is not None and not campaign.club.memberships.filter(user_id=owner_id).exists():
            raise ActionRefused("owner", owner_id, f"Only a member of {campaign.club} may command a side")
        open_battles = list(campaign.battles.exclude(status=BattleStatus.FINISHED).order_by("pk"))
        _side_changes_hands(campaign.club_id, open_battles, side, army.owner_id, owner_id)
        army.owner_id = owner_id
        army.save(update_fields=["owner"])
        Army.objects.filter(battle__in=open_battles, side=side).update(owner_id=owner_id)
        Battle.objects.filter(pk__in=[b.pk for b in open_battles]).sides_changed()
        return army, open_battles


def set_battle_commander(*, battle_id, user, side, owner_id):
    """Who plays a side of one battle, from the battle page (a player going home mid-battle hands
    their side to another). A campaign's battle follows its campaign: `set_commander`, the campaign's
    army and its open battles. A battle started from a scenario changes alone. `owner_id` None leaves
    the side to the organisers. Returns the army and the battles it changed."""
    with transaction.atomic():
        battle = Battle.objects.select_related("club").get(pk=battle_id)
        if not permissions.is_organiser(user, battle.club_id):
            raise ActionRefused("battle", battle.pk, f"Only an organiser of {battle.club} may choose who plays a side")
        if battle.campaign_id and battle.status != BattleStatus.FINISHED:
            return set_commander(campaign_id=battle.campaign_id, user=user, side=side, owner_id=owner_id)
        # The battle's row, as every action on it does: an attack in flight reads the sides before or after.
        battle = Battle.objects.select_for_update().get(pk=battle.pk)
        if battle.status == BattleStatus.FINISHED:
            raise ActionRefused("battle", battle.pk, f"{battle.name} has ended: who played it stays on its record")
        army = battle.armies.filter(side=side).first()
        if army is None:
            raise ActionRefused("side", side, f"{battle.name} has no army on side {side}")
        if owner_id is not None and not Membership.objects.filter(club_id=battle.club_id, user_id=owner_id).exists():
            raise ActionRefused("owner", owner_id, "Only a member of the club may play a side")
        _side_changes_hands(battle.club_id, [battle], side, army.owner_id, owner_id)
        army.owner_id = owner_id
        army.save(update_fields=["owner"])
        Battle.objects.filter(pk=battle.pk).sides_changed()
        return army, [battle]


def release_commands(*, club_id, user_id):
    """Someone is no longer a member of the club: the sides they commanded in its scenarios, campaigns
    and open battles go back to the organisers (only members command, as `set_commander` holds), so
    no page names a commander who cannot act, and joining again later hands nothing back unasked.
    Finished battles keep who played them. Call it in the transaction that ends the membership.
    Returns the armies released."""
    armies = list(Army.objects.filter(owner_id=user_id).filter(
        Q(scenario__club_id=club_id) | Q(campaign__club_id=club_id)
        | (Q(battle__club_id=club_id) & ~Q(battle__status=BattleStatus.FINISHED))).order_by("side", "pk"))
    if armies:
        Army.objects.filter(pk__in=[a.pk for a in armies]).update(owner=None)
        Battle.objects.filter(pk__in={a.battle_id for a in armies if a.battle_id}).sides_changed()
    return armies


def discard_session(*, campaign_id, user, number=None, battle_id=None):
    """Take back a session set up by mistake: the newest one, while it is still being set up and nothing
    but its setting up is logged. Its battle and copies go (the campaign's own rows were never touched),
    so the session before it can be reopened again. Returns the discarded battle's name.

    `number`, the session the organiser was shown and confirmed discarding: any other is refused. Where
    the campaign allows several open sessions, the same form sent twice (a double tap, a resend after a
    lost answer) discarded session 3 and then session 2. `battle_id`, that session's battle: a session
    discarded and set up again has the same number, and a late resend of the first discard took the new
    one too."""
    with transaction.atomic():
        campaign = Campaign.objects.select_for_update().get(pk=campaign_id)
        _organiser(user, campaign, "discard a session")
        battle = (campaign.battles.select_for_update()
                  .order_by(F("session_number").desc(nulls_last=True), "-created_at").first())
        if (battle_id is not None and battle is not None and battle.pk != battle_id
                and battle.session_number == number):
            raise ActionRefused("campaign", campaign.pk, f"Session {number} was discarded and set up again since: "
                                                         "nothing was discarded. Reload the page to discard the "
                                                         "new one")
        if number is not None and (battle is None or battle.session_number != number):
            raise ActionRefused("campaign", campaign.pk, f"Session {number} has already been discarded: nothing more "
                                                         "was discarded" if battle is None or
                                (battle.session_number or 0) < number else
                                f"Session {battle.session_number} was set up after session {number}: nothing was "
                                "discarded")
        if battle is None or battle.status != BattleStatus.SETUP:
            raise ActionRefused("campaign", campaign.pk, "Only the newest session, while it is still being set up, "
                                                         "can be discarded")
        if battle.log_entries.exclude(action="session_start").exists():
            raise ActionRefused("campaign", campaign.pk, f"{battle.name} has entries in its log: finish it instead")
        name = battle.name
        battle.delete()
        return name


def _campaign_state(campaign):
    """The campaign rows a write-back changes, as they are now (for reopening)."""
    return {
        "structures": {
            str(s["id"]): {k: v for k, v in s.items() if k != "id"}
            for s in Structure.objects.filter(campaign=campaign).values("id", *STRUCTURE_WRITE_FIELDS)
        },
        "units": {
            str(u["id"]): {k: v for k, v in u.items() if k != "id"}
            for u in Unit.objects.filter(army__campaign=campaign).values("id", "floor_id", "x", "y", *UNIT_CARRIED)
        },
    }


NEVER_STARTED = ("{name} was never started, so it cannot be finished: it would count as a session played. "
                 "Start it with “Start battle”, or, while it is the newest session, discard it from the campaign "
                 "page.")


def finish_battle(*, battle_id, user, winner="", result=""):
    """End a campaign battle and write its end state back to the campaign, in one transaction. A campaign's
    session that was never started is refused: nothing was played in it to write back or count."""
    with transaction.atomic():
        # The campaign's row before the battle's, as every use case here takes them: the other way
        # round, finishing while another tab chooses a commander or discards the session (campaign,
        # then its battles) deadlocked, and PostgreSQL ended one of them with an error.
        campaign_id = Battle.objects.filter(pk=battle_id).values_list("campaign_id", flat=True).get()
        campaign = Campaign.objects.select_for_update().get(pk=campaign_id) if campaign_id else None
        battle = Battle.objects.select_for_update().get(pk=battle_id)
        if battle.status == BattleStatus.FINISHED:
            raise ActionRefused("battle", battle.pk, "This battle is already finished")
        if not permissions.is_organiser(user, battle.club_id):
            raise ActionRefused("battle", battle.pk, "Only an organiser may finish the battle")
        if campaign is not None and battle.status == BattleStatus.SETUP:
            # Finished, it would be written back and counted as a session played, with nothing played in it.
            raise ActionRefused("battle", battle.pk, NEVER_STARTED.format(name=battle.name))
        if winner not in ("", "A", "B", "D"):
            raise ActionRefused("winner", winner, "The winner is side A, side B or a draw")
        created = []
        if campaign is not None:
            battle.campaign_before = _campaign_state(campaign)
            created = _write_back(battle, campaign)
            battle.campaign_before["created_units"] = created
        battle.status, battle.finished_at = BattleStatus.FINISHED, timezone.now()
        battle.winner, battle.result = winner, result[:300]
        words = {"A": "side A wins", "B": "side B wins", "D": "a draw", "": "no result recorded"}[winner]
        append_entry(battle, action="finish", actor=user, summary=f"Battle finished: {words}"
                     + (f" — {result[:200]}" if result else ""))
        battle.version += 1
        battle.save(update_fields=["status", "finished_at", "winner", "result", "campaign_before", "version"])
        return battle


SETUP_KEY = "campaign_at_setup"


def at_setup(battle):
    """The campaign's rows as the session was set up from them (`_campaign_state`), or None where that is
    not known: a battle set up before this was recorded, or brought by an import from a file without it
    (the log's entry names the old host's rows; the file's `campaign_at_setup` is `imported_setup`)."""
    entry = battle.log_entries.filter(action="session_start").order_by("seq").values("seq", "outcome").first()
    if entry is None or entry["seq"] <= battle.imported_seq:
        return battle.imported_setup or None
    return (entry["outcome"] or {}).get(SETUP_KEY)


def _same(model, field, value, recorded):
    """Whether a row's `value` is what the setting up recorded (JSON: a decimal as text)."""
    return model._meta.get_field(field).to_python(recorded) == value


# Counts a session adds to (damage points, breach progress, a crew's losses, pins, penetrating hits and
# the men who walked out): where several sessions are open at once, each adds what it did to the count as
# the campaign has it now, so 3 damage at one table and 2 at the other leave 5, not the last finisher's 2.
COUNTERS = ("damage_taken", "breach_scored", "crew_men", "crew_pins", "crew_penetrating_hits", "crew_left")
FIRE = ("fire_size", "fire_started_turn")


def _write_back(battle, campaign):
    """The battle's end state onto the campaign's rows. Only what the battle changed from what it was set
    up with: another session open at the same time (the campaign allows it) may have been finished since,
    and what it did to the barn or the squads must not be put back to how this one found them. Counts
    merge as differences (`COUNTERS`, a unit's models), flags a session raised stay raised, the larger
    fire stands (`_merge_structure`). A battle whose setting up is not known writes back its whole end
    state."""
    setup = at_setup(battle)
    copies = Structure.objects.filter(battle=battle, origin__campaign=campaign)
    grounds = {s.pk: s for s in Structure.objects.filter(campaign=campaign)}
    changed, short = [], {}
    for copy in copies:
        original = grounds[copy.origin_id]
        was = (setup or {}).get("structures", {}).get(str(original.pk))
        if was is None:
            for field in STRUCTURE_WRITE_FIELDS:
                setattr(original, field, getattr(copy, field))
        else:
            missing = _merge_structure(original, copy, {f: Structure._meta.get_field(f).to_python(v)
                                                        for f, v in was.items() if f in STRUCTURE_WRITE_FIELDS},
                                       campaign)
            if missing:
                short[original.pk] = missing
        changed.append(original)
    Structure.objects.bulk_update(changed, STRUCTURE_WRITE_FIELDS)

    units = list(Unit.objects.filter(army__battle=battle).select_related("army", "floor__structure"))
    originals = {u.pk: u for u in Unit.objects.filter(army__campaign=campaign)}
    floors = {(f.structure_id, f.level): f for f in Floor.objects.filter(structure__campaign=campaign)}
    changed, moved = [], set()
    for unit in units:
        original = originals.get(unit.origin_id)
        if original is None:
            continue
        was = (setup or {}).get("units", {}).get(str(original.pk))
        if was is None:
            original.models_left, original.destroyed = unit.models_left, unit.destroyed
            original.rejoined = unit.rejoined
        else:
            # Losses add up: the men this table lost come off what the campaign has now.
            if not _same(Unit, "models_left", unit.models_left, was["models_left"]):
                original.models_left = min(max(0, original.models_left + unit.models_left - was["models_left"]),
                                           original.models_start)
            if not _same(Unit, "destroyed", unit.destroyed, was["destroyed"]):
                original.destroyed = unit.destroyed
            # A session set up before `rejoined` was carried recorded none: it found every section out.
            if not _same(Unit, "rejoined", unit.rejoined, was.get("rejoined", False)):
                original.rejoined = unit.rejoined
            # Destroyed means no one left, and no one left is destroyed, whichever table's losses did it.
            if (original.destroyed or original.models_left == 0 < original.models_start) and any(
                    not _same(Unit, f, getattr(unit, f), was.get(f, False)) for f in UNIT_CARRIED):
                original.models_left, original.destroyed = 0, True
        floor, x, y = _place(unit, floors, grounds)
        if was is None or (floor.pk if floor else None) != was["floor_id"] or not (
                _same(Unit, "x", x, was["x"]) and _same(Unit, "y", y, was["y"])):
            original.floor, original.x, original.y = floor, x, y
            moved.add(original.pk)
        changed.append(original)
    # One unit a floor: a floor this battle moved a unit onto may be held since by one another session
    # left there; that one stays, and this one stands at the building's spot. Nor do the dead hold one (a
    # squad this battle moved that another session had wiped out).
    held = {u.floor_id for u in originals.values() if u.floor_id and u.pk not in moved}
    building = {f.pk: f.structure_id for f in floors.values()}
    for original in changed:
        if original.floor_id and (original.destroyed or original.pk in moved and original.floor_id in held):
            where = grounds[building[original.floor_id]]
            original.floor, original.x, original.y = None, where.x, where.y
    _move_units(changed)
    held = {u.floor_id for u in originals.values() if u.floor_id}

    # Units born in the battle (a crew that left its fortification) join the campaign's rosters, those
    # wiped out as well: the men who walked out count on the roster, not as the bunker's crew, so a
    # section left behind would take its dead out of the tally altogether.
    armies = {a.side: a for a in Army.objects.filter(campaign=campaign)}
    ground_of = {copy.pk: copy.origin_id for copy in copies}
    created, arms = [], []
    born = [u for u in units if u.origin_id is None and u.army.side in armies]
    carried = {}
    for uw in UnitWeapon.objects.filter(unit__in=born).order_by("pk"):
        carried.setdefault(uw.unit_id, []).append(uw)
    for unit in born:
        # Where the battle left it, as for every other unit: a section that took cover in the barn
        # is in the barn next session, not nowhere (at its spot if a unit holds the floor since).
        floor, x, y = _place(unit, floors, grounds)
        if floor is not None and floor.pk in held:
            where = grounds[floor.structure_id]
            floor, x, y = None, where.x, where.y
        row = Unit.objects.create(
            army=armies[unit.army.side], name=unit.name, kind=unit.kind, experience=unit.experience,
            models_start=unit.models_start, models_left=unit.models_left, destroyed=unit.destroyed,
            floor=floor, x=x, y=y, crew_of_id=ground_of.get(unit.crew_of_id), rejoined=unit.rejoined,
        )
        created.append(row.pk)
        # With the weapons it carried (a crew's rifles and grenades): its next session offers them.
        arms += [UnitWeapon(unit=row, weapon_id=uw.weapon_id, count=uw.count) for uw in carried.get(unit.pk, [])]
    UnitWeapon.objects.bulk_create(arms)
    if short:
        _losses_among_those_who_walked_out(short, campaign, setup, grounds)
    return created


def _losses_among_those_who_walked_out(short, campaign, setup, grounds):
    """`short`: structure pk → men one table killed in its crew that were no longer in it, because the
    crew walked out at a table open at the same time. Those men are the sections it formed, formed
    since this session was set up (on the roster already, or just joined it): the losses come off them,
    the first formed first, so the dead count in the tally instead of vanishing below an empty crew."""
    known = {int(pk) for pk in setup["units"]}
    # Not one that went back in: its men are the crew's again, counted there.
    sections = [u for u in Unit.objects.filter(army__campaign=campaign, crew_of_id__in=short, destroyed=False,
                                               rejoined=False, models_left__gt=0).select_related("floor")
                .order_by("pk") if u.pk not in known]
    for unit in sections:
        lost = min(short[unit.crew_of_id], unit.models_left)
        short[unit.crew_of_id] -= lost
        unit.models_left -= lost
        if unit.models_left == 0:
            unit.destroyed = True
            if unit.floor_id:
                # The dead hold no floor: they lie at the building's spot, as `_place` leaves them.
                where = grounds[unit.floor.structure_id]
                unit.floor, unit.x, unit.y = None, where.x, where.y
    Unit.objects.bulk_update(sections, ["models_left", "destroyed", "floor", "x", "y"])


def _merge_structure(original, copy, was, campaign):
    """What the session did to a structure (`copy`, set up from `was`) onto the campaign's row as it is
    now, which another session may have changed since. A field the session left alone stays. A count
    adds the session's difference. A flag (collapsed, destroyed, impassable, breached, routed) takes the
    session's value, so one raised at either table stays raised: none is lowered in play. The lost
    weapons are both tables' together. A fire (size and growth clock) takes the session's, unless another
    session changed it too: then the larger fire burns, a fire out counting as none; brought down at one
    table, a structure another set alight is rubble, not burning (a collapse puts a fire out). The rules' limits hold after adding up (`_within_limits`). A field the setting up did not record
    (a session set up before the app recorded it) is the session's."""
    if all(f in was and getattr(copy, f) == was[f] for f in STRUCTURE_WRITE_FIELDS):
        return
    for field in STRUCTURE_WRITE_FIELDS:
        mine, before = getattr(copy, field), was.get(field)
        if field not in was:
            setattr(original, field, mine)
        elif field in FIRE or mine == before:
            continue
        elif field in COUNTERS:
            setattr(original, field, getattr(original, field) + mine - before)
        elif field == "weapons_destroyed":
            # Lost at either table; one this session no longer counts lost (an undo) it gives back.
            lost = (set(original.weapons_destroyed) | set(mine)) - (set(before) - set(mine))
            original.weapons_destroyed = sorted(lost)
        else:
            setattr(original, field, mine)
    fire_was = tuple(was.get(f) for f in FIRE)
    mine, now = (copy.fire_size, copy.fire_started_turn), (original.fire_size, original.fire_started_turn)
    if all(f in was for f in FIRE) and "collapsed" in was:
        if mine != fire_was:
            if now != fire_was and (now[0] or 0) > (mine[0] or 0):
                mine = now
            original.fire_size, original.fire_started_turn = mine
        # Brought down at one table, set alight (or burning on) at the other: rubble does not burn.
        collapsed_here, collapsed_there = copy.collapsed and not was["collapsed"], original.collapsed and not (
            copy.collapsed or was["collapsed"])
        if (collapsed_here and now != fire_was) or (collapsed_there and mine != fire_was):
            original.fire_size = original.fire_started_turn = None
    return _within_limits(original, campaign)


def _within_limits(s, campaign):
    """Two tables' counts added up may pass what one table's rules stop at: damage at most the maximum
    (with LaserGrenadiers' damage points, reaching it leaves the structure untenable: destroyed and
    impassable, as the attack that reaches it does), breach progress at most what breaches it (and then
    it is breached), a crew never fewer than no men, pins 0 to 3, and a crew with no one left neither
    pinned nor routed (as `apps.rules.outcome` keeps it). Returns how many men the crew's count went below
    none: those of a crew that walked out at the other table (`_losses_among_those_who_walked_out`)."""
    s.damage_taken = min(max(0, s.damage_taken), s.damage_max)
    if s.damage_max and s.damage_taken == s.damage_max and campaign.ruleset == "lg" and campaign.damage_variant:
        s.destroyed = s.impassable = True
    s.breach_scored = max(0, s.breach_scored)
    if s.breach_needed:
        s.breach_scored = min(s.breach_scored, s.breach_needed)
        s.breached = s.breached or s.breach_scored == s.breach_needed
    missing = max(0, -s.crew_men)
    s.crew_men, s.crew_left = max(0, s.crew_men), max(0, s.crew_left)
    s.crew_penetrating_hits = max(0, s.crew_penetrating_hits)
    s.crew_pins = min(max(0, s.crew_pins), DH_PINS_TO_ROUT)
    if s.crew_men == 0:
        s.crew_pins, s.crew_routed = 0, False
    return missing


def _place(unit, floors, grounds):
    """Where the battle left `unit`, on the campaign's ground: (floor, x, y)."""
    # The same floor of the campaign's structure, or its spot on the table (a squad that fled a
    # burning barn is not back inside it next session).
    floor = floors.get((unit.floor.structure.origin_id, unit.floor.level)) if unit.floor_id else None
    where = grounds[floor.structure_id] if floor is not None else None
    if unit.destroyed or (where is not None and (where.collapsed or where.destroyed)):
        # Nobody holds a floor of rubble, and the dead hold nothing.
        return (None, where.x, where.y) if where is not None else (None, unit.x, unit.y)
    # A unit is on a floor or on the table, never both (a squad that moved into the cottage).
    return (floor, None, None) if floor is not None else (None, unit.x, unit.y)


def _move_units(units):
    """Save the units' losses and places. Floors are cleared first: each floor holds one unit, and two
    units that swapped floors would otherwise clash in the middle of the UPDATE."""
    if units:
        Unit.objects.filter(pk__in=[u.pk for u in units]).update(floor=None)
        Unit.objects.bulk_update(units, [*UNIT_CARRIED, "floor", "x", "y"])


def reopen_last(*, campaign_id, user):
    """Reopen the campaign's most recently finished battle and put the campaign back as it was
    before that battle was finished."""
    with transaction.atomic():
        campaign = Campaign.objects.select_for_update().get(pk=campaign_id)
        _organiser(user, campaign, "reopen a battle")
        battle = campaign.battles.select_for_update().filter(status=BattleStatus.FINISHED) \
            .order_by("-finished_at").first()
        if battle is None:
            raise ActionRefused("campaign", campaign.pk, "No finished battle to reopen")
        if campaign.battles.exclude(status=BattleStatus.FINISHED).exclude(pk=battle.pk).exists():
            raise ActionRefused("campaign", campaign.pk, "Only the last session can be reopened")
        before = battle.campaign_before or {}
        Unit.objects.filter(pk__in=before.get("created_units", []), army__campaign=campaign).delete()
        structures = Structure.objects.in_bulk([int(k) for k in before.get("structures", {})])
        for pk, values in before.get("structures", {}).items():
            for field, value in values.items():
                setattr(structures[int(pk)], field, value)
        Structure.objects.bulk_update(list(structures.values()), STRUCTURE_WRITE_FIELDS)
        units = Unit.objects.in_bulk([int(k) for k in before.get("units", {})])
        for pk, values in before.get("units", {}).items():
            for field, value in values.items():
                setattr(units[int(pk)], field, value)
        _move_units(list(units.values()))
        # An open battle's sides are commanded as the campaign says (set_commander keeps them so): whoever
        # the organisers chose since it was finished, or nobody for a player who has left the club since.
        for side, owner_id in campaign.armies.values_list("side", "owner_id"):
            Army.objects.filter(battle=battle, side=side).update(owner_id=owner_id)
        battle.status, battle.finished_at, battle.winner, battle.result = BattleStatus.IN_PROGRESS, None, "", ""
        battle.campaign_before = {}
        append_entry(battle, action="reopen", actor=user, summary="Battle reopened; the campaign is back as it was "
                                                                  "before this battle was finished")
        battle.version += 1
        battle.save(update_fields=["status", "finished_at", "winner", "result", "campaign_before", "version"])
        return battle
