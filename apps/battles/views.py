from django.contrib.auth.decorators import login_required
from django.db.models import Prefetch
from django.shortcuts import render

from apps.armies.models import Unit
from apps.campaigns import permissions
from apps.structures.models import Floor
from apps.structures.views import weapons_lost

# The page opens with the newest entries only; a long battle must open as fast as a short one.
LOG_PAGE_SIZE = 50


def action_label(action):
    return action.replace("_", " ")


def battle_context(battle):
    """Everything battles/battle.html and its partials need, in a fixed number of queries
    however many structures, units and log entries the battle has."""
    structures = list(
        battle.structures.select_related("wall_material", "roof_material", "sheet").prefetch_related(
            Prefetch("floors", queryset=Floor.objects.select_related("occupant__army"))
        )
    )
    for structure in structures:
        structure.weapons_lost = weapons_lost(structure)
    armies = battle.armies.select_related("owner").prefetch_related(
        Prefetch("units", queryset=Unit.objects.select_related("floor__structure"))
    )
    log = list(battle.log_entries.select_related("undoes", "undone_by").order_by("-seq")[:LOG_PAGE_SIZE])
    for entry in log:
        entry.action_label = action_label(entry.action)
    return {
        "battle": battle,
        "structures": structures,
        "armies": armies,
        "log": log,
        # Sequence numbers are gapless from 1, so the newest one is the number of entries.
        "log_total": log[0].seq if log else 0,
    }


@login_required
def battle_detail(request, pk):
    battle = permissions.get_or_404(
        permissions.battles_for(request.user).select_related("club", "campaign", "scenario"), pk=pk
    )
    return render(request, "battles/battle.html", battle_context(battle))
