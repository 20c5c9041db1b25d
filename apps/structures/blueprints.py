"""Structure templates for the scenario builder's "add structure from template" (plain data).

Damage points per damage-point variant (seed 000, "Creating a point system", LG-17..20)
-------------------------------------------------------------------------------------
Each template has a *toughness* T: how many penetrating hits from a typical weapon that reaches
buildings (attack factor about 6: high explosive, bolt and blast small arms) it takes to wreck it.
The points follow from what one such penetration is worth under each variant:

* Variant 1 — a penetration is 1 point, a hit that does not penetrate is 0: **T points**.
* Variant 2 — a hit is 1 point, a penetration its attack factor (about 6), so non-penetrating hits
  chip away as well: **5 × T** (a little under 6 × T for those extra points).
* Variant 3 — as variant 2, doubled for effect-area weapons: **6 × T**, so direct fire still needs
  T penetrations and high explosive about T / 2.

The seed's one figure anchors the scale: "24 points … may be appropriate if Variant 3 is used, but
will make a building incredibly resistant if variant 1 is used". A two-storey brick house is T = 4:
24 points under variant 3, 20 under variant 2 and 4 under variant 1 (24 under variant 1 would need
24 penetrations). Timber is weaker than brick, stone stronger, each extra storey adds one; sheds
and foxholes fall to one penetration. With no damage points (variant 0) a structure still gets the
variant-3 figure as a reference, so switching the option on later needs no retyping; the rules
ignore it while the option is off.
"""

from dataclasses import dataclass, field

VARIANT_FACTOR = {1: 1, 2: 5, 3: 6}


def damage_points(toughness, variant):
    return toughness * VARIANT_FACTOR.get(variant, VARIANT_FACTOR[3])


@dataclass(frozen=True)
class Blueprint:
    key: str
    label: str
    kind: str
    wall: str  # Material slug (wall surface)
    roof: str | None  # Material slug (roof surface)
    width: float
    depth: float
    toughness: int
    # Floors from the ground up: {side: {opening kind: count}}; "roof" = an accessible flat roof.
    floors: tuple = field(default_factory=tuple)
    flimsy: bool = False
    needs_sheet: bool = False
    breach_needed: int = 0
    note: str = ""
    ruleset: str = ""  # offered only in that ruleset's scenarios; "" in every one

    def offered_in(self, ruleset):
        # Sheets are Disposable Heroes' (a Bolt Action bunker may take its kind and shape from one):
        # LaserGrenadiers builds its fortifications from military materials instead.
        if ruleset == "lg" and self.needs_sheet:
            return False
        return not self.ruleset or self.ruleset == ruleset

    def points(self, variant):
        return damage_points(self.toughness, variant)

    @property
    def points_by_variant(self):
        return [(variant, self.points(variant)) for variant in (1, 2, 3)]


GROUND = {"front": {"door": 1, "window": 2}, "left": {"window": 1}, "right": {"window": 1}, "rear": {"door": 1}}
UPPER = {"front": {"window": 2}, "left": {"window": 1}, "right": {"window": 1}, "rear": {"window": 2}}

HOUSE_MATERIALS = {
    # walls, roof, toughness of a one-storey house
    "timber": ("timber_medium", "wood_and_shingle", 2, "Timber"),
    "brick": ("brick", "wood_and_tile", 3, "Brick"),
    "stone": ("stone_masonry_medium", "wood_and_tile", 4, "Stone"),
}


def _houses():
    for material, (wall, roof, base, label) in HOUSE_MATERIALS.items():
        for storeys in (1, 2, 3):
            yield Blueprint(
                key=f"house-{material}-{storeys}", label=f"{label} house, {storeys} floor{'s' * (storeys > 1)}",
                kind="building", wall=wall, roof=roof, width=6, depth=6 if storeys > 1 else 5,
                toughness=base + storeys - 1, floors=(GROUND,) + (UPPER,) * (storeys - 1),
            )


BLUEPRINTS = [
    *_houses(),
    Blueprint("church", "Church", "building", "stone_masonry_medium", "wood_and_tile", 8, 6, 6,
              floors=({"front": {"door": 1}, "left": {"window": 3}, "right": {"window": 3}},),
              note="Add the tower as a connected section (Bolt Action: sections of at most 8″ × 8″)."),
    Blueprint("barn", "Barn", "building", "timber_light", "thatch", 8, 5, 3,
              floors=({"front": {"door": 1}, "left": {"window": 1}, "right": {"window": 1}, "rear": {"door": 1}},)),
    Blueprint("shed", "Shed", "building", "timber_light", "wood_and_shingle", 3, 2, 1, flimsy=True,
              floors=({"front": {"door": 1}},), note="Flimsy: a tank drives through it without a roll."),
    Blueprint("foxhole", "Foxhole", "foxhole", "sandbags", None, 2, 2, 1, floors=({},)),
    Blueprint("trench", "Trench", "trench", "earthen_embankment", None, 12, 1.5, 2, floors=({},)),
    Blueprint("weapon-emplacement", "Weapon emplacement", "weapon_emplacement", "sandbags", None, 3, 3, 2,
              floors=({},)),
    Blueprint("bunker", "Bunker (with a sheet)", "bunker", "concrete", "concrete_reinforced_any_surface", 4, 4, 7,
              floors=({"front": {"firing_slit": 2}, "rear": {"door": 1}},), needs_sheet=True,
              note="Pick its sheet. Disposable Heroes: the crew starts at the sheet's total; Bolt Action: units hold it."),
    # Seed 000's permanent fortifications, "constructed of reinforced concrete": a pillbox to fight from
    # (firing slits, complete overhead cover), a bunker to shelter in (one entrance, no slits). Units hold
    # them, as they hold a building; a LaserGrenadiers scenario has no sheets to take them from.
    Blueprint("lg-pillbox", "Pillbox (reinforced concrete)", "pillbox", "concrete_reinforced",
              "concrete_reinforced_any_surface", 3, 3, 8, floors=({"front": {"firing_slit": 2}, "left": {"firing_slit": 1},
                                                                   "right": {"firing_slit": 1}, "rear": {"door": 1}},),
              ruleset="lg", note="Seed 000: firing slits and embrasures, complete overhead cover."),
    Blueprint("lg-bunker", "Bunker (reinforced concrete)", "bunker", "concrete_reinforced",
              "concrete_reinforced_any_surface", 4, 4, 10, floors=({"rear": {"door": 1}},), ruleset="lg",
              note="Seed 000: a shelter, not a fighting position: one entrance, no firing slits."),
    Blueprint("fort", "Fort (with a sheet)", "fort", "concrete_reinforced", "concrete_reinforced_any_surface", 6, 4,
              12, floors=({"front": {"firing_slit": 2}, "rear": {"door": 1}},), needs_sheet=True),
]

BY_KEY = {b.key: b for b in BLUEPRINTS}
CHOICES = [(b.key, b.label) for b in BLUEPRINTS]


def choices_for(ruleset):
    return [(b.key, b.label) for b in BLUEPRINTS if b.offered_in(ruleset)]
