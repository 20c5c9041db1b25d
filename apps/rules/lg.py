"""LaserGrenadiers: structures (seed 000) and weapon characteristics (seed 004).

Penetration is LaserGrenadiers Rule 16, which the seeds do not contain: the players read it from
their rulebook and answer "hit?" and "penetrated?"; everything that follows is computed here.
"""

from __future__ import annotations

from . import tables
from .dice import up_to
from .errors import InputError
from .inputs import Field, action, refuse
from .outcome import Effect

SOURCE_000 = "seed 000_a54802e4177f400e.txt"
SOURCE_004 = "seed 004_6102d198b0f72b92.txt"


def base_type(weapon_type):
    """laser_cannon → laser, fusion_small_arms → fusion: the fire table is by family."""
    for suffix in ("_small_arms", "_cannon"):
        if weapon_type.endswith(suffix):
            return weapon_type[: -len(suffix)]
    return weapon_type


def cannot_fire_from(state, unit, shooting=True):
    """Why where a piece stands keeps it from firing (seed 000), as (a short note, the reason), or None: a
    structure made untenable must be left on the piece's next activation (A-LG-3), and a bunker "lack[s]
    firing slits and embrasures" (LG-2): nobody inside fires out (`shooting`), unless its designer gave it
    slits."""
    inside = state.structures.get(unit.structure)
    if inside is None:
        return None
    if inside.collapsed or inside.destroyed:
        ruin = "rubble" if inside.collapsed else "destroyed"
        return ("in ruins: must leave first",
                f"{unit.label} is in {inside.label}, which is {ruin}: nobody may occupy it, so it must leave on "
                "this activation (A-LG-3)")
    if shooting and inside.kind == "bunker" and unit.floor is not None \
            and not any(inside.floor(unit.floor).slits.values()):
        return ("in a bunker: no firing slits",
                f"{unit.label} is in {inside.label}, a bunker: it has no firing slits or embrasures, so pieces "
                "inside cannot fire out (seed 000)")
    return None


def attack_factor(weapon, armour_class=None, pulse=False):
    """LG-53 table, LG-54 anti-matter (= armour class struck, 1 for class 0), LG-71 pulse mode."""
    if weapon.weapon_type == "anti_matter":
        if armour_class is None:
            raise InputError("armour_class", None, "an anti-matter warhead needs the armour class it strikes")
        return max(armour_class, 1)
    af = weapon.attack_factor or tables.ATTACK_FACTOR.get(weapon.weapon_type)
    if af is None:
        raise InputError("weapon", weapon.key, f"{weapon.name}: no attack factor for weapon type "
                                               f"{weapon.weapon_type!r}; enter it from the weapon charts")
    if pulse:
        return tables.VARIABLE_FIRE_REDUCED.get(base_type(weapon.weapon_type), af - 1)
    return af


def range_band(weapon, distance):
    """LG-55/56: short to R, medium to 2R, long to 3R (exactly R is short: A-LG-16)."""
    if weapon.min_range is not None and distance < weapon.min_range:
        return "too_close"
    r = weapon.range_factor
    for band, limit in (("short", r), ("medium", 2 * r), ("long", 3 * r)):
        if distance <= limit:
            return band
    return "out_of_range"


def rotary_hits(barrels):
    """LG-68 table; outside 3–8 barrels floor(barrels/2), which fits every printed row (A-LG-11)."""
    if barrels < 3:
        raise InputError("weapon", barrels, f"a rotary weapon has at least 3 barrels, not {barrels}")
    return tables.ROTARY_HITS.get(barrels, barrels // 2)


def fire_chance(weapon_type, weather):
    """LG-26/27: top of the d10 range that starts a fire, shrunk by the weather, never below 0 (A-LG-1)."""
    n = tables.FIRE_CHANCE.get(base_type(weapon_type))
    if n is None:
        return 0
    return max(0, n - tables.WEATHER_FIRE_MODIFIER.get(weather, 0))


def damage_points(variant, af, effect_area, hits, penetrations):
    """LG-17..19: variant 1 a point per penetration; 2 a point per hit, AF per penetration instead;
    3 as 2, doubled for effect-area weapons."""
    if variant == 1:
        return penetrations
    points = (hits - penetrations) + penetrations * af
    return points * 2 if variant == 3 and effect_area else points


def vaporshock_premature(weapon):
    """LG-62: a vaporshock warhead landing on fire goes off early: half the area, attack factor 4."""
    return tables.VAPORSHOCK_PREMATURE_AF, weapon.effect_area / 2


def standing(s):
    """A structure there is still something of to fire at or breach: not rubble (a collapse check) nor
    destroyed (its damage points spent, LG-22)."""
    return not (s.collapsed or s.destroyed)


def _gone(s):
    return f"{s.label} is rubble" if s.collapsed else f"{s.label} is already destroyed"


def _inside(state, s, units, field):
    for u in units:
        if u.structure != s.id:
            raise InputError(field, u.id, f"{u.label} is not inside {s.label}")


@action(
    "lg_attack_structure", "lg", "Fire at a structure (and the troops inside)",
    Field("weapon", "weapon", "Weapon"),
    Field("structure", "structure", "Target structure", fits=standing),
    Field("surface", "choice", "Surface struck", choices=(("wall", "Wall"), ("roof", "Roof")), default="wall",
          structure_allows=lambda s, surface: surface != "roof" or s.has_roof),
    Field("hit", "bool", "Hit?", help="Your hit/miss roll, with the target's full concealment"),
    Field("penetrated", "count", "Penetrated?", default=0, min=0,
          help="Rule 16 penetration from your rulebook: yes/no, or how many hits penetrated for a rotary weapon"),
    Field("mode", "choice", "Fire mode", choices=(("beam", "Beam"), ("pulse", "Pulse (+1 to hit, reduced attack)")),
          default="beam", weapon_has=lambda w: w.variable_fire),
    Field("troops", "choice", "Troops inside", default="none",
          choices=(("none", "Not aiming at troops"), ("known", "Known location"), ("exploratory", "Exploratory"))),
    Field("targets", "units", "Pieces inside", required=False, default=(),
          structure_allows=lambda s, unit: unit.structure == s.id,  # `_inside`
          help="Known: the piece(s) at the known location. Exploratory: the pieces actually in the target area, "
               "none if nobody is there. "
               "Effect-area weapons: the pieces inside the half of the area that projects in"),
    Field("armour_class", "int", "Armour class struck", required=False, min=0, max=9,
          help="Only if not the structure's own (military materials, Rule 16)"),
    Field("range", "float", "Range (inches)", required=False, min=0),
    Field("fire_size", "float", "Size of a new fire (sq in)", default=1.0, min=0.01),
    source=f"{SOURCE_000} 'Attacking concealed targets' 3–4, 'Creating a point system', 'Fires'; {SOURCE_004} "
           "'Attack factor', 'Range', 'Rotary weapon hits', 'Variable fire', 'Convergence Beams' "
           "(LG-8, LG-12..14, LG-17..19, LG-22, LG-24..27, LG-53..55, LG-68, LG-71, LG-75)",
)
def resolve_lg_attack_structure(state, inp, dice):
    w, s, opts = inp["weapon"], inp["structure"], state.options
    pulse = inp["mode"] == "pulse"
    if pulse and not w.variable_fire:
        refuse("mode", "pulse", f"{w.name} cannot fire in pulse mode")
    if not standing(s):
        refuse("structure", s.id, _gone(s))
    if inp["surface"] == "roof" and not s.has_roof:
        # No armour class to pit the attack factor against (LG-4), nothing on top to catch fire.
        refuse("surface", "roof", f"{s.label} has no roof: fire at its wall")
    if inp["range"] is not None and w.range_factor:
        band = range_band(w, inp["range"])
        if band in ("too_close", "out_of_range"):
            refuse("range", inp["range"], f"{w.name} cannot fire at {inp['range']:g}\": {band.replace('_', ' ')}")
    targets, troops = inp["targets"], inp["troops"]
    _inside(state, s, targets, "targets")
    if troops == "known" and not targets:
        raise InputError("targets", (), "name the piece at the known location inside")
    hits = rotary_hits(w.barrels) if w.rof_code == "R" else 1
    pens = inp["penetrated"]
    if pens > hits or (pens and not inp["hit"]):
        raise InputError("penetrated", pens, f"{pens} penetrations from {hits if inp['hit'] else 0} hit(s)")
    if not inp["hit"]:
        return [], f"{w.name} missed {s.label}"

    if w.convergence:
        # The beams pass through matter without affecting it (seed 004): no damage to the structure, and a
        # detected target gets neither concealment nor cover, so the hit lands on the troops themselves.
        effects = [Effect("hits", u.id, 1, ref=w.key, note="convergence beam") for u in targets]
        return effects, f"{w.name} hit {', '.join(u.label for u in targets) or 'nothing'} through {s.label}"

    surface = inp["surface"]
    ac = inp["armour_class"] if inp["armour_class"] is not None else s.armour_class(surface)
    af = attack_factor(w, ac, pulse)
    early = ""
    if w.weapon_type == "vaporshock" and s.fire is not None:
        # LG-62: the fire already burning where it lands sets the warhead off early: AF 4, half the area.
        af, _ = vaporshock_premature(w)
        early = " (vaporshock set off early by the fire: AF 4, half its effect area)"
    effects, words = [], [f"{w.name}{' in pulse mode' if pulse else ''} (AF {af}) hit {s.label}'s {surface}{early}" +
                          (f" {hits}×" if hits > 1 else "") + (f", {pens} penetrating" if pens else ", no penetration")]

    if opts.damage_variant and s.damage_max:
        points = damage_points(opts.damage_variant, af, w.with_effect_area, hits, pens)
        points = min(points, s.damage_max - s.damage_taken)
        if points:
            effects.append(Effect("damage", s.id, points))
            words.append(f"{points} damage ({s.damage_taken + points}/{s.damage_max})")
            if s.damage_taken + points >= s.damage_max:
                effects.append(Effect("untenable", s.id))
                words.append("destroyed: untenable")

    chance = fire_chance(w.weapon_type, opts.weather) if opts.fires and s.fire is None and \
        s.is_flammable(surface) else 0
    if chance:
        if dice.percent(chance * 10, f"Fire on {s.label} ({up_to(chance)})"):
            effects.append(Effect("fire_started", s.id, inp["fire_size"]))
            words.append("fire started")
        else:
            words.append("no fire")

    if pens and troops == "exploratory" and not targets:
        # Fired "with no idea if enemy pieces are present": one roll per piece actually in the designated
        # area (A-LG-4), so none when nobody is there; the structure still takes the attack.
        words.append("exploratory fire: no piece in the target area")
    elif pens and troops != "none":
        if w.with_effect_area:
            # Half the effect area projects inside; every piece in it is hit (LG-14).
            for u in targets:
                effects.append(Effect("hits", u.id, 1, ref=w.key, note="inside the effect area"))
            words.append(f"hits {', '.join(u.label for u in targets)}")
        else:
            # In pulse mode a beam weapon fires pulses (seed 004), so it has a pulse weapon's chance.
            pct = tables.CHANCE_INSIDE[troops]["P" if pulse else w.rof_code or "S"]
            for u in targets:
                if dice.percent(pct, f"{troops.capitalize()} fire at {u.label} ({pct}%)"):
                    effects.append(Effect("hits", u.id, 1, ref=w.key, note=f"{troops} {pct}%"))
                    words.append(f"hits {u.label}")
                else:
                    words.append(f"misses {u.label}")
    return effects, "; ".join(words)


@action(
    "lg_breach", "lg", "Combat engineers: breach a wall",
    Field("structure", "structure", "Structure being breached", fits=standing),
    Field("hit", "bool", "Hit?"),
    Field("penetrated", "bool", "Penetrated?", default=False, help="Rule 16 penetration from your rulebook"),
    Field("needed", "int", "Successful attacks needed", required=False, min=1,
          help="Set once, when the breach starts (e.g. 3 for a brick wall)"),
    source=f"{SOURCE_000} 'Combat engineers and buildings' 1–3 (LG-15, A-LG-24)",
    rolls=False,  # the players' results, entered: nothing to roll, no odds
)
def resolve_lg_breach(state, inp, dice):
    s, needed = inp["structure"], inp["needed"]
    if not standing(s):
        refuse("structure", s.id, f"{_gone(s).replace(' already', '')}: there is no wall left to breach")
    if s.breached:
        refuse("structure", s.id, f"{s.label} is already breached")
    effects = []
    if s.breach_needed == 0:
        if needed is None:
            raise InputError("needed", None, f"set how many successful attacks breach {s.label}")
        effects.append(Effect("breach_set", s.id, needed))
    elif needed is not None and needed != s.breach_needed:
        raise InputError("needed", needed, f"{s.label} already needs {s.breach_needed} successful attacks")
    total = needed if s.breach_needed == 0 else s.breach_needed
    if inp["penetrated"] and not inp["hit"]:
        raise InputError("penetrated", True, "a miss cannot penetrate")
    if not (inp["hit"] and inp["penetrated"]):
        return effects, f"No progress on {s.label}: {s.breach_scored}/{total}"
    scored = s.breach_scored + 1
    effects.append(Effect("breach_progress", s.id, scored))
    words = [f"{s.label} breached ({scored}/{total})" if scored >= total else f"{s.label}: {scored}/{total} towards a breach"]
    if scored >= total:
        effects.append(Effect("breached", s.id))
    if state.options.damage_variant and s.damage_max and s.damage_taken < s.damage_max:
        # "Each successful attack counts as one hit, causing one point of damage" (A-LG-24: with the
        # optional damage points in play the breach also counts there).
        effects.append(Effect("damage", s.id, 1))
        words.append(f"1 damage ({s.damage_taken + 1}/{s.damage_max})")
        if s.damage_taken + 1 >= s.damage_max:
            effects.append(Effect("untenable", s.id))
            words.append("destroyed: untenable")
    return effects, "; ".join(words)


@action(
    "lg_detect", "lg", "Detect a concealed piece that fired",
    Field("target", "unit", "Piece that fired"),
    Field("weapon", "weapon", "Weapon it fired"),
    Field("base", "int", "Detection number", default=tables.DETECTION_AFTER_FIRING["more_than_two_thirds"],
          min=0, max=10, help="d10 range from Rule 11 for its concealment after firing; 3 for "
                              "'More than two-thirds'"),
    source=f"{SOURCE_000} 'Attacking concealed targets' 1 and example; {SOURCE_004} 'Detection effect' "
           "(LG-10, LG-64)",
)
def resolve_lg_detect(state, inp, dice):
    u, w = inp["target"], inp["weapon"]
    stuck = cannot_fire_from(state, u)
    if stuck:
        refuse("target", u.id, f"{stuck[1]}: it is not the piece that fired")
    n = max(0, min(10, inp["base"] + w.detection_effect))
    sig = f" {w.detection_effect:+d} for the {w.name}" if w.detection_effect else ""
    if n == 0:  # nothing to roll (`percent`): say why rather than "needed 1–0"
        return [Effect("not_detected", u.id)], f"{u.label} not detected (no face detects it: detection number 0)"
    if dice.percent(n * 10, f"Detect {u.label}: {up_to(inp['base'])}{sig} = {up_to(n)}"):
        return [Effect("detected", u.id)], f"{u.label} detected (needed {up_to(n)})"
    return [Effect("not_detected", u.id)], f"{u.label} not detected (needed {up_to(n)})"


@action(
    "lg_blast", "lg", "Hit or blast: who it eliminated",
    Field("weapon", "weapon", "Weapon that hit", help="A blast warhead's survivors are incapacitated for the turn"),
    Field("caught", "units", "Pieces hit, or in the effect area"),
    Field("eliminated", "units", "Of those, eliminated", required=False, default=(), among="caught",
          help="From your damage rolls; the rest are incapacitated by a blast warhead"),
    source=f"{SOURCE_004} 'Blast effects on troops' (LG-63, A-LG-17)",
    rolls=False,  # the players' results, entered: nothing to roll, no odds
)
def resolve_lg_blast(state, inp, dice):
    w, caught, dead = inp["weapon"], inp["caught"], inp["eliminated"]
    effects = [Effect("unit_destroyed", u.id, ref=w.key) for u in dead]
    if w.weapon_type in tables.BLAST_WARHEADS:
        # Vehicles shrug the blast off; a piece that already acted has nothing left to lose this turn.
        for u in caught:
            if u not in dead and u.kind != "vehicle" and not u.acted and not u.incapacitated:
                effects.append(Effect("incapacitated", u.id, ref=w.key))
    if w.weapon_type not in tables.BLAST_WARHEADS:
        return effects, f"{w.name}: {len(dead)} eliminated (not a blast warhead: nobody is incapacitated)"
    n = sum(e.type == "incapacitated" for e in effects)
    return effects, f"{w.name}: {len(dead)} eliminated, {n} incapacitated for the rest of the turn"


@action(
    "lg_fire_casualties", "lg", "Fire: who it eliminated",
    Field("structure", "structure", "Burning structure", help="The fire that attacked them",
          fits=lambda s: s.fire is not None),
    Field("caught", "units", "Pieces the fire attacked"),
    Field("eliminated", "units", "Of those, eliminated", required=False, default=(), among="caught",
          help="From your rulebook's penetration and damage for the fire's attack factor 5 (Rule 16)"),
    source=f"{SOURCE_000} 'Fires' 5 (LG-30)",
    rolls=False,  # the players' results, entered: nothing to roll, no odds
)
def resolve_lg_fire_casualties(state, inp, dice):
    # Not refused once the fire is out: a collapse in the same upkeep puts it out after it attacked.
    s, caught, dead = inp["structure"], inp["caught"], inp["eliminated"]
    # A fire is no blast warhead (seed 004, LG-63): whoever survives it is not incapacitated.
    names = ", ".join(u.label for u in dead) or "nobody"
    return [Effect("unit_destroyed", u.id, ref=s.id) for u in dead], \
        f"Fire in {s.label}: {names} eliminated ({len(caught) - len(dead)} of {len(caught)} attacked survive)"


@action(
    "lg_fire_through", "lg", "Move through a burning area",
    Field("unit", "unit", "Piece"),
    Field("structure", "structure", "Burning structure", help="Only a structure on fire",
          fits=lambda s: s.fire is not None),
    source=f"{SOURCE_000} 'Fires' 5 (LG-30)",
    rolls=False,  # the players' results, entered: nothing to roll, no odds
)
def resolve_lg_fire_through(state, inp, dice):
    u, s = inp["unit"], inp["structure"]
    if s.fire is None:
        refuse("structure", s.id, f"{s.label} is not burning")
    af = tables.FIRE_ATTACK_FACTOR
    return [Effect("fire_attack", u.id, af, ref=s.id)], \
        f"{u.label} passes through the fire in {s.label}: attack factor {af} (resolve penetration with Rule 16)"

