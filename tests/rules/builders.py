"""Small battles for the rules tests."""

from apps.rules import tables
from apps.rules.dh import crew_from_sheet
from apps.rules.state import BattleOptions, BattleState, Floor, FortSheet, StructureState, UnitState

SHEETS = {d["slug"]: FortSheet.from_dict(d) for d in tables.DH_SHEETS}


def floors(n, openings=None):
    return tuple(Floor(i, openings=dict(openings or {"front": 1, "rear": 1})) for i in range(n))


def building(sid="house", n_floors=3, **kw):
    kw.setdefault("wall_material", "brick")
    kw.setdefault("roof_material", "wood_and_tile")
    kw.setdefault("construction", "brick")
    return StructureState(sid, "building", name=kw.pop("name", sid.title()), floors=floors(n_floors), **kw)


def bunker(sid="pillbox", **kw):
    kw.setdefault("wall_material", "concrete_reinforced")
    kw.setdefault("construction", "concrete")
    return StructureState(sid, kw.pop("kind", "bunker"), name=sid.title(),
                          floors=(Floor(0, openings={"front": 1}, slits={"front": 1}),), **kw)


def fort(slug="german-hmg-loghouse", sid="fort", side="B", **crew):
    sheet = SHEETS[slug]
    c = crew_from_sheet(sheet, side)
    if crew:
        c = c.replace(**crew)
    return StructureState(sid, sheet.kind, name=sheet.name, sheet=sheet, crew=c,
                          floors=(Floor(0, openings={"front": 1}),), wall_material="logs")


def unit(uid, side="B", structure=None, floor=None, **kw):
    kw.setdefault("models", 10)
    return UnitState(uid, side, structure=structure, floor=floor, name=kw.pop("name", uid), **kw)


def battle(ruleset, structures=(), units=(), weapons=(), **options):
    return BattleState.build(structures, units, weapons, options=BattleOptions(ruleset=ruleset, **options))
