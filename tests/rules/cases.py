"""Actions with their inputs, shared by the exact-versus-random tests, the property tests and the benchmark."""

from apps.rules.state import Fire

from .builders import battle, building, bunker, fort, unit


def lg_attack():
    state = battle("lg", [building("house", 2, wall_material="timber_medium", damage_max=24)],
                   [unit("t1", structure="house", floor=0, models=1), unit("t2", structure="house", floor=1, models=1)],
                   damage_variant=2, weather="mist")
    return state, "lg_attack_structure", {"weapon": "laser_rifle", "structure": "house", "hit": "yes",
                                          "penetrated": "yes", "troops": "exploratory", "targets": "t1,t2"}


def lg_rotary():
    state = battle("lg", [building("house", 1, wall_material="logs", damage_max=30)],
                   [unit("t1", structure="house", floor=0, models=1)], damage_variant=3)
    return state, "lg_attack_structure", {"weapon": "rotary_cone_gun", "structure": "house", "hit": "yes",
                                          "penetrated": 2, "troops": "known", "targets": "t1"}


def lg_detect():
    return battle("lg", [], [unit("sniper", "A", models=1)]), "lg_detect", {"target": "sniper", "weapon": "bolt_rifle"}


def lg_upkeep():
    state = battle("lg", [building("house", 1, damage_max=24, damage_taken=10),
                          building("barn", 1, damage_max=10, damage_taken=7, wall_material="logs", fire=Fire(2, 1)),
                          building("shed", 1, damage_max=10, damage_taken=2)],
                   [unit("t1", structure="barn", floor=0, models=1)], collapse_check=True).replace(turn=3)
    return state, "upkeep", {}


def ba_he():
    state = battle("ba", [building("house", 2)], [unit("sq", structure="house", floor=1)])
    return state, "ba_he", {"weapon": "he_3d6", "structure": "house", "target": "sq", "hit": "yes", "went_down": "yes"}


def ba_indirect():
    state = battle("ba", [building("house", 3)], [unit("sq", structure="house", floor=2),
                                                 unit("sq0", structure="house", floor=0)])
    return state, "ba_indirect", {"weapon": "howitzer_3d6", "structure": "house", "target": "sq", "hit": "yes"}


def ba_bunker():
    state = battle("ba", [bunker()], [unit("sq", structure="pillbox", floor=0)])
    return state, "ba_he", {"weapon": "he_3d6", "structure": "pillbox", "target": "sq", "hit": "yes"}


def ba_flamethrower():
    state = battle("ba", [building("house", 2)], [unit("sq", structure="house", floor=0),
                                                 unit("gun", kind="artillery", structure="house", floor=1)])
    return state, "ba_flamethrower", {"weapon": "ba_flamethrower", "structure": "house", "target": "sq",
                                      "hit": "yes", "hits": 4}


def ba_tank_ram():
    state = battle("ba", [building("house", 2, construction="brick")],
                   [unit("tank", "A", kind="vehicle", tank_class="heavy", models=1),
                    unit("sq", structure="house", floor=0)])
    return state, "ba_tank_ram", {"tank": "tank", "structure": "house"}


def ba_damage():
    state = battle("ba", [building("house", 1)], [unit("sq", structure="house", floor=0, models=5,
                                                       experience="veteran")])
    return state, "ba_damage", {"target": "sq", "hits": 8, "pen": 1}


def dh_main_gun():
    return battle("dh", [fort("german-hmg-loghouse")]), "dh_main_gun", \
        {"weapon": "dh_45mm", "structure": "fort", "facing": "front", "hit": "yes"}


def dh_main_gun_fort():
    return battle("dh", [fort("german-concrete-blockhouse", penetrating_hits=1)]), "dh_main_gun", \
        {"weapon": "dh_105mm", "structure": "fort", "facing": "rear", "hit": "yes"}


def dh_flamethrower():
    return battle("dh", [fort("soviet-rifle-pit", pins=1)]), "dh_flamethrower", \
        {"weapon": "dh_flamethrower", "structure": "fort", "hit": "yes"}


def dh_small_arms():
    return battle("dh", [fort("german-at-bunker")]), "dh_small_arms", \
        {"weapon": "dh_mg34", "structure": "fort", "shots": 12}


CASES = [lg_attack, lg_rotary, lg_detect, lg_upkeep, ba_he, ba_indirect, ba_bunker, ba_flamethrower, ba_tank_ram,
         ba_damage, dh_main_gun, dh_main_gun_fort, dh_flamethrower, dh_small_arms]
