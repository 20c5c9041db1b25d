"""The crew a Disposable Heroes campaign's bunker started with (`Structure.crew_start`): the campaign
tally counted losses from the sheet's full crew, so a bunker its designer had manned below the sheet
showed men lost that nobody lost.

Existing rows get the best the database still knows: the scenario row a campaign's structure was
copied from (`origin`), as it stands now; where that is gone (deleted, or an imported campaign), the
sheet's crew, which is what the tally assumed until now. Never less than the men it has plus those who
walked out, so no loss is ever negative. A battle's structure takes its campaign structure's start.
Scenario rows and other rulesets' keep 0: nothing reads it there."""

from django.db import migrations, models
from django.db.models import Q

SMALL = 32767


def starting_crews(apps, schema_editor):
    Structure = apps.get_model("structures", "Structure")
    crewed = (Structure.objects.filter(sheet__isnull=False)
              .filter(Q(campaign__ruleset="dh") | Q(battle__ruleset="dh"))
              .select_related("sheet", "origin"))
    starts, rows = {}, []
    # Campaign rows first: a battle's structure takes the start of the campaign row it was copied from.
    for row in sorted(crewed, key=lambda s: s.campaign_id is None):
        origin = row.origin
        if origin is not None and origin.pk in starts:
            known = starts[origin.pk]
        elif origin is not None and origin.scenario_id is not None:
            known = origin.crew_men
        else:
            known = row.sheet.crew_total
        row.crew_start = starts[row.pk] = min(max(known, row.crew_men + row.crew_left), SMALL)
        rows.append(row)
    Structure.objects.bulk_update(rows, ["crew_start"], batch_size=500)


class Migration(migrations.Migration):

    dependencies = [
        ("structures", "0005_no_crews_outside_disposable_heroes"),
    ]

    operations = [
        migrations.AddField(
            model_name="structure",
            name="crew_start",
            field=models.PositiveSmallIntegerField(
                default=0, help_text="men its crew had when its campaign or battle was set up from the scenario"),
        ),
        migrations.RunPython(starting_crews, migrations.RunPython.noop),
    ]
