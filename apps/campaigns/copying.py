"""Copy ground and armies from one owner to another: scenario → campaign → battle, and scenario →
scenario (the builder's Copy).

A campaign starts from a scenario's ground and forces, and each session's battle starts from the
campaign's as they stand. Every copy points at the row it was copied from (`origin`), so a battle's
results can later be written back to the campaign, and the source stays untouched.
"""

import copy
from dataclasses import dataclass, field

from django.db import transaction

from apps.armies.models import Army, Unit, UnitWeapon
from apps.structures.models import NO_CREW, Floor, Opening, Structure, has_crews

OWNERS = ("scenario", "campaign", "battle")


@dataclass
class BattlefieldCopy:
    """Source id → copy, for each kind of row copied."""

    structures: dict = field(default_factory=dict)
    floors: dict = field(default_factory=dict)
    armies: dict = field(default_factory=dict)
    units: dict = field(default_factory=dict)


def _owner_ids(owner):
    given = {name: obj for name, obj in owner.items() if obj is not None}
    unknown = set(owner) - set(OWNERS)
    if unknown:
        raise TypeError(f"unknown owner {', '.join(sorted(unknown))}; expected one of {', '.join(OWNERS)}")
    if len(given) != 1:
        raise ValueError("a copy belongs to exactly one scenario, campaign or battle")
    (name, obj), = given.items()
    if obj.pk is None:
        raise ValueError(f"the {name} must be saved before anything is copied into it")
    return {f"{other}_id": (obj.pk if other == name else None) for other in OWNERS}


def _clone(obj, **overrides):
    """An unsaved copy with every concrete field of `obj` (deep-copied, so JSON lists and dicts
    are not shared) except the primary key; `overrides` are attnames."""
    values = {
        f.attname: copy.deepcopy(getattr(obj, f.attname))
        for f in obj._meta.concrete_fields
        if not f.primary_key
    }
    values.update(overrides)
    return type(obj)(**values)


@transaction.atomic
def copy_ground(structures, **owner):
    """Copy structures with their floors, openings and connections to `owner` (one of
    scenario=, campaign=, battle=). Connections to structures outside `structures` are dropped,
    because a copy cannot adjoin ground that belongs to someone else.

    Returns a BattlefieldCopy with `structures` and `floors` filled in.
    """
    target = _owner_ids(owner)
    sources = list(structures)
    result = BattlefieldCopy()
    if not sources:
        return result

    # A sheet crew only where the copy's ruleset has them (Disposable Heroes): a Bolt Action bunker
    # is held by units.
    (owner_obj,) = (obj for obj in owner.values() if obj is not None)
    crews = has_crews(owner_obj.ruleset)
    copies = Structure.objects.bulk_create([_clone(s, **target, origin_id=_origin(target, s), **_crew(s, crews, target))
                                            for s in sources])
    result.structures = {s.pk: c for s, c in zip(sources, copies)}

    result.floors = copy_floors(result.structures)

    # The symmetrical relation stores both directions; copying every row between copied
    # structures keeps both.
    through = Structure.connections.through
    ids = list(result.structures)
    through.objects.bulk_create([
        through(from_structure_id=result.structures[a].pk, to_structure_id=result.structures[b].pk)
        for a, b in through.objects.filter(from_structure_id__in=ids, to_structure_id__in=ids)
        .values_list("from_structure_id", "to_structure_id")
    ])
    return result


def _origin(target, source):
    """What a copy points back at. A scenario's copy (the builder's Copy) is another design, not a stage of
    play: nothing is ever written back to its source, so it points at nothing, and its bunkers keep their
    crews as designed (a campaign's or battle's copy sets where its tally starts: `_crew`)."""
    return None if target["scenario_id"] is not None else source.pk


def _crew(source, crews, target):
    if target["scenario_id"] is not None:  # the same ruleset, and nothing played yet (`_origin`)
        return {}
    if not crews:
        return copy.deepcopy(NO_CREW)
    # The campaign tally counts a crew's losses from the men it started with, which the designer may
    # have set below the sheet's (men a scenario shows as walked out already started inside it). Set
    # once, from the scenario: a session's copy of the campaign's ground carries the campaign's on.
    return {"crew_start": source.crew_men + source.crew_left} if source.scenario_id is not None else {}


def copy_floors(structures):
    """Copy the floors and openings of each source structure (`structures`: source pk → its saved
    copy) onto its copy. Returns source floor pk → floor copy."""
    floors = list(Floor.objects.filter(structure__in=list(structures)).order_by("structure_id", "level"))
    copies = Floor.objects.bulk_create([_clone(f, structure_id=structures[f.structure_id].pk) for f in floors])
    by_source = {f.pk: c for f, c in zip(floors, copies)}
    Opening.objects.bulk_create(
        [_clone(o, floor_id=by_source[o.floor_id].pk) for o in Opening.objects.filter(floor__in=floors)]
    )
    return by_source


@transaction.atomic
def copy_armies(armies, *, floors=None, structures=None, **owner):
    """Copy armies with their units and the units' weapons to `owner`.

    `floors` maps source floor ids to their copies (from copy_ground); a unit on a floor that is
    not in it would be left nowhere, so that is an error rather than a silent move to the table.
    `structures` maps source structures to their copies: a crew's section keeps its link to the
    fortification it left (`crew_of`), on the copy's own ground; without one it has none.

    Returns a BattlefieldCopy with `armies` and `units` filled in.
    """
    target = _owner_ids(owner)
    floors = floors or {}
    sources = list(armies)
    result = BattlefieldCopy(floors=dict(floors))
    if not sources:
        return result

    army_copies = Army.objects.bulk_create([_clone(a, **target, origin_id=_origin(target, a)) for a in sources])
    result.armies = {a.pk: c for a, c in zip(sources, army_copies)}

    units = list(Unit.objects.filter(army__in=sources).select_related("floor__structure").order_by("army_id", "id"))
    for unit in units:
        if unit.floor_id is not None and unit.floor_id not in floors:
            raise ValueError(
                f"{unit.name} is on {unit.floor}, which is not part of the ground being copied"
            )
    unit_copies = Unit.objects.bulk_create([
        _clone(
            u,
            army_id=result.armies[u.army_id].pk,
            origin_id=_origin(target, u),
            floor_id=floors[u.floor_id].pk if u.floor_id is not None else None,
            crew_of_id=structures[u.crew_of_id].pk if u.crew_of_id in (structures or {}) else None,
        )
        for u in units
    ])
    result.units = {u.pk: c for u, c in zip(units, unit_copies)}

    UnitWeapon.objects.bulk_create([
        _clone(uw, unit_id=result.units[uw.unit_id].pk) for uw in UnitWeapon.objects.filter(unit__in=units)
    ])
    return result


@transaction.atomic
def copy_battlefield(source, **owner):
    """Copy everything `source` (a scenario, campaign or battle) owns — its structures and its
    armies, units standing on the copied floors — to `owner`."""
    ground = copy_ground(source.structures.all(), **owner)
    forces = copy_armies(source.armies.all(), floors=ground.floors, structures=ground.structures, **owner)
    ground.armies, ground.units = forces.armies, forces.units
    return ground
