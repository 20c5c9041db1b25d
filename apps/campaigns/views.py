from django.contrib.auth.decorators import login_required
from django.db.models import Count, F, Prefetch
from django.shortcuts import render

from apps.armies.models import Unit
from apps.battles.models import BattleStatus
from apps.campaigns import permissions
from apps.campaigns.models import Campaign


@login_required
def home(request):
    user = request.user
    memberships = permissions.memberships(user).select_related("club").prefetch_related(
        Prefetch("club__campaigns", queryset=Campaign.objects.annotate(battle_count=Count("battles")))
    )
    open_battles = (
        permissions.battles_for(user)
        .exclude(status=BattleStatus.FINISHED)
        .select_related("club", "campaign")
        .order_by("club__name", "-created_at")
    )
    return render(request, "campaigns/home.html", {"memberships": memberships, "open_battles": open_battles})


@login_required
def campaign_detail(request, pk):
    campaign = permissions.get_or_404(permissions.campaigns_for(request.user).select_related("club"), pk=pk)
    battles = campaign.battles.select_related("scenario").order_by(
        F("session_number").asc(nulls_last=True), "created_at"
    )
    structures = campaign.structures.select_related("wall_material", "roof_material", "sheet")
    armies = campaign.armies.select_related("owner").prefetch_related(
        Prefetch("units", queryset=Unit.objects.select_related("floor__structure"))
    )
    return render(request, "campaigns/campaign.html", {
        "campaign": campaign, "battles": battles, "structures": structures, "armies": armies,
    })
