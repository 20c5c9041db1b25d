"""The seeds' tables, transcribed exactly, as plain data (the Django fixtures are generated from and
checked against these). Source of each table: ../shared/seeds/<file> and rules-catalogue.md §4."""

# ---------------------------------------------------------------------------- LaserGrenadiers, seed 000

MATERIAL_ARMOR_CLASS = {  # "Armor class equivalents" table 1 (LG-3, T1)
    "brick": 6,
    "concrete": 7,
    "concrete_reinforced": 9,
    "earthen_embankment": 7,
    "logs": 6,
    "sandbags": 4,
    "sheet_metal": 3,
    "stone_masonry_light": 6,
    "stone_masonry_medium": 7,
    "stone_masonry_heavy": 8,
    "stucco": 3,
    "timber_light": 3,
    "timber_medium": 4,
    "timber_heavy": 5,
}

ROOF_ARMOR_CLASS = {  # "Armor class equivalents" table 2 (LG-4, T2)
    "concrete_reinforced_any_surface": 9,
    "metal_sheeting": 4,
    "thatch": 1,
    "wood_and_shingle": 3,
    "wood_and_tile": 4,
}

MATERIAL_NAMES = {
    "brick": "brick", "concrete": "concrete", "concrete_reinforced": "concrete, reinforced",
    "earthen_embankment": "earthen embankment", "logs": "logs", "sandbags": "sandbags",
    "sheet_metal": "sheet metal", "stone_masonry_light": "stone masonry, light",
    "stone_masonry_medium": "stone masonry, medium", "stone_masonry_heavy": "stone masonry, heavy",
    "stucco": "stucco", "timber_light": "timber, light", "timber_medium": "timber, medium",
    "timber_heavy": "timber, heavy",
    "concrete_reinforced_any_surface": "concrete, reinforced (with any surface)",
    "metal_sheeting": "metal sheeting", "thatch": "thatch", "wood_and_shingle": "wood and shingle",
    "wood_and_tile": "wood and tile",
}

# Seed 000 says fires start on "wood, thatch, vegetation, or other flammable materials"; these are
# the table materials made of wood or thatch (catalogue §4.2 note). Anything else is flammable only
# when its structure is flagged so.
FLAMMABLE_MATERIALS = frozenset({
    "logs", "timber_light", "timber_medium", "timber_heavy", "thatch", "wood_and_shingle", "wood_and_tile",
})

FIRE_CHANCE = {  # "Fires" table: a fire starts on d10 1..N (LG-26, T3)
    "blast": 9,
    "blazer": 10,
    "bolt": 8,
    "conversion_beam": 8,
    "distortion_beam": 7,
    "flamer": 10,
    "flamethrower": 10,
    "fusion": 9,
    "hammerhead": 8,
    "hellburner": 10,
    "hellfire": 10,
    "high_explosive": 6,
    "laser": 8,
    "nuclear": 10,
    "particle_beam": 7,
    "phaser": 9,
    "piercer": 7,
    "plasma": 9,
    "vaporshock": 9,
}

WEATHER_FIRE_MODIFIER = {"clear": 0, "mist": 2, "rain": 4, "very_strong_wind": 0}  # LG-27
FIRE_GROWTH_PERIOD = 2  # turns (LG-28)
FIRE_GROWTH_FACTOR = {"normal": 2, "very_strong_wind": 3}  # LG-28, LG-29
FIRE_ATTACK_FACTOR = 5  # LG-30

DAMAGE_VARIANTS = {  # LG-17..19 (T9): points for a hit that does not penetrate / one that does
    1: {"hit": 0, "penetration": "1", "effect_area_multiplier": 1},
    2: {"hit": 1, "penetration": "attack factor", "effect_area_multiplier": 1},
    3: {"hit": 1, "penetration": "attack factor", "effect_area_multiplier": 2},
}

CHANCE_INSIDE = {  # percent to hit a piece inside after penetrating (LG-12, LG-13)
    "known": {"S": 30, "B": 30, "A": 40, "P": 40, "R": 50},
    "exploratory": {"S": 10, "B": 10, "A": 20, "P": 20, "R": 30},
}

DETECTION_AFTER_FIRING = {"more_than_two_thirds": 3}  # the one Rule 11 figure seed 000 gives (LG-10)

# ---------------------------------------------------------------------------- LaserGrenadiers, seed 004

ATTACK_FACTOR_TABLE = [  # "Attack factor" table as printed (LG-53, T4)
    ("Needler, parasonar", 1),
    ("Dart, driver, neutralizer", 2),
    ("Bullet, gyrojet, sonic", 3),
    ("Cone, large caliber bullet", 4),
    ("Laser, hypervelocity and maser small arms; ultrasonic, chemical", 5),
    ("Blast, bolt, disruptor, flamer, hellfire, phaser, pulse and ray small arms; high explosive", 6),
    ("Blazer, fusion and plasma small arms; bolt, ion, laser and maser cannon; hailstorm, hammerhead, "
     "hellburner, vaporshock", 7),
    ("Disintegrator, piercer and scrambler small arms; convergence, conversion and particle beams; "
     "fusion and hypervelocity cannon", 8),
    ("Nuclear", 9),
    ("Anti-matter", None),  # 1 to 9: the armour class struck (LG-54)
]

ATTACK_FACTOR = {  # the same table by weapon type key ("small arms" covers the whole clause: A-LG-12)
    **dict.fromkeys(["needler", "parasonar"], 1),
    **dict.fromkeys(["dart", "driver", "neutralizer"], 2),
    **dict.fromkeys(["bullet", "gyrojet", "sonic"], 3),
    **dict.fromkeys(["cone", "large_caliber_bullet"], 4),
    **dict.fromkeys(["laser_small_arms", "hypervelocity_small_arms", "maser_small_arms", "ultrasonic",
                     "chemical"], 5),
    **dict.fromkeys(["blast_small_arms", "bolt_small_arms", "disruptor_small_arms", "flamer_small_arms",
                     "hellfire_small_arms", "phaser_small_arms", "pulse_small_arms", "ray_small_arms",
                     "high_explosive"], 6),
    **dict.fromkeys(["blazer_small_arms", "fusion_small_arms", "plasma_small_arms", "bolt_cannon", "ion_cannon",
                     "laser_cannon", "maser_cannon", "hailstorm", "hammerhead", "hellburner", "vaporshock"], 7),
    **dict.fromkeys(["disintegrator_small_arms", "piercer_small_arms", "scrambler_small_arms", "convergence_beam",
                     "conversion_beam", "particle_beam", "fusion_cannon", "hypervelocity_cannon"], 8),
    "nuclear": 9,
    "anti_matter": None,
}

ROF_CODES = {"A": "automatic", "B": "beam", "P": "pulse", "R": "rotary automatic", "S": "single shot"}
WEAPON_CLASS_CODES = {"L": "light", "M": "medium", "H": "heavy", "G": "magnum", "U": "ultra"}

ROTARY_HITS = {3: 1, 4: 2, 5: 2, 6: 3, 7: 3, 8: 4}  # "Rotary weapon hits" (LG-68, T6)

VARIABLE_FIRE_REDUCED = {  # "Variable fire": reduced attack in pulse mode (LG-71, T7)
    "conversion_beam": 7,
    "disintegrator": 7,
    "particle_beam": 7,
    "ray": 5,
}

BLAST_WARHEADS = frozenset({"high_explosive", "hammerhead", "nuclear", "vaporshock"})  # LG-63
VAPORSHOCK_PREMATURE_AF = 4  # LG-62

# ---------------------------------------------------------------------------- LaserGrenadiers, seed 002

UNCONTROLLED_EVENTS = [  # "Uncontrolled events" chart (LG-43, T8); beneficiary: the roller or the opponent
    {"roll": 1, "name": "Friendly artillery support", "beneficiary": "player", "turns": 2,
     "effect": "The player receives artillery support from a battery of three 100mm howitzers. The howitzers "
               "are in radio contact. All three may be directed to fire at the same target point, or may be "
               "given separate targets. The howitzers are firing Hammerhead shells at long range. The artillery "
               "support is available for two consecutive turns."},
    {"roll": 2, "name": "Friendly reinforcements", "beneficiary": "player", "turns": 1,
     "effect": "The player receives reinforcements consisting of one five man fireteam equipped as Stormers or "
               "one five man fireteam equipped as Rangers."},
    {"roll": 3, "name": "Friendly jamming", "beneficiary": "player", "turns": 1,
     "effect": "The opposing player's forces will be unable to make any successful communications attempts "
               "during this turn."},
    {"roll": 4, "name": "Friendly smart mine", "beneficiary": "player", "turns": 1,
     "effect": "An enemy vehicle of the player's choice is hit by a friendly smart mine. The mine has a "
               "Hammerhead warhead with an effect area of 4 inches."},
    {"roll": 5, "name": "Friendly sniper", "beneficiary": "player", "turns": 1,
     "effect": "A concealed sniper hits an enemy infantryman of the player's choice. The round has a "
               "penetration factor of 7."},
    {"roll": 6, "name": "Friendly casualty return", "beneficiary": "player", "turns": 1,
     "effect": "The player gets back 20% of the infantry casualties his forces have suffered so far during the "
               "battle. Determine the individual troopers randomly."},
    {"roll": 7, "name": "Enemy sniper", "beneficiary": "opponent", "turns": 1,
     "effect": "A concealed sniper hits an infantryman of the opposing player's choice. The round has a "
               "penetration factor of 7."},
    {"roll": 8, "name": "Enemy smart mine", "beneficiary": "opponent", "turns": 1,
     "effect": "A vehicle of the opposing player's choice is hit by a smart mine. The mine has a Hammerhead "
               "warhead with an effect area of 4 inches."},
    {"roll": 9, "name": "Enemy jamming", "beneficiary": "opponent", "turns": 1,
     "effect": "The player's forces will be unable to make any successful communications attempts during this "
               "turn."},
    {"roll": 10, "name": "Enemy artillery support", "beneficiary": "opponent", "turns": 2,
     "effect": "The opposing player receives artillery support from a battery of three 100mm howitzers. The "
               "howitzers are in radio contact. All three may be directed to fire at the same target point, or "
               "may be given separate targets. The howitzers are firing Hammerhead shells at long range. The "
               "artillery support is available for two consecutive turns."},
]

LG_PASSES_TO_END_TURN = 4  # A, B, A, B: "both players pass two times in a row" (A-LG-7)

# ---------------------------------------------------------------------------- Bolt Action, seed 001

FORTIFICATION_KINDS = frozenset({"bunker", "fort", "pillbox", "strongpoint"})
HE_VALUES = {"D3": (1, 3), "D6": (1, 6), "2D6": (2, 6), "3D6": (3, 6)}  # dice, sides
HE_COLLAPSE_VALUES = frozenset({"2D6", "3D6"})  # only these bring a building down (BA-24)
COLLAPSE_HITS = {"building": 10, "bunker": 12}  # counted before halving for Down (BA-24, BA-55)
COVER_TO_HIT = {"building": -2, "bunker": -4}  # BA-18, BA-53; flamethrowers and HE ignore it
DAMAGE_BASE = {"inexperienced": 3, "regular": 4, "veteran": 5}  # BA core, implied by seed's 4+/5+/6+
EXTRA_PROTECTION = 1  # BA-19
INDIRECT_EXPLODES_ON = 4  # D6 4–6 explodes on this floor, 1–3 falls through (BA-27)
FLAME_FIRE_ON = 4  # D6 4–6 sets a building alight (BA-30)
TANK_RAM = {"heavy": 10, "super_heavy": 11}  # D6 + this (BA-46)
BUILDING_RAM_DICE = {"wooden": 2, "brick": 3}  # nD6, rolled by the opponent (BA-46)
PLUNGING_RANGE = 12  # inches (BA-15)
SHOOTERS_PER_OPENING = 2  # BA-11
SHOOTERS_PER_ROOF_SIDE = 5  # BA-12

# ---------------------------------------------------------------------------- Disposable Heroes, seed 003

DH_COVER = {"bunker": {"modifier": -5, "name": "Reinforced", "second_d10_at_most": 5},
            "fort": {"modifier": -6, "name": "Heavily Reinforced", "second_d10_at_most": 4}}
DH_ACQUIRE_MODIFIER = {"bunker": 0, "fort": 2}
DH_ROUT_DISTANCE = 9
DH_PINS_TO_ROUT = 3
DH_BLAST_DICE = 10

# "Fortification Penetrating Hits Results" (DH-12, T11) as printed. The last two rows overlap at 10;
# `dh.ph_band` resolves it per the battle option (A-DH-1).
DH_PH_TABLE = [
    {"band": "≤2", "low": None, "high": 2, "destroyed": False, "blast_ap": None, "guts": True, "ph": 1,
     "heaviest": False, "eliminated": False, "text": "No effect. Guts Check. 1 PH."},
    {"band": "3–4", "low": 3, "high": 4, "destroyed": False, "blast_ap": 3, "guts": True, "ph": 1,
     "heaviest": False, "eliminated": False, "text": "Blast vs. Crew, 10D10, AP 3. Guts Check. 1 PH."},
    {"band": "5–6", "low": 5, "high": 6, "destroyed": False, "blast_ap": 6, "guts": True, "ph": 2,
     "heaviest": False, "eliminated": False, "text": "Blast vs. Crew, 10D10, AP 6. Guts Check. 2 PH."},
    {"band": "7–8", "low": 7, "high": 8, "destroyed": False, "blast_ap": 8, "guts": True, "ph": 2,
     "heaviest": True, "eliminated": False,
     "text": "Blast vs. Crew, 10D10, AP 8. Guts Check. 2 PH. Destroys Heaviest Weapon."},
    {"band": "9–10", "low": 9, "high": 10, "destroyed": True, "blast_ap": 9, "guts": False, "ph": 0,
     "heaviest": False, "eliminated": False,
     "text": "Destroyed, Blast vs. Crew, 10D10, AP 9, survivors Routed (3 Pin markers and Rout 9\")"},
    {"band": "10+", "low": 10, "high": None, "destroyed": True, "blast_ap": None, "guts": False, "ph": 0,
     "heaviest": False, "eliminated": True, "text": "Destroyed, entire Crew and Fortification eliminated"},
]


def _front(walls_to, walls_av, vision_av):
    return [{"location": "Walls", "d10_from": 1, "d10_to": walls_to, "av": walls_av},
            {"location": "Vision", "d10_from": walls_to + 1, "d10_to": 10, "av": vision_av}]


def _rear(walls_to, walls_av, entrance_av):
    return [{"location": "Walls", "d10_from": 1, "d10_to": walls_to, "av": walls_av},
            {"location": "Entrance", "d10_from": walls_to + 1, "d10_to": 10, "av": entrance_av}]


def _locations(front, vision, side, rear, entrance, top, walls_to=8):
    return {"front": _front(walls_to, front, vision),
            "side": [{"location": "Walls", "d10_from": 1, "d10_to": 10, "av": side}],
            "rear": _rear(walls_to, rear, entrance), "top": {"av": top}}


def _weapon(crew, name, location, rng, rof, ap, mm, dm, special=""):
    return {"crew": crew, "name": name, "location": location, "range": rng, "rof": rof, "ap": ap, "mm": mm,
            "dm": dm, "special": special}


_MG34 = _weapon(3, "MG34 HMG", "Infantry", 60, 6, 8, -3, -3, "No Acq.")
_SMALL_ARMS_ROW = [1, 3, 4, 5, 7, 8, 9, 10, 12, 13]

# The eight filled-in sample sheets of seed 003, in the order printed ("Sample Fortifications").
# Shape = the BunkerSheet model's JSON. Crew "all" = "All Crew"; the seed leaves the second weapon's
# cell blank on the two turret sheets and "All Crew" is read as covering both (catalogue §4.12).
DH_SHEETS = [
    {"slug": "soviet-at-hmg-loghouse", "name": "Soviet AT/HMG Loghouse", "kind": "bunker", "kind_note": "",
     "dm": 0, "crew_total": 12, "leaders": {"NCO": 1},
     "locations": _locations(75, 10, 75, 50, 25, 25),
     "weapons": [_weapon(3, "45mm", "Main Gun", 48, 1, 1, -1, -1),
                 _weapon(3, "Maxim", "Infantry", 60, 4, 8, -3, -3, "No Acq.")],
     "features": ["Basic Sights"], "penetration_weapon": "45mm",
     "penetration_row": [12, 24, 36, 48, 60, 72, 84, 96, 108, 120], "note": ""},
    {"slug": "soviet-rifle-pit", "name": "Soviet Rifle Pit", "kind": "bunker", "kind_note": "",
     "dm": 0, "crew_total": 9, "leaders": {"NCO": 1},
     "locations": _locations(50, 10, 55, 40, 25, 25),
     "weapons": [_weapon(None, "(Rifles)", None, None, None, None, None, None)],
     "features": ["Basic Sights"], "penetration_weapon": "Rifles", "penetration_row": _SMALL_ARMS_ROW, "note": ""},
    {"slug": "soviet-t-34-turret-bunker", "name": "Soviet T-34 Turret Bunker", "kind": "bunker", "kind_note": "",
     "dm": 0, "crew_total": 4, "leaders": {"NCO": 1},
     "locations": _locations(95, 56, 62, 62, 62, 20),
     "weapons": [_weapon("all", "76.2mm", "Main Gun", 48, 1, 2, -2, 0),
                 _weapon("all", "7.62 DT", "Coaxial", 48, 4, 8, -2, -3, "+1 Fire/Acq")],
     "features": ["Basic Sights"], "penetration_weapon": "76.2mm",
     "penetration_row": [13, 26, 39, 52, 65, 78, 91, 104, 117, 130],
     "note": "The definitions for \"Walls\", \"Vision\", and \"Entrance\" refer to appropriate areas of the "
             "T-34 turret."},
    {"slug": "german-hmg-loghouse", "name": "German HMG Loghouse", "kind": "bunker", "kind_note": "",
     "dm": 0, "crew_total": 10, "leaders": {"NCO": 1, "Jr NCO": 1},
     "locations": _locations(90, 10, 90, 60, 20, 30),
     "weapons": [dict(_MG34), dict(_MG34)],
     "features": ["Basic Sights"], "penetration_weapon": "MG34", "penetration_row": _SMALL_ARMS_ROW, "note": ""},
    {"slug": "german-at-bunker", "name": "German AT Bunker", "kind": "bunker", "kind_note": "",
     "dm": 0, "crew_total": 8, "leaders": {"NCO": 1},
     "locations": _locations(105, 0, 105, 60, 50, 40),
     "weapons": [_weapon(4, "7.5cm", "Main Gun", 60, 1, 2, -2, 0)],
     "features": ["Advanced Sights", "Radio"], "penetration_weapon": "7.5cm",
     "penetration_row": [17, 35, 53, 70, 88, 105, 123, 140, 158, 175], "note": ""},
    {"slug": "german-hmg-blockhouse", "name": "German HMG Blockhouse", "kind": "bunker", "kind_note": "",
     "dm": 0, "crew_total": 10, "leaders": {"NCO": 1, "Jr NCO": 1},
     "locations": _locations(145, 20, 115, 100, 40, 40),
     "weapons": [dict(_MG34), dict(_MG34)],
     "features": ["Basic Sights"], "penetration_weapon": "MG34", "penetration_row": _SMALL_ARMS_ROW, "note": ""},
    {"slug": "german-concrete-blockhouse", "name": "German Concrete Blockhouse", "kind": "fort",
     "kind_note": "Fort, Including Indirect Fire(see Artillery listing for more details)",
     "dm": -3, "crew_total": 24, "leaders": {"Sr NCO (Platoon Sergeant)": 1},
     "locations": _locations(250, 40, 200, 175, 75, 75, walls_to=9),
     "weapons": [_weapon(6, "10.5cm", "FG", 24, 1, 4, -3, 2, "Indirect"),
                 _weapon(6, "10.5cm", "FG", 24, 1, 4, -3, 2, "Indirect")],
     "features": ["Advanced Sights", "Radio"], "penetration_weapon": "10.5cm",
     "penetration_row": [10, 20, 30, 40, 50, 60, 70, 80, 90, 100], "note": ""},
    {"slug": "german-h-35-atlantic-wall-turret-bunker", "name": "German H-35 Atlantic Wall Turret Bunker",
     "kind": "bunker", "kind_note": "", "dm": 1, "crew_total": 2, "leaders": {"NCO": 1},
     "locations": _locations(50, 61, 51, 51, 51, 12),
     "weapons": [_weapon("all", "37mm Sa18", "Main Gun", 48, 1, 1, -1, -1),
                 _weapon("all", "7.5mm MI", "Main Gun", 48, 4, 8, -2, -3)],
     "features": ["Basic Sights"], "penetration_weapon": "37mm",
     "penetration_row": [3, 6, 9, 12, 15, 18, 21, 24, 27, 30],
     "note": "The definitions for \"Walls\", \"Vision\", and \"Entrance\" refer to appropriate areas of the "
             "H-35 turret."},
]

# The seed's blank card: the location ranges are pre-printed, every number is left to the designer.
DH_BLANK_SHEET = {
    "slug": "blank", "name": "", "kind": "bunker", "kind_note": "", "dm": 0, "crew_total": 0, "leaders": {},
    "locations": {"front": [{"location": "Walls", "d10_from": 1, "d10_to": 8, "av": None},
                            {"location": "Vision", "d10_from": 9, "d10_to": 10, "av": None}],
                  "side": [{"location": "Walls", "d10_from": 1, "d10_to": 10, "av": None}],
                  "rear": [{"location": "Walls", "d10_from": 1, "d10_to": 8, "av": None},
                           {"location": "Entrance", "d10_from": 9, "d10_to": 10, "av": None}],
                  "top": {"av": None}},
    "weapons": [], "features": [], "penetration_weapon": "", "penetration_row": [], "note": "", "is_blank": True,
}

PEN_COLUMNS = ["<2", "2", "3", "4", "5", "6", "7", "8", "9", "10+"]  # the d10 column heads of the row

# ---------------------------------------------------------------------------- example weapons

# The seeds give weapon *types* and a few named weapons in their examples; full weapon charts are
# not among them. These profiles are what the examples need, with the seeds' numbers where given
# and plain placeholders (noted) where the charts would be needed.
EXAMPLE_WEAPONS = [
    # LaserGrenadiers
    {"key": "heavy_fusion_rifle", "name": "Heavy fusion rifle", "ruleset": "lg", "weapon_type": "fusion_small_arms",
     "rof_code": "S", "weapon_class": "H", "effect_area": 1.0},  # AF 7 and an effect area: seed 000 example
    {"key": "bolt_rifle", "name": "Bolt rifle", "ruleset": "lg", "weapon_type": "bolt_small_arms",
     "rof_code": "S", "weapon_class": "M", "detection_effect": 1},  # +1 detection: seed 000 example
    {"key": "light_laser_cannon", "name": "Light laser cannon", "ruleset": "lg", "weapon_type": "laser_cannon",
     "rof_code": "P", "range_factor": 20, "vehicle_only": True},  # range factor 20: seed 004 example
    {"key": "laser_rifle", "name": "Laser rifle", "ruleset": "lg", "weapon_type": "laser_small_arms",
     "rof_code": "P", "weapon_class": "M"},
    {"key": "chainsaw", "name": "Chainsaw", "ruleset": "lg", "weapon_type": "chainsaw", "rof_code": "S"},
    {"key": "anti_matter_missile", "name": "Anti-matter missile", "ruleset": "lg", "weapon_type": "anti_matter",
     "rof_code": "S"},
    {"key": "hammerhead_grenade", "name": "Hammerhead grenade", "ruleset": "lg", "weapon_type": "hammerhead",
     "rof_code": "S", "effect_area": 1.0},
    {"key": "he_shell", "name": "High explosive shell", "ruleset": "lg", "weapon_type": "high_explosive",
     "rof_code": "S", "effect_area": 2.0, "vehicle_only": True},
    {"key": "rotary_cone_gun", "name": "Rotary cone gun (6 barrels)", "ruleset": "lg", "weapon_type": "cone",
     "rof_code": "R", "barrels": 6, "weapon_class": "H"},
    {"key": "particle_beam", "name": "Particle beam", "ruleset": "lg", "weapon_type": "particle_beam",
     "rof_code": "B", "variable_fire": True, "vehicle_only": True},
    {"key": "ray_rifle", "name": "Ray rifle", "ruleset": "lg", "weapon_type": "ray_small_arms", "rof_code": "B",
     "variable_fire": True},
    {"key": "convergence_beam", "name": "Convergence beam", "ruleset": "lg", "weapon_type": "convergence_beam",
     "rof_code": "B", "convergence": True, "vehicle_only": True},
    {"key": "flamer", "name": "Flamer", "ruleset": "lg", "weapon_type": "flamer_small_arms", "rof_code": "S",
     "effect_area": 1.0},
    {"key": "bullet_rifle", "name": "Rifle", "ruleset": "lg", "weapon_type": "bullet", "rof_code": "S"},
    # Bolt Action: "damage in buildings" values come from the core HE chart; one weapon per value.
    {"key": "he_d3", "name": "Light HE (D3)", "ruleset": "ba", "he_value": "D3", "heavy_weapon": True},
    {"key": "he_d6", "name": "Medium HE (D6)", "ruleset": "ba", "he_value": "D6", "heavy_weapon": True},
    {"key": "he_2d6", "name": "Heavy HE (2D6)", "ruleset": "ba", "he_value": "2D6", "heavy_weapon": True},
    {"key": "he_3d6", "name": "Super-heavy HE (3D6)", "ruleset": "ba", "he_value": "3D6", "heavy_weapon": True},
    {"key": "mortar_2d6", "name": "Heavy mortar (2D6, indirect)", "ruleset": "ba", "he_value": "2D6",
     "heavy_weapon": True, "indirect": True},
    {"key": "howitzer_3d6", "name": "Heavy howitzer (3D6, indirect)", "ruleset": "ba", "he_value": "3D6",
     "heavy_weapon": True, "indirect": True, "heavy_howitzer": True},
    {"key": "ba_flamethrower", "name": "Flamethrower", "ruleset": "ba", "flamethrower": True, "heavy_weapon": True},
    {"key": "ba_rifle", "name": "Rifle", "ruleset": "ba"},
    # Disposable Heroes: the sample sheets' guns with their printed DM and penetration rows.
    {"key": "dh_45mm", "name": "45mm", "ruleset": "dh", "dh_category": "main_gun", "rof": 1, "ap": 1, "mm": -1,
     "dm": -1, "penetration_row": [12, 24, 36, 48, 60, 72, 84, 96, 108, 120]},
    {"key": "dh_76mm", "name": "76.2mm", "ruleset": "dh", "dh_category": "main_gun", "rof": 1, "ap": 2, "mm": -2,
     "dm": 0, "penetration_row": [13, 26, 39, 52, 65, 78, 91, 104, 117, 130]},
    {"key": "dh_75mm", "name": "7.5cm", "ruleset": "dh", "dh_category": "main_gun", "rof": 1, "ap": 2, "mm": -2,
     "dm": 0, "penetration_row": [17, 35, 53, 70, 88, 105, 123, 140, 158, 175]},
    {"key": "dh_105mm", "name": "10.5cm", "ruleset": "dh", "dh_category": "main_gun", "rof": 1, "ap": 4, "mm": -3,
     "dm": 2, "penetration_row": [10, 20, 30, 40, 50, 60, 70, 80, 90, 100]},
    {"key": "dh_37mm", "name": "37mm Sa18", "ruleset": "dh", "dh_category": "main_gun", "rof": 1, "ap": 1,
     "mm": -1, "dm": -1, "penetration_row": [3, 6, 9, 12, 15, 18, 21, 24, 27, 30]},
    {"key": "dh_rifle", "name": "Rifle", "ruleset": "dh", "dh_category": "small_arms"},
    {"key": "dh_mg34", "name": "MG34", "ruleset": "dh", "dh_category": "small_arms", "rof": 6, "ap": 8,
     "mm": -3, "dm": -3},
    # The flamethrower's DM lives in the DH core charts (not in the seeds): 0 until a club enters it.
    {"key": "dh_flamethrower", "name": "Flamethrower", "ruleset": "dh", "dh_category": "flamethrower", "dm": 0},
]
