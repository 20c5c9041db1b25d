"""A campaign's own copy of its scenario's deployment zones (`Campaign.deployment_zones`): its sessions
were set up without a scenario, so their maps showed no zones at all.

Existing campaigns get the best the database still knows: the zones of the scenario their ground or
forces were copied from (`origin`), as that scenario stands now. A campaign whose scenario is gone, or
that came from a file (its rows have no origin), keeps none."""

from django.db import migrations, models


def zones_from_scenarios(apps, schema_editor):
    Campaign = apps.get_model("campaigns", "Campaign")
    Structure = apps.get_model("structures", "Structure")
    Army = apps.get_model("armies", "Army")
    Scenario = apps.get_model("campaigns", "Scenario")
    scenario_of = {}
    for model in (Army, Structure):  # a ground-less campaign still has its forces, and the other way round
        for campaign_id, scenario_id in (model.objects.filter(campaign__isnull=False, origin__scenario__isnull=False)
                                         .values_list("campaign_id", "origin__scenario_id")):
            scenario_of.setdefault(campaign_id, scenario_id)
    zones = dict(Scenario.objects.filter(pk__in=set(scenario_of.values())).values_list("pk", "deployment_zones"))
    campaigns = list(Campaign.objects.filter(pk__in=scenario_of))
    for campaign in campaigns:
        campaign.deployment_zones = zones.get(scenario_of[campaign.pk]) or []
    Campaign.objects.bulk_update(campaigns, ["deployment_zones"], batch_size=500)


class Migration(migrations.Migration):

    dependencies = [
        ("campaigns", "0004_membership_watch_epoch"),
        ("structures", "0006_structure_crew_start"),
        ("armies", "0004_tank_class_not_heavy"),
    ]

    operations = [
        migrations.AddField(
            model_name="campaign",
            name="deployment_zones",
            field=models.JSONField(blank=True, default=list,
                                   help_text='[{"side": "A", "x": 0, "y": 0, "width": 72, "depth": 12}]'),
        ),
        migrations.RunPython(zones_from_scenarios, migrations.RunPython.noop),
    ]
