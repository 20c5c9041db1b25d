"""The reference fixtures against the seeds themselves, and against the rules engine's tables.

Every expected value in the seed comparisons is parsed from the seed text in docs/seeds/, not
copied from the fixtures, so a typo in either shows up as a mismatch row by row. The rules
comparisons check that the fixtures name things exactly as apps.rules.tables does (the battle
service maps database rows straight into apps.rules.state records).
"""

import json
import re
from pathlib import Path

import pytest
from django.conf import settings
from django.core.management import call_command

from apps.armies.models import Weapon, WeaponType
from apps.rules import tables
from apps.rules.lg import base_type
from apps.rules.state import FortSheet
from apps.structures.models import BunkerSheet, FireChance, Material, WeatherEffect

SEEDS = Path(settings.BASE_DIR) / "docs" / "seeds"
FIXTURES = Path(settings.BASE_DIR) / "fixtures"
FIXTURE_FILES = ["materials.json", "fire.json", "weapon_types.json", "bunker_sheets.json", "weapons.json"]


def seed(number):
    (path,) = SEEDS.glob(f"{number}_*.txt")
    return path.read_text(encoding="utf-8")


def between(text, start, end):
    head = text.index(start) + len(start)
    return text[head:text.index(end, head)]


def tab_rows(block, value_pattern):
    return [(m[1].strip(), m[2]) for m in re.finditer(rf"^(.+?)\t({value_pattern})$", block, re.M)]


def rules_key(printed):
    """A name as the seed prints it → the rules tables' key: 'Conversion beam' → conversion_beam,
    'anti-matter' → anti_matter."""
    return re.sub(r"[\s-]+", "_", printed.strip().lower())


# Seed 000 ------------------------------------------------------------------------------------

def seed_wall_armor_classes():
    block = between(seed("000"), "armor class equivalents of various types of non-military",
                    "2. The following table gives the armor class equivalents of various materials")
    return {name.lower(): int(ac) for name, ac in tab_rows(block, r"\d+")}


def seed_roof_armor_classes():
    block = between(seed("000"), "various materials and types of roofing construction.", "3. The armor classes")
    return {name.lower(): int(ac) for name, ac in tab_rows(block, r"\d+")}


def seed_fire_table():
    block = between(seed("000"), "Weapon type\tDie roll to cause a fire", "3. Rain and damp")
    return {name: int(value.removeprefix("1 to ")) for name, value in tab_rows(block, r"1 to \d+")}


def seed_weather_table():
    block = between(seed("000"), "Condition\tEffect on die roll", "4. For convenience")
    return {name.lower(): int(value) for name, value in tab_rows(block, r"-\d+")}


# Seed 004 ------------------------------------------------------------------------------------

def expand_weapon_types(cell):
    """'Laser, hypervelocity and maser small arms; ultrasonic, chemical' → one name per type.
    A trailing 'small arms' / 'cannon' / 'beams' applies to every name in its clause (catalogue
    reading A-LG-12)."""
    names = []
    for clause in cell.lower().split(";"):
        clause, suffix = clause.strip(), ""
        for tail, singular in ((" small arms", " small arms"), (" cannon", " cannon"), (" beams", " beam")):
            if clause.endswith(tail):
                clause, suffix = clause[: -len(tail)], singular
        names += [part.strip() + suffix for part in re.split(r",\s*|\s+and\s+", clause) if part.strip()]
    return names


def seed_attack_factors():
    block = between(seed("004"), "Weapon type\tAttack factor", "3. The attack factor for anti-matter")
    table = {}
    for cell, value in tab_rows(block, r"\d+|1 to 9"):
        for name in expand_weapon_types(cell):
            assert name not in table, f"{name} listed twice in the seed"
            table[name] = None if value == "1 to 9" else int(value)
    return table


def seed_variable_fire():
    block = between(seed("004"), "Weapon\tReduced attack", "4. When the weapon")
    return {name.lower(): int(value) for name, value in tab_rows(block, r"\d+")}


# Seed 003 ------------------------------------------------------------------------------------

def cells(line):
    return [c.strip() for c in line.strip().strip("|").split("|")]


def table_blocks(text):
    block = []
    for line in text.splitlines() + [""]:
        if line.startswith("|"):
            if not (re.fullmatch(r"[|\-\s]+", line) and "-" in line):  # skip separators, keep blank rows
                block.append(cells(line))
        elif block:
            yield block
            block = []


def number(cell):
    cell = cell.replace('"', "").strip()
    return None if cell in {"", "-"} else int(cell)


def d10(cell):
    lo, _, hi = cell.partition("-")
    return int(lo), int(hi or lo)


def av(cell):
    return None if cell == "" else int(cell.removesuffix("AV").strip())


def parse_sheet(rows):
    name, kind_cell = rows[0][0], rows[1][0]
    dm_cell = next(c for c in rows[1] if c.startswith("DM:"))
    crew_text, walls, entrance, vision = rows[3][0], rows[3], rows[4], rows[5]
    weapons_at = next(i for i, r in enumerate(rows) if r[0] == "Crew Per Weapon") + 1
    features_at = next(i for i, r in enumerate(rows) if r[0] == "Features")

    total = re.match(r"(\d+) men", crew_text)
    leaders = {}
    if "including" in crew_text:
        for part in crew_text.split("including", 1)[1].split(" and "):
            count, rank = re.match(r"\s*(\d+) (.+)", part).groups()
            leaders[rank.strip().lower()] = int(count)

    weapons, crew = [], None
    for row in rows[weapons_at:features_at]:
        if not any(row):
            continue
        # A blank crew cell under "All Crew" is the same crew (catalogue, notes on T12).
        if row[0] == "All Crew":
            crew = "all"
        elif row[0] == "-":
            crew = None
        elif row[0]:
            crew = int(row[0])
        weapons.append({
            "crew": crew, "name": row[1], "location": None if row[2] == "-" else row[2], "range": number(row[3]),
            "rof": number(row[4]), "ap": number(row[5]), "mm": number(row[6]), "dm": number(row[7]),
            "special": "" if row[8] == "-" else row[8],
        })

    feature_row, penetration_row = rows[features_at + 1], rows[features_at + 2]
    features = [f for f in (feature_row[0], penetration_row[0]) if f not in {"", "-"}]
    return {
        "name": name,
        "kind": kind_cell.split(",")[0].strip().lower(),
        "dm": number(dm_cell.removeprefix("DM:")) if dm_cell != "DM:" else None,
        "crew_total": int(total[1]) if total else None,
        "leaders": leaders,
        "locations": {
            "front": [("Walls", *d10(walls[2]), av(walls[3])), ("Vision", *d10(vision[2]), av(vision[3]))],
            "side": [("Walls", *d10(walls[4]), av(walls[5]))],
            "rear": [("Walls", *d10(walls[6]), av(walls[7])), ("Entrance", *d10(entrance[6]), av(entrance[7]))],
            "top": av(vision[7]),
        },
        "weapons": weapons,
        "features": features,
        "penetration_weapon": penetration_row[1],
        "penetration_row": [number(c) for c in penetration_row[2:12]],
    }


def seed_sheets():
    sheets = [parse_sheet(rows) for rows in table_blocks(seed("003")) if any(r[0] == "Total Crew" for r in rows)]
    return [s for s in sheets if s["name"]], [s for s in sheets if not s["name"]]


def as_printed(sheet):
    """A fixture sheet in the parser's shape."""
    locations = {
        facing: [(loc["location"], loc["d10_from"], loc["d10_to"], loc["av"]) for loc in sheet.locations[facing]]
        for facing in ("front", "side", "rear")
    }
    locations["top"] = sheet.locations["top"]["av"]
    return {
        "name": sheet.name, "kind": sheet.kind, "dm": sheet.dm, "crew_total": sheet.crew_total,
        "leaders": {rank.lower(): count for rank, count in sheet.leaders.items()},
        "locations": locations, "weapons": sheet.weapons, "features": sheet.features,
        "penetration_weapon": sheet.penetration_weapon, "penetration_row": sheet.penetration_row,
    }


# Tests ---------------------------------------------------------------------------------------

@pytest.fixture
def reference(db):
    call_command("loaddata", *[str(FIXTURES / name) for name in FIXTURE_FILES], verbosity=0)


def test_fixture_files_are_readable_json_lists():
    for name in FIXTURE_FILES:
        text = (FIXTURES / name).read_text(encoding="utf-8")
        rows = json.loads(text)
        assert isinstance(rows, list) and rows, name
        assert text.startswith("[\n  {"), f"{name} is not indented by 2"


def test_the_parsers_read_what_the_seeds_print():
    # Guards the parsers themselves: a parser that silently read nothing would make the
    # row-by-row comparisons below vacuous.
    assert len(seed_wall_armor_classes()) == 14
    assert len(seed_roof_armor_classes()) == 5
    assert len(seed_fire_table()) == 19
    assert seed_weather_table() == {"mist": -2, "rain": -4}
    assert seed_attack_factors()["laser cannon"] == 7
    assert seed_attack_factors()["laser small arms"] == 5
    samples, blanks = seed_sheets()
    assert len(samples) == 8 and len(blanks) == 3


def test_wall_materials_match_seed_000_table_1(reference):
    loaded = {m.name.lower(): m.armor_class for m in Material.objects.filter(surface="wall")}
    assert loaded == seed_wall_armor_classes()


def test_roof_materials_match_seed_000_table_2(reference):
    loaded = {m.name.lower(): m.armor_class for m in Material.objects.filter(surface="roof")}
    assert loaded == seed_roof_armor_classes()


def test_material_flags(reference):
    flammable = set(Material.objects.filter(flammable=True).values_list("slug", flat=True))
    assert flammable == {"logs", "timber_light", "timber_medium", "timber_heavy", "thatch", "wood_and_shingle",
                         "wood_and_tile"}
    construction = dict(Material.objects.filter(surface="wall").values_list("slug", "construction"))
    assert construction["brick"] == "brick"
    assert construction["logs"] == "wooden"
    assert {construction[f"timber_{w}"] for w in ("light", "medium", "heavy")} == {"wooden"}
    assert {construction[f"stone_masonry_{w}"] for w in ("light", "medium", "heavy")} == {"stone"}
    assert construction["concrete"] == construction["concrete_reinforced"] == "concrete"
    assert construction["sandbags"] == construction["earthen_embankment"] == "earth"
    assert construction["sheet_metal"] == "metal"


def test_fire_chances_match_seed_000(reference):
    # Stored under the rules' keys: "Conversion beam" is conversion_beam.
    printed = {rules_key(name): value for name, value in seed_fire_table().items()}
    assert dict(FireChance.objects.values_list("weapon_type", "d10_max")) == printed


def test_weather_effects_match_seed_000(reference):
    loaded = {condition: -modifier for condition, modifier in WeatherEffect.objects.values_list("condition", "fire_modifier")}
    assert loaded == seed_weather_table()


def test_weapon_types_match_seed_004_attack_factor_table(reference):
    loaded = dict(WeaponType.objects.values_list("name", "attack_factor"))
    assert loaded == seed_attack_factors()
    for slug, name in WeaponType.objects.values_list("slug", "name"):
        assert slug == rules_key(name), name
    assert WeaponType.objects.get(slug="anti_matter").attack_factor is None


def test_sample_bunker_sheets_match_seed_003(reference):
    samples, _ = seed_sheets()
    library = {s.name: s for s in BunkerSheet.objects.filter(club=None, is_blank=False)}
    assert set(library) == {s["name"] for s in samples}
    for printed in samples:
        assert as_printed(library[printed["name"]]) == printed, printed["name"]


def test_blank_sheet_has_the_printed_ranges_and_nothing_else(reference):
    _, blanks = seed_sheets()
    (blank,) = BunkerSheet.objects.filter(club=None, is_blank=True)
    fixture = as_printed(blank)
    assert fixture["locations"] == blanks[0]["locations"]
    assert fixture["weapons"] == [] and fixture["penetration_row"] == [] and fixture["crew_total"] == 0


def test_library_sheet_slugs_are_stable(reference):
    assert set(BunkerSheet.objects.filter(club=None).values_list("slug", flat=True)) == {
        "soviet-at-hmg-loghouse", "soviet-rifle-pit", "soviet-t-34-turret-bunker", "german-hmg-loghouse",
        "german-at-bunker", "german-hmg-blockhouse", "german-concrete-blockhouse",
        "german-h-35-atlantic-wall-turret-bunker", "blank",
    }


def test_dh_catalogue_carries_every_sheet_weapon_as_printed(reference):
    samples, _ = seed_sheets()
    catalogue = {w.name: w for w in Weapon.objects.filter(ruleset="dh")}
    for sheet in samples:
        for printed in sheet["weapons"]:
            name = printed["name"].strip("()")
            assert name in catalogue, f"{name} ({sheet['name']}) is not in the DH catalogue"
            weapon = catalogue[name]
            if printed["ap"] is not None:
                assert (weapon.ap, weapon.rof, weapon.mm, weapon.dm) == (
                    printed["ap"], printed["rof"], printed["mm"], printed["dm"]), name
            if printed["range"] is not None:
                assert weapon.range_in == printed["range"], name
                assert weapon.special == printed["special"], name
        # The row printed for e.g. "MG34" belongs to the sheet's "MG34 HMG".
        pen = sheet["penetration_weapon"]
        (carrier,) = [w for n, w in catalogue.items() if n == pen or n.startswith(pen + " ")]
        assert carrier.penetration_row == sheet["penetration_row"], (sheet["name"], carrier.name)


def test_dh_attacker_weapons_leave_unknown_values_empty_and_say_where_they_are(reference):
    categories = dict(Weapon.objects.filter(ruleset="dh").values_list("slug", "dh_category"))
    for slug, category in {"rifles": "small_arms", "smg": "small_arms", "lmg": "small_arms", "bazooka": "infantry_at",
                           "panzerschreck": "infantry_at", "anti-tank-rifle": "atr", "flamethrower": "flamethrower",
                           "explosives": "explosives"}.items():
        assert categories[slug] == category
        weapon = Weapon.objects.get(ruleset="dh", slug=slug)
        assert weapon.ap is None and weapon.rof is None and weapon.mm is None and weapon.dm is None
        assert weapon.range_in is None and weapon.special == ""
        assert "DH core rulebook" in weapon.notes


def test_dh_ranges_and_specials_have_their_own_fields_not_the_notes(reference):
    for weapon in Weapon.objects.filter(ruleset="dh", range_in__isnull=False):
        assert f'{int(weapon.range_in)}"' not in weapon.notes, weapon.slug
        assert "range" not in weapon.notes.lower(), weapon.slug
        if weapon.special:
            assert weapon.special not in weapon.notes, weapon.slug
    specials = dict(Weapon.objects.filter(ruleset="dh").exclude(special="").values_list("slug", "special"))
    assert specials == {"maxim": "No Acq.", "7-62-dt": "+1 Fire/Acq", "mg34-hmg": "No Acq.", "10-5cm": "Indirect"}
    assert not Weapon.objects.exclude(ruleset="dh").filter(range_in__isnull=False).exists()


def test_lg_catalogue_attack_factors_follow_the_seed_table(reference):
    table = seed_attack_factors()
    seed_type = {
        "heavy-fusion-rifle": "fusion small arms", "light-laser-cannon": "laser cannon",
        "bolt-rifle": "bolt small arms", "minigun-6-barrel": "bullet", "particle-beam": "particle beam",
        "ray-rifle": "ray small arms", "convergence-beam": "convergence beam", "anti-matter-warhead": "anti-matter",
        "hammerhead-missile": "hammerhead", "high-explosive-grenade": "high explosive",
        "laser-rifle": "laser small arms",
    }
    lg = {w.slug: w for w in Weapon.objects.filter(ruleset="lg")}
    assert set(lg) == set(seed_type) | {"chainsaw"}
    for slug, weapon_type in seed_type.items():
        assert lg[slug].attack_factor == table[weapon_type], slug
        assert lg[slug].weapon_type == rules_key(weapon_type), slug
    assert lg["chainsaw"].attack_factor is None and lg["chainsaw"].weapon_type == ""


def test_lg_catalogue_examples_from_the_seeds(reference):
    lg = {w.slug: w for w in Weapon.objects.filter(ruleset="lg")}
    range_example = re.search(r"if a light laser cannon has a range factor of (\d+)", seed("004"))
    assert lg["light-laser-cannon"].range_factor == int(range_example[1])
    detection_example = re.search(r"increased by \+(\d) due to the signature of the bolt rifle", seed("000"))
    assert lg["bolt-rifle"].detection_effect == int(detection_example[1])
    assert (lg["minigun-6-barrel"].rof_code, lg["minigun-6-barrel"].barrels) == ("R", 6)
    assert lg["laser-rifle"].rof_code == "P"
    # Variable fire: exactly the catalogue's beam weapons the seed lets switch to pulse mode, and
    # their reduced attack is the printed one (attack factor - 1).
    reduced = seed_variable_fire()
    assert {s for s, w in lg.items() if w.variable_fire} == {"particle-beam", "ray-rifle"}
    assert lg["particle-beam"].attack_factor - 1 == reduced["particle beams"]
    assert lg["ray-rifle"].attack_factor - 1 == reduced["ray weapons"]


def test_lg_catalogue_effect_areas_are_the_ones_the_seeds_name(reference):
    """Seed 000's variant 3 example: the heavy fusion rifle "has an effect area", so a penetration
    scores 7 × 2 = 14 and a hit alone 1 × 2 = 2; seed 004's blast warheads (HE, hammerhead) have one too.
    Their sizes are in the weapon charts, which the seeds do not hold: the catalogue leaves them empty."""
    from apps.battles.snapshot import weapon_profile
    from apps.rules import ScriptedDice, StructureState, resolve
    from tests.rules.builders import battle

    lg = {w.slug: w for w in Weapon.objects.filter(ruleset="lg")}
    assert {s for s, w in lg.items() if w.has_effect_area} == {
        "heavy-fusion-rifle", "hammerhead-missile", "high-explosive-grenade"}
    assert all(w.effect_area is None for w in lg.values())
    assert {w.weapon_type for w in lg.values() if base_type(w.weapon_type) in tables.BLAST_WARHEADS} == {
        w.weapon_type for w in lg.values() if w.has_effect_area and w.slug != "heavy-fusion-rifle"}
    example = re.search(r"heavy fusion rifle.{0,200}?effect area", seed("000"), re.S | re.I)
    assert example, "seed 000 no longer names the heavy fusion rifle's effect area"
    fusion = weapon_profile(lg["heavy-fusion-rifle"])
    house = StructureState("house", "building", "House", "stucco", None, 3, None, "light", damage_max=40)
    for penetrated, points in (("yes", 14), ("no", 2)):
        state = battle("lg", [house], [], [fusion], damage_variant=3, fires=False)
        out = resolve("lg_attack_structure", state, {"weapon": fusion.key, "structure": "house", "hit": "yes",
                                                     "penetrated": penetrated}, ScriptedDice([]))
        assert sum(e.n for e in out.effects if e.type == "damage") == points, penetrated
    # The bolt rifle has none: AF 5 penetrating scores 5 under variant 3, as the seed's other example.
    bolt = weapon_profile(lg["bolt-rifle"])
    state = battle("lg", [house], [], [bolt], damage_variant=3, fires=False)
    out = resolve("lg_attack_structure", state, {"weapon": bolt.key, "structure": "house", "hit": "yes",
                                                 "penetrated": "yes"}, ScriptedDice([]))
    assert sum(e.n for e in out.effects if e.type == "damage") == lg["bolt-rifle"].attack_factor


def test_lg_weapon_types_name_fire_table_rows(reference):
    # The fire table is looked up by the weapon type's family (laser_cannon → laser, the rules'
    # base_type); families the table leaves out never start fires.
    fire = set(FireChance.objects.values_list("weapon_type", flat=True))
    never_burn = {"bullet", "ray", "convergence_beam", "anti_matter"}
    for weapon in Weapon.objects.filter(ruleset="lg").exclude(weapon_type=""):
        assert base_type(weapon.weapon_type) in fire | never_burn, weapon.slug
    assert base_type(Weapon.objects.get(ruleset="lg", slug="heavy-fusion-rifle").weapon_type) in fire
    assert base_type(Weapon.objects.get(ruleset="lg", slug="light-laser-cannon").weapon_type) in fire


def test_ba_catalogue_names_weapons_by_he_value_only(reference):
    printed = re.search(r".damage in buildings. value in the HE chart for that shell \(([^)]*)\)", seed("001"))
    values = re.findall(r"\d*D\d", printed[1])
    ba = Weapon.objects.filter(ruleset="ba")
    # One entry per value for direct fire, and one per value for indirect fire (a mortar's HE on a
    # building goes through the floor roll): each usable by the action that needs it.
    for indirect, words in ((False, "HE shell"), (True, "Indirect HE")):
        he = dict(ba.exclude(he_value="").filter(indirect=indirect).values_list("he_value", "name"))
        assert sorted(he) == sorted(values)
        assert all(name == f"{words}, {value} in buildings" for value, name in he.items())
        assert all(w.heavy_weapon for w in ba.exclude(he_value="").filter(indirect=indirect))
    assert all("HE chart" in w.notes for w in ba.exclude(he_value=""))
    assert ba.get(slug="flamethrower").flamethrower
    assert ba.get(slug="heavy-howitzer-barrage").heavy_howitzer
    assert ba.get(slug="mortar").indirect
    assert ba.get(slug="anti-tank-gun").heavy_weapon


def test_loading_twice_changes_nothing(reference):
    models = [Material, FireChance, WeatherEffect, WeaponType, BunkerSheet, Weapon]
    before = [list(m.objects.order_by("pk").values()) for m in models]
    call_command("loaddata", *[str(FIXTURES / name) for name in FIXTURE_FILES], verbosity=0)
    assert [list(m.objects.order_by("pk").values()) for m in models] == before


# The rules engine's tables --------------------------------------------------------------------
# apps.rules.tables is the single source of truth for these names and numbers; the battle service
# puts Material.slug, Weapon.weapon_type and the sheet JSON straight into apps.rules.state records.

def test_wall_materials_equal_the_rules_table(reference):
    walls = Material.objects.filter(surface="wall")
    assert dict(walls.values_list("slug", "armor_class")) == tables.MATERIAL_ARMOR_CLASS


def test_roof_materials_equal_the_rules_table(reference):
    roofs = Material.objects.filter(surface="roof")
    assert dict(roofs.values_list("slug", "armor_class")) == tables.ROOF_ARMOR_CLASS


def test_every_material_is_flammable_exactly_as_the_rules_say_and_named_as_they_name_it(reference):
    assert Material.objects.count() == len(tables.MATERIAL_ARMOR_CLASS) + len(tables.ROOF_ARMOR_CLASS)
    for material in Material.objects.all():
        assert material.flammable == (material.slug in tables.FLAMMABLE_MATERIALS), material.slug
        assert material.name.lower() == tables.MATERIAL_NAMES[material.slug], material.slug
    assert set(Material.objects.filter(flammable=True).values_list("slug", flat=True)) == tables.FLAMMABLE_MATERIALS


def test_fire_chances_equal_the_rules_table(reference):
    assert dict(FireChance.objects.values_list("weapon_type", "d10_max")) == tables.FIRE_CHANCE


def test_weather_effects_equal_the_rules_table(reference):
    # Conditions that leave the roll alone (clear, very strong wind) have no row.
    expected = {condition: modifier for condition, modifier in tables.WEATHER_FIRE_MODIFIER.items() if modifier}
    assert dict(WeatherEffect.objects.values_list("condition", "fire_modifier")) == expected


def test_weapon_types_equal_the_rules_attack_factor_table(reference):
    assert dict(WeaponType.objects.values_list("slug", "attack_factor")) == tables.ATTACK_FACTOR


def test_every_lg_weapon_type_is_an_attack_factor_key(reference):
    for weapon in Weapon.objects.filter(ruleset="lg").exclude(slug="chainsaw"):
        assert weapon.weapon_type in tables.ATTACK_FACTOR, weapon.slug
        assert weapon.attack_factor == tables.ATTACK_FACTOR[weapon.weapon_type], weapon.slug
        assert WeaponType.objects.filter(slug=weapon.weapon_type).exists(), weapon.slug
    assert Weapon.objects.get(ruleset="lg", slug="chainsaw").weapon_type == ""  # its type is not in the seeds
    assert not Weapon.objects.exclude(ruleset="lg").exclude(weapon_type="").exists()


def rules_sheets():
    return {sheet["slug"]: sheet for sheet in [*tables.DH_SHEETS, tables.DH_BLANK_SHEET]}


def test_library_sheets_equal_the_rules_sample_sheets_field_for_field(reference):
    library = {sheet.slug: sheet for sheet in BunkerSheet.objects.filter(club=None)}
    expected = rules_sheets()
    assert set(library) == set(expected)
    for slug, sheet in expected.items():
        stored = {field: getattr(library[slug], field) for field in sheet}
        assert stored == sheet, slug
        # ... and read back through the model's JSON they are the same card to the rules engine.
        assert FortSheet.from_dict(stored) == FortSheet.from_dict(sheet), slug


def test_library_sheets_are_the_rules_sheets_in_print_order(reference):
    samples = BunkerSheet.objects.filter(club=None, is_blank=False).order_by("pk")
    assert list(samples.values_list("slug", flat=True)) == [sheet["slug"] for sheet in tables.DH_SHEETS]
    assert BunkerSheet.objects.get(club=None, is_blank=True).slug == tables.DH_BLANK_SHEET["slug"]
