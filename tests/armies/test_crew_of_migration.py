"""Migration armies 0006: sections a crew formed before units kept the fortification they left get it
from the record (the battle's "Crew leaves" entry, the campaign's write-back, each session's copy), so
moving them back in makes them the crew again."""

import importlib

import pytest
from django.apps import apps

from apps.armies.models import Unit
from apps.battles import services as battles
from apps.campaigns import services
from apps.campaigns.models import Campaign
from apps.structures.models import Structure
from tests.campaigns.test_campaign_page import demo, demo_data  # noqa: F401

pytestmark = pytest.mark.django_db

MIGRATION = importlib.import_module("apps.armies.migrations.0006_backfill_crew_of")
PIT, SECTION = "Soviet Rifle Pit", "Soviet Rifle Pit crew 1"


def test_sections_formed_before_the_link_get_their_fortification_and_can_rejoin(demo):  # noqa: F811
    winter = Campaign.objects.get(name="Winter Line")
    one = winter.battles.get(session_number=1)
    battles.start(battle_id=one.pk, user=demo.olga)
    battles.perform(battle_id=one.pk, user=demo.olga, action="dh_leave",
                    inputs={"structure": f"s{Structure.objects.get(battle=one, name=PIT).pk}"})
    services.finish_battle(battle_id=one.pk, user=demo.olga, winner="A")
    two = services.start_session(campaign_id=winter.pk, user=demo.olga)
    Unit.objects.update(crew_of=None)  # as every row stood before 0005
    bystander = Unit.objects.filter(army__battle=two).exclude(name=SECTION).values_list("pk", flat=True)

    MIGRATION.link_sections(apps, None)

    def crew_of(**where):
        return Unit.objects.get(name=SECTION, **where).crew_of_id

    assert crew_of(army__battle=one) == Structure.objects.get(battle=one, name=PIT).pk
    assert crew_of(army__campaign=winter) == Structure.objects.get(campaign=winter, name=PIT).pk
    pit = Structure.objects.get(battle=two, name=PIT)
    assert crew_of(army__battle=two) == pit.pk
    assert not Unit.objects.filter(pk__in=list(bystander), crew_of__isnull=False).exists()

    battles.start(battle_id=two.pk, user=demo.olga)
    entry = battles.perform(battle_id=two.pk, user=demo.olga, action="move",
                            inputs={"unit": f"u{Unit.objects.get(army__battle=two, name=SECTION).pk}",
                                    "structure": f"s{pit.pk}"})
    assert "rejoins its crew" in entry.summary
    pit.refresh_from_db()
    assert (pit.crew_men, pit.crew_left) == (9, 0)
