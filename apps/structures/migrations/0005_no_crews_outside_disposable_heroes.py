"""Sheet crews are Disposable Heroes' (seed 003): a Bolt Action bunker is held by units, like a
building (seed 001 'Bunkers'). Structures of a Bolt Action or LaserGrenadiers scenario, campaign or
battle lose the crew an earlier reading gave them (the demo's village bunkers had 12 and 24 men).
Each structure has exactly one owner, each owner a ruleset."""

from django.db import migrations
from django.db.models import Q

NO_CREW = {"crew_side": "", "crew_men": 0, "crew_pins": 0, "crew_routed": False, "crew_penetrating_hits": 0,
           "weapons_destroyed": [], "crew_left": 0}


def clear_crews(apps, schema_editor):
    Structure = apps.get_model("structures", "Structure")
    crewless = ("ba", "lg")
    outside = Q(scenario__ruleset__in=crewless) | Q(campaign__ruleset__in=crewless) | Q(battle__ruleset__in=crewless)
    Structure.objects.filter(outside).update(**NO_CREW)


class Migration(migrations.Migration):

    dependencies = [
        ("structures", "0004_structure_crew_left"),
        ("campaigns", "0003_invites_spectator_links_sign_in_failures"),
        ("battles", "0004_battle_imported_seq"),
    ]

    operations = [
        migrations.RunPython(clear_crews, migrations.RunPython.noop),
    ]
