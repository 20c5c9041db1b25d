"""End of turn and start-of-turn upkeep, for every ruleset."""

from __future__ import annotations

from . import ba, lg_sequence, tables
from .dice import up_to
from .inputs import Field, action, refuse
from .outcome import Effect

SOURCE = "seed 000_a54802e4177f400e.txt"


@action(
    "end_turn", "any", "End the turn",
    source="seed 002_036456bcf1519ecb.txt 'End phase' and end-of-turn note (LG-39); a turn counter for BA and DH",
)
def resolve_end_turn(state, inp, dice):
    why = lg_sequence.turn_goes_on(state) if state.options.ruleset == "lg" else ""
    if why:
        refuse("action", "end_turn", why)
    return [Effect("turn_ended", "")], f"Turn {state.turn} ends"


def _grow(state, s):
    """LG-28/29: doubles (triples in very strong wind) every second turn after it started, up to the size of
    what is burning (A-LG-15)."""
    elapsed = state.turn - s.fire.started_turn
    if elapsed <= 0 or elapsed % tables.FIRE_GROWTH_PERIOD:
        return None
    factor = tables.FIRE_GROWTH_FACTOR["very_strong_wind" if state.options.weather == "very_strong_wind"
                                       else "normal"]
    size = s.fire.size * factor
    size = min(size, s.area) if s.area else size
    return size if size > s.fire.size else None


def in_list_order(s):
    """Where a structure stands in the battle screen's list: by name, then as created (ids are "s" + pk)."""
    return s.label, len(s.id), s.id


def collapse_stands_on(damage_taken, damage_max):
    """A-LG-2: damage % rounded down to tens; stands on d10 ≤ 10 − tens. None below 10 % (no check)."""
    tens = (100 * damage_taken // damage_max) // 10 if damage_max else 0
    return 10 - tens if 1 <= tens < 10 else None


@action(
    "upkeep", "any", "Start-of-turn upkeep",
    Field("structure", "structure", "Only this structure", required=False),
    source=f"{SOURCE} 'Creating a point system' 3 and 'Fires' 4–5 (LG-21, LG-28..30, A-LG-2, A-LG-15)",
    help="Fires grow, burning structures attack the pieces inside, damaged structures check for collapse",
)
def resolve_upkeep(state, inp, dice):
    if state.upkeep_turn >= state.turn:
        refuse("action", "upkeep", f"the upkeep for turn {state.turn} was already resolved")
    opts = state.options
    # The players' own dice are typed in one line, so their order must be one they can see: the battle
    # screen's list of structures, by name (ids sorted as text put s100 before s99).
    chosen = [inp["structure"]] if inp["structure"] else sorted(state.structures.values(), key=in_list_order)
    effects, words = [], []
    for s in chosen:
        if s.fire is not None and opts.fires and not s.collapsed:
            size = _grow(state, s)
            if size is not None:
                effects.append(Effect("fire_grown", s.id, size))
                words.append(f"fire in {s.label} grows to {size:g} sq in")
            if opts.ruleset == "lg":
                for u in state.occupants(s.id):
                    effects.append(Effect("fire_attack", u.id, tables.FIRE_ATTACK_FACTOR, ref=s.id))
                    words.append(f"fire attacks {u.label} (AF {tables.FIRE_ATTACK_FACTOR})")
        stands_on = collapse_stands_on(s.damage_taken, s.damage_max) if opts.collapse_check else None
        if stands_on is not None and not (s.collapsed or s.destroyed):
            pct = 100 * s.damage_taken // s.damage_max
            roll = dice.die(10, f"Collapse check, {s.label} ({pct}% damaged)", key=lambda v: v <= stands_on,
                            target=f"stands on {up_to(stands_on)}")
            if roll > stands_on:
                effects += [Effect("collapse", s.id), Effect("untenable", s.id)]
                words.append(f"{s.label} collapses ({pct}% damaged, stands only on {up_to(stands_on)})")
            else:
                words.append(f"{s.label} stands")
    effects.append(Effect("upkeep_done", ""))
    return effects, f"Turn {state.turn} upkeep: " + ("; ".join(words) or "nothing to do")


# Where a move, or an organiser's correction, puts a piece (`_placed`).
WHERE_TO = (
    Field("structure", "structure", "Into", required=False,
          help="A structure and its floor; or give the spot on the table below, which goes before this"),
    Field("floor", "floor", "Floor", required=False),
    Field("x", "float", "Or to x (inches from the left edge)", required=False, min=0, max=1000),
    Field("y", "float", "and y (inches from the top edge)", required=False, min=0, max=1000),
)


@action(
    "move", "any", "Move a unit into a structure or to a spot on the table",
    Field("unit", "unit", "Unit that moved"),
    *WHERE_TO,
    source="seed 001_be57f31e19ce4039.txt 'Buildings' (BA-2: one unit per floor; a floor the enemy holds is "
           "entered only by assault): the seeds track who holds each floor but leave movement to the core rules; "
           "this records where the players moved a unit",
    help="Records where a unit now stands, as the players moved it; it rolls nothing and uses no action. "
         "LaserGrenadiers: a piece that only moves takes its initiative with “Activate (move only)”, then its "
         "move is recorded here",
    rolls=False,
)
def resolve_move(state, inp, dice):
    u = inp["unit"]
    if u.destroyed:
        refuse("unit", u.id, f"{u.label} has been destroyed")
    why = lg_sequence.cannot_move(state, u) if state.options.ruleset == "lg" else ""
    if why:
        refuse("unit", u.id, why)
    inside = state.structures.get(u.structure)
    if state.options.ruleset == "ba" and u.kind == "artillery" and inside is not None and ba.is_building(inside):
        # Artillery only ever stands in a building from the set-up (BA-1), and then for good.
        refuse("unit", u.id, f"{u.label} is artillery set up in {inside.label}: it cannot move for the rest of the "
                             "game (BA-6, BA-50)")
    effects, where = _placed(state, u, inp, moving=True)
    return effects, f"{u.label} moves {where}"


def _placed(state, u, inp, *, moving):
    """Where `u` is put, as effects and the words for it ("into House, ground floor", "to 3″, 4″, out of
    Barn"): a floor of a structure it may stand in, or a spot on the table. Refused, naming the field,
    where nobody can stand. `moving`: the piece walks there, so what a move does on arrival applies too (a
    routed unit goes into no fortification; a section back in its own rejoins its crew); an organiser's
    correction only sets it where it stands."""
    s, level = inp["structure"], inp["floor"]
    # A spot typed wins over "Into": tapping a structure on the map puts it there, so a player who then typed
    # where a vehicle drove was refused ("does not go into structures") until they cleared a field they had
    # never filled in. Typing both numbers is the one unmistakable choice.
    if inp["x"] is not None and inp["y"] is not None:
        s = None
    if s is None:
        if inp["x"] is None or inp["y"] is None:
            # "…is required", as a missing input says it: the form waits for it before calling it a mistake.
            refuse("structure", None, "Choose the structure it went into, or give the spot on the table (x and y): "
                                      "one of them is required")
        x, y = inp["x"], inp["y"]
        left = f", out of {state.structures[u.structure].label}" if u.structure in state.structures else ""
        return [Effect("moved", u.id, note=f"{x:g},{y:g}")], f"to {x:g}″, {y:g}″{left}"
    if u.kind == "vehicle":
        refuse("unit", u.id, f"{u.label} is a vehicle: it does not go into structures (a heavy tank drives into "
                             "a building with its own action)")
    if s.collapsed or s.destroyed:
        refuse("structure", s.id, f"{s.label} is {'rubble' if s.collapsed else 'destroyed'}: nobody holds it")
    if s.impassable:
        refuse("structure", s.id, f"{s.label} is impassable")
    crew = s.crew
    if crew is not None and crew.side and crew.side != u.side and crew.men and not crew.routed:
        refuse("structure", s.id, f"{s.label}'s crew (side {crew.side}) holds it: it is taken by assault, "
                                  "not walked into")
    if moving and state.options.ruleset == "dh" and (crew is not None or s.sheet is not None) \
            and u.pins >= tables.DH_PINS_TO_ROUT:
        # Seed 003's rout drives a crew out ("forced to leave because of Routs"): a routed unit walking in,
        # least of all back into its own crew, which keeps only its own pins, would undo the rout.
        refuse("structure", s.id, f"{u.label} has routed (3 pins): a routed unit routs away and goes into no "
                                  f"fortification, so it cannot go into {s.label} (seed 003, DH-6)")
    if (moving and u.crew_of == s.id and crew is not None and crew.side == u.side and not u.rejoined
            and 0 < u.models <= crew.left):
        # Back into the fortification it walked out of: the section is its crew again (its men, not a
        # unit holding a floor), so crew casualties and the crew line count them.
        return [Effect("rejoins", u.id, u.models, ref=s.id)], \
            f"back into {s.label} and rejoins its crew: {u.models} men, the crew now {crew.men + u.models}"
    if level is None:
        if len(s.floors) > 1:
            refuse("floor", None, f"Choose the floor of {s.label}")
        level = s.floors[0].level
    if state.options.ruleset == "ba" and (s.kind == "building" or s.is_bunker) and u.kind != "infantry":
        refuse("unit", u.id, f"{u.label} is {u.kind}: {ba.entry_problem(state, u, s, level)} (BA-1)")
    floor = s.floor(level)
    if u.structure == s.id and u.floor == level:
        refuse("floor", level, f"{u.label} is on {floor.the_label} of {s.label} already")
    if floor.unit is not None and floor.unit != u.id:
        holder = state.units[floor.unit].label if floor.unit in state.units else floor.unit
        refuse("floor", level, f"{holder} holds {floor.the_label} of {s.label}: one unit per floor")
    return [Effect("moved", u.id, floor=level, ref=s.id)], f"into {s.label}, {floor.label}"


def _where(state, u):
    """Where a piece stands, for the log: "in House, ground floor", "at 3″, 4″"."""
    s = state.structures.get(u.structure)
    if s is not None:
        return f"in {s.label}" + (f", {s.floor(u.floor).label}" if u.floor is not None else "")
    return f"at {u.position[0]:g}″, {u.position[1]:g}″" if u.position else "off the table"


@action(
    "correct_position", "any", "Correct a piece's position (organisers)",
    Field("unit", "unit", "Piece to put right"),
    *WHERE_TO,
    source="seed 002_036456bcf1519ecb.txt 1a, 2d (LG-37, LG-38: a move belongs to an activation) and seed "
           "001_be57f31e19ce4039.txt 'Buildings' (BA-2: one unit per floor): no seed puts a misplaced piece "
           "right; this is not a move but the record put right (docs/rules.md, “An organiser corrects a position”)",
    help="Organisers only: puts a piece where it really stands, outside any activation. Not a move: it uses "
         "no initiative or order and marks nothing; the log says it was a correction",
    rolls=False,
)
def resolve_correct_position(state, inp, dice):
    u = inp["unit"]
    if inp["structure"] is None and inp["x"] is not None and inp["y"] is not None and u.structure is None \
            and u.position == (inp["x"], inp["y"]):
        refuse("x", inp["x"], f"{u.label} stands at {inp['x']:g}″, {inp['y']:g}″ already: nothing to correct")
    effects, _ = _placed(state, u, inp, moving=False)
    put = effects[0]
    now = f"{state.structures[put.ref].label}, {state.structures[put.ref].floor(put.floor).label}" if put.ref \
        else f"{inp['x']:g}″, {inp['y']:g}″"
    used = "no initiative used" if state.options.ruleset == "lg" else "no action used"
    return effects, f"Organiser corrected {u.label}'s position to {now} (it was {_where(state, u)}) — not a move: {used}"
