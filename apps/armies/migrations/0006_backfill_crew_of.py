"""Sections a crew formed before units kept the fortification they left (0005) get it from the record:
without it, moving them back in could never make them the crew again (docs/rules.md, "A section rejoins
its crew"). A section whose fortification the record does not name for sure stays nobody's."""

from django.db import migrations
from django.db.models import F


def link_sections(apps, schema_editor):
    LogEntry = apps.get_model("battles", "LogEntry")
    Battle = apps.get_model("battles", "Battle")
    Structure = apps.get_model("structures", "Structure")
    Unit = apps.get_model("armies", "Unit")

    # A battle's sections: its "Crew leaves" entry names the fortification and the units it made. Not an
    # entry from before an import: it names the old host's rows, which may be other rows' ids here.
    for entry in (LogEntry.objects.filter(action="dh_leave", undone=False, seq__gt=F("battle__imported_seq"))
                  .only("battle_id", "outcome", "undo").order_by("pk").iterator()):
        made = (entry.undo or {}).get("created_units") or []
        left = next((e.get("target") for e in (entry.outcome or {}).get("effects") or []
                     if e.get("type") == "crew_leaves"), None)
        if not made or not isinstance(left, str) or not left[1:].isdigit():
            continue
        if Structure.objects.filter(pk=int(left[1:]), battle_id=entry.battle_id).exists():
            Unit.objects.filter(pk__in=made, army__battle_id=entry.battle_id, crew_of__isnull=True) \
                .update(crew_of_id=int(left[1:]))

    # A campaign's sections were written back from a finished session's (services._write_back: same side
    # and name), onto the campaign's own fortification, the one the session's copy came from.
    for battle in (Battle.objects.filter(campaign__isnull=False, status="finished")
                   .order_by("finished_at", "pk").iterator()):
        created = (battle.campaign_before or {}).get("created_units") or []
        if not created:
            continue
        ground_of = dict(Structure.objects.filter(battle=battle).values_list("pk", "origin_id"))
        born = {}
        for side, name, crew_of in (Unit.objects.filter(army__battle=battle, origin__isnull=True,
                                                         crew_of__isnull=False)
                                    .values_list("army__side", "name", "crew_of_id")):
            # Two sections of one name from different fortifications: which is which is not known.
            born[side, name] = None if (side, name) in born else ground_of.get(crew_of)
        for unit in Unit.objects.filter(pk__in=created, army__campaign_id=battle.campaign_id, crew_of__isnull=True) \
                .select_related("army"):
            ground = born.get((unit.army.side, unit.name))
            if ground is not None:
                Unit.objects.filter(pk=unit.pk).update(crew_of_id=ground)

    # Each session's copy of such a section: that session's copy of the fortification.
    for unit in Unit.objects.filter(crew_of__isnull=True, army__battle__isnull=False,
                                    origin__crew_of__isnull=False).select_related("army", "origin"):
        copy = Structure.objects.filter(battle_id=unit.army.battle_id, origin_id=unit.origin.crew_of_id) \
            .values_list("pk", flat=True).first()
        if copy is not None:
            Unit.objects.filter(pk=unit.pk).update(crew_of_id=copy)


class Migration(migrations.Migration):

    dependencies = [
        ("armies", "0005_unit_crew_of_rejoined"),
        ("battles", "0004_battle_imported_seq"),
        ("structures", "0006_structure_crew_start"),
    ]

    operations = [migrations.RunPython(link_sections, migrations.RunPython.noop)]
