"""Bolt Action: buildings and bunkers (seed 001).

The seed assumes the Bolt Action core book for to-hit rolls, the HE chart and pins; those results
come in as inputs ("hit?", "hits your flamethrower scored", "pins placed"), and everything the seed
itself specifies (hits in buildings, going Down, floors, collapse, fire, ramming) is rolled here.
"""

from __future__ import annotations

from . import tables
from .errors import InputError
from .inputs import Field, action, refuse
from .outcome import Effect

SOURCE = "seed 001_be57f31e19ce4039.txt"
SIDES = (("front", "Front"), ("right", "Right"), ("rear", "Rear"), ("left", "Left"))


def halve_up(n):
    return (n + 1) // 2


def to_hit_modifier(structure, flamethrower=False, he=False):
    """BA-18/53/20/29: −2 in a building, −4 in a bunker; HE over open sights and flamethrowers ignore it."""
    if flamethrower or he:
        return 0
    return tables.COVER_TO_HIT["bunker" if structure.is_bunker else "building"]


def is_building(structure):
    """What seed 001's building rules cover: buildings, and bunkers (which "follow the rules given for
    buildings", BA-51). A foxhole, trench or weapon emplacement is ordinary cover under the core rules."""
    return structure.kind == "building" or structure.is_bunker


def damage_needed(unit, source="small_arms", pen=0, close_quarters=False, structure=None):
    """BA-19: the D6 a hit needs to cause a casualty, clamped to 2–6 (a 1 never damages, a 6 always does:
    Bolt Action core convention). Extra protection is for units inside a building or bunker (A-BA-8); pass
    the unit's `structure` so a foxhole or trench gives none."""
    inside = unit.structure is not None if structure is None else is_building(structure)
    extra = inside and source not in ("he", "flamethrower") and not close_quarters
    need = tables.DAMAGE_BASE[unit.experience] + (tables.EXTRA_PROTECTION if extra else 0) - pen
    return max(2, min(6, need))


def plunging_fire_bonus(floor, range_in, heavy_weapon, indirect=False):
    """BA-15: +1 penetration for heavy-weapon hits from an upper floor on a target within 12"; mortars
    and howitzers firing indirect already have it, so it is never added twice."""
    return int(floor > 0 and range_in <= tables.PLUNGING_RANGE and heavy_weapon and not indirect)


def firing_gaps(structure, floor):
    """What a floor is fired into and out of, side -> count: a bunker only through its firing slits,
    never a door (BA-52); a building through any window, door or gap (BA-11, BA-29)."""
    return floor.slits if structure.is_bunker else floor.openings


def max_shooters(structure, level, side):
    """BA-11/12: two men per window or door on that side (a bunker's firing slit, BA-52); five per side
    from a flat roof."""
    floor = structure.floor(level)
    if floor.roof:
        return tables.SHOOTERS_PER_ROOF_SIDE
    return tables.SHOOTERS_PER_OPENING * firing_gaps(structure, floor).get(side, 0)


def entry_problem(state, unit, structure, level=0):
    """BA-1/3/52: why `unit` may not move onto that floor now, or None."""
    if unit.kind != "infantry":
        return "only infantry may enter buildings during the game"
    if structure.destroyed or structure.impassable:
        return f"{structure.label} cannot be entered"
    floor = structure.floor(level)
    if floor is None:
        return f"{structure.label} has no floor {level}"
    if floor.unit and floor.unit != unit.id:
        return f"{floor.label} is already occupied (one unit per floor)"
    return None


def he_hits(dice, he, purpose):
    count, sides = tables.HE_VALUES[he]
    return dice.die(sides, purpose) if count == 1 else dice.total(count, sides, purpose)


def _collapse(state, s):
    """The building is rubble and every infantry and artillery unit inside is destroyed (BA-24/55)."""
    return [Effect("collapse", s.id)] + [Effect("unit_destroyed", u.id, ref=s.id) for u in state.occupants(s.id)
                                          if u.kind in ("infantry", "artillery")]


def buried(state, effects):
    """Who a collapse killed, by name: "everyone inside destroyed" was said of an empty church too, and a
    tank's collapse said nothing of the squad inside."""
    names = [state.units[e.target].label for e in effects if e.type == "unit_destroyed"]
    return f"{', '.join(names)} destroyed" if names else "nobody inside"


def standing_building(s):
    """What these rules let a player fire at or assault: a building or bunker not yet rubble (`_building`)."""
    return is_building(s) and not (s.collapsed or s.destroyed)


def rammable(s):
    """What a heavy tank may drive into: a wooden or brick building (or a flimsy one, driven through), not a
    fortification, not rubble (BA-45, BA-57). The form offers only these: it had offered the demo's stone
    church, which the rule then refused."""
    return s.kind == "building" and not s.is_bunker and not (s.collapsed or s.destroyed) \
        and (s.flimsy or s.construction in tables.BUILDING_RAM_DICE)


def _building(s):
    """Seed 001's attacks on buildings cover buildings and bunkers only; a foxhole, trench or weapon
    emplacement is cover under the core rules (seed 003 says as much of its own: "should not be
    considered Fortifications"). Its occupants are shot at, and their damage rolled, as in the open."""
    if not is_building(s):
        refuse("structure", s.id, f"{s.label} is a {s.kind.replace('_', ' ')}, not a building or bunker: these "
                                  "rules do not cover it. Fire at the units in it by the core rules and roll their "
                                  "damage with 'Damage rolls for hits on a unit'")
    if s.collapsed or s.destroyed:
        # Rubble is difficult terrain, not a building (seed 001's opening): it cannot come down again or burn.
        refuse("structure", s.id, f"{s.label} is already rubble: it is terrain now, not a building. Fire at the "
                                  "units in it by the core rules")


def inside(s, unit):
    """A unit aimed at in a building must be inside it (`_aim`)."""
    return unit.structure == s.id


def _aim(state, s, target, level):
    """The floor aimed at: the target unit's, or the one named for an empty building (A-BA-3)."""
    _building(s)
    if target is not None:
        if target.structure != s.id:
            raise InputError("target", target.id, f"{target.label} is not inside {s.label}")
        if level is not None and level != target.floor:
            raise InputError("floor", level, f"{target.label} is on floor {target.floor}, not {level}")
        return target.floor
    if level is None:
        raise InputError("target", None, "choose the unit aimed at, or a floor of an empty building")
    return level


def _check_down(target, went_down):
    if went_down and (target is None or target.acted or target.down):
        who = target.label if target else "nobody"
        raise InputError("went_down", True, f"{who} cannot go Down now: only a unit that has not acted this turn")


def _occupant(state, s, level):
    floor = s.floor(level)
    inside = state.occupants(s.id, level)
    return state.units.get(floor.unit) or (inside[0] if inside else None)


def explode(state, s, level, he, dice, *, down_unit=None, pins=0, pinned=None, air=False):
    """An HE shell or bomb bursts on a floor: roll its hits even if the floor is empty, since the building may
    come down (BA-21..24, BA-28, BA-55, A-BA-1/2). The pins go on the unit the shell hits, unless `pinned`
    names who took them before the floor was known (an air strike's, BA-33)."""
    floor = s.floor(level)
    victim = _occupant(state, s, level)
    pinned = victim if pinned is None else pinned
    hits = he_hits(dice, he, f"HE hits ({he}) on {floor.the_label}")
    bunker = s.is_bunker
    threshold = tables.COLLAPSE_HITS["bunker" if bunker else "building"]
    effects = [Effect("floor_hit", s.id, floor=level)]
    if down_unit is not None:
        effects.append(Effect("went_down", down_unit.id))
    if pinned is not None and pins:
        effects.append(Effect("pin", pinned.id, pins))
    # The log's action reads "Indirect fire or air strike": an air strike says so, its bomb is no shell.
    words = [f"Air strike: {he} bomb bursts on {floor.the_label}: {hits} hits" if air else
             f"{he} shell explodes on {floor.the_label}: {hits} hits"]
    if hits >= threshold and (bunker or air or he in tables.HE_COLLAPSE_VALUES):
        fell = _collapse(state, s)
        effects += fell
        words.append(f"{s.label} collapses ({threshold}+): {buried(state, fell)}")
    elif victim is None:
        words.append("on an empty floor")
    elif bunker:
        # How many pins: "pinned" was logged for 2 pins and for none alike (the players may enter 0).
        got = pins if pinned == victim else 0
        words.append(f"{victim.label} +{got} pin{'s' * (got != 1)}, no damage inside a bunker" if got else
                     f"no damage to {victim.label} inside a bunker")
    else:
        down = victim.down or victim == down_unit
        n = halve_up(hits) if down else hits
        effects.append(Effect("hits", victim.id, n, note="HE: no cover, no extra protection"))
        words.append(f"{victim.label} takes {n} hit{'s' * (n != 1)}" + (" (Down, halved up)" if down else ""))
    # The unit aimed at when the bomb bursts on another floor: say what happened to it all the same.
    if down_unit is not None and down_unit != victim:
        words.append(f"{down_unit.label} went Down")
    # The pins on the unit hit too (the flamethrower's entry says them): the log read as if none were placed.
    collapsed = hits >= threshold and (bunker or air or he in tables.HE_COLLAPSE_VALUES)
    if pinned is not None and pins and (pinned != victim or not (bunker or collapsed)):
        words.append(f"{pinned.label} +{pins} pin{'s' * (pins != 1)}")
    return effects, "; ".join(words)


def _he_fields(hit_help):
    return (
        Field("structure", "structure", "Target building", fits=standing_building),
        Field("target", "unit", "Unit aimed at", required=False, structure_allows=inside),
        Field("floor", "floor", "Floor aimed at", required=False, help="Only for an empty building",
              floor_of="target"),
        Field("hit", "bool", "Hit?", help=hit_help),
        Field("went_down", "bool", "Target goes Down?", default=False,
              help="Only if it has not acted this turn; declared before the hits are rolled"),
        Field("pins", "int", "Pins placed", default=1, min=0, help="Pin markers the core rules place for this hit"),
    )


def fires_he(w):
    return bool(w.he_value)


def is_flamethrower(w):
    return bool(w.flamethrower)


@action(
    "ba_he", "ba", "HE over open sights at a building",
    Field("weapon", "weapon", "Weapon", fits=fires_he),
    *_he_fields("Your to-hit roll (HE over open sights ignores cover)"),
    source=f"{SOURCE} 'HE weapons against buildings', 'Bunkers' (BA-20..25, BA-55)",
)
def resolve_ba_he(state, inp, dice):
    w, s, target = inp["weapon"], inp["structure"], inp["target"]
    if not fires_he(w):
        refuse("weapon", w.key, f"{w.name} has no HE value")
    level = _aim(state, s, target, inp["floor"])
    _check_down(target, inp["went_down"])
    if not inp["hit"]:
        return [], f"{w.name} missed {s.label}"
    return explode(state, s, level, w.he_value, dice, down_unit=target if inp["went_down"] else None,
                   pins=inp["pins"])


def fits_indirect(w, inputs):
    """Indirect fire needs a weapon that fires indirect (a mortar, a howitzer); an air strike any HE
    value (the aircraft's bombs, from the catalogue)."""
    return fires_he(w) and (inputs.get("mode") == "air_strike" or bool(w.indirect))


@action(
    "ba_indirect", "ba", "Indirect fire or air strike on a building",
    Field("weapon", "weapon", "Weapon or aircraft", fits=fires_he, fits_with=fits_indirect),
    Field("mode", "choice", "Attack", choices=(("indirect", "Indirect fire"), ("air_strike", "Air strike")),
          default="indirect"),
    *_he_fields("Your to-hit roll for the indirect fire or the air strike, by the core rules"),
    source=f"{SOURCE} 'Indirect fire weapons against buildings', 'Air strikes against units in buildings', "
           "'Bunkers' (BA-26..28, BA-32..35, BA-55, BA-56, A-BA-1, A-BA-12)",
)
def resolve_ba_indirect(state, inp, dice):
    w, s, target, air = inp["weapon"], inp["structure"], inp["target"], inp["mode"] == "air_strike"
    if not fires_he(w):
        refuse("weapon", w.key, f"{w.name} has no HE value")
    if not fits_indirect(w, inp):
        refuse("weapon", w.key, f"{w.name} cannot fire indirect")
    _aim(state, s, target, inp["floor"])
    _check_down(target, inp["went_down"])
    if not inp["hit"]:
        return [], f"{w.name} missed {s.label}"
    levels = sorted((f.level for f in s.floors), reverse=True)
    level = levels[-1]  # the ground floor explodes automatically
    # An air strike's pin markers are placed as usual, measured from the building, before the floor roll
    # (BA-33, BA-34): they go on the unit aimed at, whichever floor the bomb then bursts on. An indirect
    # shell's go on the unit it hits.
    for upper in levels[:-1]:
        if dice.die(6, f"Floor roll at {s.floor(upper).the_label}", key=lambda v: v >= tables.INDIRECT_EXPLODES_ON,
                    target="4–6 explodes here") >= tables.INDIRECT_EXPLODES_ON:
            level = upper
            break
    return explode(state, s, level, w.he_value, dice, down_unit=target if inp["went_down"] else None,
                   pins=inp["pins"], pinned=target if air else None, air=air)


@action(
    "ba_flamethrower", "ba", "Flamethrower at a building",
    Field("weapon", "weapon", "Weapon", help="The flamethrower it fires", fits=is_flamethrower),
    Field("structure", "structure", "Target building", fits=standing_building),
    Field("target", "unit", "Unit aimed at", required=False, structure_allows=inside),
    Field("floor", "floor", "Floor aimed at", required=False, help="Only for an empty building",
          floor_of="target"),
    Field("side", "choice", "Through which side", choices=SIDES, required=False,
          help="The window, door or gap (a bunker's firing slit) it fires through must be on this side"),
    Field("hit", "bool", "Hit?", help="Your to-hit roll (flamethrowers ignore cover)"),
    Field("hits", "int", "Hits scored", default=0, min=0, help="The flamethrower's hits from the core rules"),
    Field("pins", "int", "Pins placed", default=0, min=0,
          help="Pin markers the core rules place on the unit for a flamethrower's hit"),
    source=f"{SOURCE} 'Flamethrowers against buildings', 'Bunkers', 'Targeting empty buildings' "
           "(BA-29..31, BA-39, BA-54, A-BA-4)",
)
def resolve_ba_flamethrower(state, inp, dice):
    w, s, target = inp["weapon"], inp["structure"], inp["target"]
    if not is_flamethrower(w):
        refuse("weapon", w.key, f"{w.name} is not a flamethrower")
    level = _aim(state, s, target, inp["floor"])
    floor = s.floor(level)
    through = firing_gaps(s, floor)
    gaps = through.get(inp["side"], 0) if inp["side"] else sum(through.values())
    if not gaps and not floor.roof:
        where = f" on its {inp['side']} side" if inp["side"] else ""
        what = "firing slit (a bunker is fired into through its slits only, never its door)" if s.is_bunker \
            else "window, door or gap"
        refuse("side" if inp["side"] else "floor", inp["side"] or level,
               f"the {floor.label} of {s.label} has no {what}{where} to flame through")
    if inp["hits"] and not inp["hit"]:
        raise InputError("hits", inp["hits"], "a miss scores no hits")
    if inp["pins"] and not inp["hit"]:
        raise InputError("pins", inp["pins"], "a miss places no pins")
    effects, words = [], [f"{w.name} at {floor.the_label} of {s.label}: " + ("hit" if inp["hit"] else "missed")]
    victim = _occupant(state, s, level)
    if inp["hit"] and victim is not None and inp["hits"]:
        effects.append(Effect("hits", victim.id, inp["hits"], note="flamethrower: no cover, no extra protection"))
        words.append(f"{victim.label} takes {inp['hits']} hits")
    if inp["hit"] and victim is not None and inp["pins"]:
        # The pin markers are the core rules' (seed 001 leaves them there), entered like HE's.
        effects.append(Effect("pin", victim.id, inp["pins"]))
        words.append(f"{victim.label} +{inp['pins']} pin{'s' * (inp['pins'] != 1)}")
    # Every use against a building risks the fire, hit or miss (A-BA-4); bunkers never burn (BA-54).
    if s.is_bunker or s.fire is not None or not state.options.fires:
        return effects, "; ".join(words)
    if dice.die(6, f"Does {s.label} catch fire?", key=lambda v: v >= tables.FLAME_FIRE_ON,
                target="4–6 sets it alight") >= tables.FLAME_FIRE_ON:
        effects += [Effect("fire_started", s.id, s.area), Effect("impassable", s.id)]
        inside = state.occupants(s.id)
        for u in inside:
            effects.append(Effect("unit_destroyed" if u.kind == "artillery" else "abandon", u.id, ref=s.id))
        # Name who is affected: "artillery is destroyed" with no gun inside read as a gun lost.
        leaving = [u.label for u in inside if u.kind != "artillery"]
        lost = [u.label for u in inside if u.kind == "artillery"]
        words.append(f"{s.label} is on fire and impassable"
                     + (f"; {' and '.join(leaving)} must leave it" if leaving else "")
                     + (f"; {' and '.join(lost)} (artillery) destroyed" if lost else "")
                     + ("" if inside else "; nobody inside"))
    else:
        words.append("no fire")
    return effects, "; ".join(words)


@action(
    "ba_barrage", "ba", "Artillery barrage: heavy howitzer hits on a building",
    Field("structure", "structure", "Building", fits=standing_building),
    # The form asks one number per unit (or, empty, for the building itself): the help is read beside
    # those, so it speaks of the number typed, not of the "u7=2" pairs the input also accepts.
    Field("hits", "unit_hits", "Heavy howitzer hits per unit",
          help="From the 'heavy howitzer' barrage results, before halving for Down"),
    Field("pins", "unit_hits", "Pins per unit", required=False,
          help="Pin markers the barrage places on the unit, by the core rules (in a bunker: pins, never damage)"),
    source=f"{SOURCE} 'Artillery barrages against units in buildings', 'Bunkers' (BA-36..38, BA-56, A-BA-15)",
    rolls=False,  # the players' results, entered: nothing to roll, no odds
)
def resolve_ba_barrage(state, inp, dice):
    s, hits, pins = inp["structure"], inp["hits"], inp["pins"] or {}
    _building(s)
    for uid in hits:
        if uid != "building" and state.units[uid].structure != s.id:
            raise InputError("hits", uid, f"{state.units[uid].label} is not inside {s.label}")
    for uid in pins:
        if uid == "building" or state.units[uid].structure != s.id:
            who = s.label if uid == "building" else f"{state.units[uid].label}, which is not inside it"
            raise InputError("pins", uid, f"pins go on the units inside {s.label}, not on {who}")
    inside = state.occupants(s.id)
    if hits.get("building") and inside:
        # The building's own die is for an empty one (A-BA-3): an occupied building is hit through the dice
        # rolled for its units (BA-37), so the two were counted twice towards its collapse.
        raise InputError("hits", "building", f"{s.label} is not empty ({', '.join(u.label for u in inside)} inside): "
                                             "enter the hits on each unit, not on the building itself")
    total = sum(hits.values())
    threshold = tables.COLLAPSE_HITS["bunker" if s.is_bunker else "building"]
    if total >= threshold:
        fell = _collapse(state, s)
        return fell, f"{total} heavy howitzer hits: {s.label} collapses: {buried(state, fell)}"
    # The barrage's pin markers, placed as usual; in a bunker they are all it does (BA-56).
    effects = [Effect("pin", uid, n) for uid, n in pins.items() if n]
    pinned = "; " + ", ".join(f"{state.units[e.target].label} +{e.n} pin{'s' * (e.n != 1)}" for e in effects) \
        if effects else ""
    if s.is_bunker:
        return effects, f"{total} heavy howitzer hits on {s.label}: pins only, no damage inside a bunker{pinned}"
    for uid, n in hits.items():
        u = state.units.get(uid)
        if u is not None and n:
            effects.append(Effect("hits", uid, halve_up(n) if u.down else n, note="heavy howitzer"))
    return effects, f"{total} heavy howitzer hits on {s.label}: it stands{pinned}"


def rams(u):
    """BA-45: only a heavy or super-heavy tank may drive into a building."""
    return u.kind == "vehicle" and u.tank_class in tables.TANK_RAM


@action(
    "ba_tank_ram", "ba", "Heavy tank drives into a building",
    Field("tank", "unit", "Tank", fits=rams),
    Field("structure", "structure", "Building", fits=rammable),
    source=f"{SOURCE} 'Tanks assaulting buildings', 'Bunkers' (BA-45..49, BA-57, A-BA-5, A-BA-9)",
)
def resolve_ba_tank_ram(state, inp, dice):
    tank, s = inp["tank"], inp["structure"]
    if not rams(tank):
        refuse("tank", tank.id, f"{tank.label} is not a heavy or super-heavy tank")
    if s.is_bunker or s.kind != "building":
        refuse("structure", s.id, f"tanks may not assault fortifications such as {s.label}")
    if s.collapsed or s.destroyed:
        refuse("structure", s.id, f"{s.label} is already rubble")
    # BA-45: driving into a building "is treated as an assault", and an assault is made on the enemy:
    # never on a building the tank's own side holds (it would bring it down on them).
    own = [u for u in state.occupants(s.id) if u.side == tank.side]
    if own:
        refuse("structure", s.id, f"{', '.join(u.label for u in own)} of {tank.label}'s own side "
                                  f"{'is' if len(own) == 1 else 'are'} in {s.label}: a tank drives into a "
                                  "building as an assault on the enemy, never into its own side's")
    if s.flimsy:
        fell = _collapse(state, s)
        return fell, f"{tank.label} drives straight through {s.label}" + \
            (f": {buried(state, fell)}" if len(fell) > 1 else "")
    if s.construction not in tables.BUILDING_RAM_DICE:
        refuse("structure", s.id, f"tanks may only drive into wooden or brick buildings, not {s.construction}")
    plus, n = tables.TANK_RAM[tank.tank_class], tables.BUILDING_RAM_DICE[s.construction]
    tank_value = dice.total(1, 6, f"{tank.label}: D6+{plus}", plus=plus)
    building_value = dice.total(n, 6, f"{s.label} ({s.construction}): {n}D6, rolled by the opponent")
    pin = Effect("pin", tank.id, 1, note="if the tank survives")
    if building_value > tank_value:
        damage = "superficial" if s.construction == "wooden" else "ram_damage"
        return [Effect("tank_result", tank.id, note=damage), pin], \
            f"{s.label} holds ({building_value} v {tank_value}): {damage.replace('_', ' ')} to {tank.label}, " \
            f"which stops in front of it; +1 pin"
    effects = ([Effect("tank_result", tank.id, note="superficial")] if building_value == tank_value else [])
    fell = _collapse(state, s)
    effects += fell + [Effect("went_down", tank.id), pin]
    how = "tie: superficial damage to the tank and" if building_value == tank_value else "the tank wins:"
    return effects, f"{tank_value} v {building_value}, {how} {s.label} collapses ({buried(state, fell)}); " \
                    f"{tank.label} halts in the rubble, Down; +1 pin"


@action(
    "ba_damage", "ba", "Damage rolls for hits on a unit",
    Field("target", "unit", "Unit hit"),
    Field("hits", "int", "Hits", min=1, max=60),
    Field("source", "choice", "Hits from", default="small_arms",
          choices=(("small_arms", "Small arms / other weapons"), ("he", "HE"), ("flamethrower", "Flamethrower"))),
    Field("pen", "int", "Penetration value", default=0, min=0, max=10),
    Field("close_quarters", "bool", "Close quarters?", default=False),
    source=f"{SOURCE} 'Extra protection', 'HE weapons against buildings', 'Bunkers' (BA-19, BA-23, BA-55, A-BA-8)",
)
def resolve_ba_damage(state, inp, dice):
    u, hits, source = inp["target"], inp["hits"], inp["source"]
    s = state.structures.get(u.structure)
    if s is not None and s.is_bunker and source == "he":
        refuse("source", source, f"HE never damages units inside a bunker such as {s.label}")
    need = damage_needed(u, source, inp["pen"], inp["close_quarters"], structure=s)
    rolled = dice.pool(hits, 6, f"Damage on {u.label} ({need}+)", at_least=need)
    n = min(rolled, u.models)
    effects = [Effect("casualties", u.id, n)] if n else []
    gone = bool(n) and n == u.models
    if gone:
        effects.append(Effect("unit_destroyed", u.id))
    # The log line is what the table reads back: "2 casualties" alone did not say the squad was gone.
    return effects, f"{hits} hits on {u.label} needing {need}+: {n} casualt{'y' if n == 1 else 'ies'}" \
                    + (f"; {u.label} destroyed" if gone else "")
