"""The table a campaign's first session was set up on (`Campaign.table_width`, `table_depth`): a first
session discarded as set up by mistake was set up again on the default 72″ × 48″, not its scenario's table.

Existing campaigns get their first session's table, the scenario's when it was started; one whose sessions
are all gone keeps none (its next session is set up on the default table, as before)."""

from django.db import migrations, models
from django.db.models import F


def tables_from_first_sessions(apps, schema_editor):
    Campaign = apps.get_model("campaigns", "Campaign")
    Battle = apps.get_model("battles", "Battle")
    first = {}
    for campaign_id, width, depth in (Battle.objects.filter(campaign__isnull=False)
                                      .order_by(F("session_number").desc(nulls_first=True), "-created_at", "-pk")
                                      .values_list("campaign_id", "table_width", "table_depth")):
        first[campaign_id] = (width, depth)  # the earliest comes last, and stays
    campaigns = list(Campaign.objects.filter(pk__in=first))
    for campaign in campaigns:
        campaign.table_width, campaign.table_depth = first[campaign.pk]
    Campaign.objects.bulk_update(campaigns, ["table_width", "table_depth"], batch_size=500)


class Migration(migrations.Migration):

    dependencies = [
        ("campaigns", "0005_campaign_deployment_zones"),
        ("battles", "0004_battle_imported_seq"),
    ]

    operations = [
        migrations.AddField(
            model_name="campaign",
            name="table_width",
            field=models.DecimalField(blank=True, decimal_places=2, help_text="inches", max_digits=6, null=True),
        ),
        migrations.AddField(
            model_name="campaign",
            name="table_depth",
            field=models.DecimalField(blank=True, decimal_places=2, help_text="inches", max_digits=6, null=True),
        ),
        migrations.RunPython(tables_from_first_sessions, migrations.RunPython.noop),
    ]
