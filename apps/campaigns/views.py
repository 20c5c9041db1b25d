import math
from types import SimpleNamespace

from django.contrib.auth.decorators import login_required
from django.core.paginator import Paginator
from django.db.models import Count, F, OuterRef, Prefetch, Subquery
from django.shortcuts import render

from apps.armies.models import Unit
from apps.battles.models import BattleStatus, LogEntry
from apps.battles.views import map_of
from apps.campaigns import permissions
from apps.campaigns.export import file_estimate
from apps.campaigns.models import Campaign, Role
from apps.structures.models import Floor, mark_crews
from apps.structures.views import weapons_lost

SIDES = ("A", "B")
RECENT_SESSIONS = 5  # the sessions a campaign page shows unfolded
OPEN_BATTLES_PER_PAGE = 10  # open battles on the home page, newest first


@login_required
def home(request):
    user = request.user
    memberships = permissions.memberships(user).select_related("club").prefetch_related(
        Prefetch("club__campaigns", queryset=Campaign.objects.annotate(battle_count=Count("battles")))
    )
    # The newest first, a page at a time: tonight's battle is what a player opens this page for, and a
    # club that leaves friendlies unfinished for years put every one of them on it.
    open_battles = Paginator(
        permissions.battles_for(user).exclude(status=BattleStatus.FINISHED).select_related("club", "campaign")
        .order_by("-created_at", "-pk"), OPEN_BATTLES_PER_PAGE,
    ).get_page(request.GET.get("open"))
    open_battles.object_list = list(open_battles.object_list)
    return render(request, "campaigns/home.html", {
        "memberships": memberships, "open_battles": open_battles,
        "organises": any(m.role == Role.ORGANISER for m in memberships),
    })


@login_required
def campaign_detail(request, pk):
    campaign = permissions.get_or_404(permissions.campaigns_with_role(request.user).select_related("club"), pk=pk)
    return render(request, "campaigns/campaign.html", campaign_context(request, campaign))


# The campaign page -------------------------------------------------------------------------------

def campaign_context(request, campaign, **forms):
    """Everything campaigns/campaign.html and its partials need, from the campaign's own rows, in a
    fixed number of queries however many sessions, structures and units it has. `forms` are bound
    forms to show again with their errors (start_form, reopen_form, settings_form)."""
    from apps.campaigns import session_views as sv  # the forms live with the views that read them

    # A log's entries are numbered from 1, so its newest number is how many the file will carry: one
    # index probe a battle, where counting them read a long log whole.
    newest = LogEntry.objects.filter(battle=OuterRef("pk")).order_by("-seq").values("seq")[:1]
    battles = list(campaign.battles.select_related("scenario").annotate(entries=Subquery(newest))
                   .order_by(F("session_number").asc(nulls_last=True), "created_at", "pk"))
    structures = mark_crews(list(campaign.structures.select_related("wall_material", "roof_material", "sheet")),
                            campaign.ruleset)
    armies = list(campaign.armies.select_related("owner").order_by("side", "pk"))
    units = list(Unit.objects.filter(army__campaign=campaign).select_related("floor").order_by("name", "pk"))
    place_units(structures, armies, units)
    # The role came with the campaign (permissions.campaigns_with_role): no query of its own.
    organiser = campaign.viewer_role == Role.ORGANISER

    open_battles = [b for b in battles if b.is_open]
    finished = [b for b in battles if not b.is_open]
    last_finished = max(finished, key=lambda b: b.finished_at) if finished else None
    next_number = max((b.session_number or 0 for b in battles), default=0) + 1
    blocked = f"{open_battles[0].name} is still open: finish it before starting the next session" \
        if open_battles and campaign.single_open_battle else ""
    return {
        "campaign": campaign,
        "organiser": organiser,
        "battles": battles,
        "structures": structures,
        "armies": armies,
        "map": map_of(table_of(campaign, battles, structures, units), structures, units),
        "tally": tally(battles, structures, armies),
        "file": file_estimate(sum(b.entries or 0 for b in battles)),
        "sessions": SimpleNamespace(
            # The newest sessions in view, the earlier ones of a long campaign folded away.
            earlier=battles[:-RECENT_SESSIONS] if len(battles) > RECENT_SESSIONS + 1 else [],
            recent=battles[-RECENT_SESSIONS:] if len(battles) > RECENT_SESSIONS + 1 else battles,
            open=open_battles, next_number=next_number, blocked=blocked,
            reopenable=last_finished if last_finished and not open_battles else None,
            reopen_blocked=bool(last_finished and open_battles),
            # Only offered while the newest session is being set up (services.discard_session checks its log).
            discardable=battles[-1] if battles and battles[-1].status == BattleStatus.SETUP
            and battles[-1].session_number == max(b.session_number or 0 for b in battles) else None,
        ),
        "start_form": forms.get("start_form") or sv.StartSessionForm(
            initial={"weather": campaign.weather, "number": next_number}),
        "reopen_form": forms.get("reopen_form") or sv.ReopenForm(),
        "settings_form": forms.get("settings_form") or sv.SettingsForm(instance=campaign),
        "members": permissions.club_members(campaign.club_id) if organiser else [],
    }


def place_units(structures, armies, units):
    """Units into their armies and onto their floors, with no query per floor: a floor nobody holds
    is simply not listed (the map only counts who is inside)."""
    by_structure = {s.pk: s for s in structures}
    by_army = {a.pk: a for a in armies}
    for s in structures:
        s.floor_rows = []
        s.weapons_lost = weapons_lost(s)
    for a in armies:
        a.unit_rows = []
    for u in units:
        # A destroyed unit has lost every model, whatever it still had when it was destroyed.
        u.lost = u.models_start if u.destroyed else u.losses
        u.army = by_army[u.army_id]
        u.army.unit_rows.append(u)
        floor = u.floor if u.floor_id else None
        where = by_structure.get(floor.structure_id) if floor else None
        if where is not None:
            Floor.occupant.related.set_cached_value(floor, u)
            where.floor_rows.append(floor)
            u.place = f"in {where.name}, {floor.label}"
        elif u.x is not None:
            u.place = f"at {float(u.x):g}″, {float(u.y):g}″"
        elif u.rejoined and u.crew_of_id in by_structure:
            u.place = f"back in {by_structure[u.crew_of_id].name} as its crew"
        else:
            u.place = ""


def table_of(campaign, battles, structures, units):
    """The newest battle's table (with none, the campaign's first: its first session was discarded),
    grown to hold every structure and unit, in whole feet."""
    dated = [b for b in battles if b.table_width and b.table_depth]
    first = (campaign.table_width, campaign.table_depth) if campaign.table_width else (72, 48)
    width, depth = map(float, (dated[-1].table_width, dated[-1].table_depth) if dated else first)
    for s in structures:
        reach = max(float(s.width), float(s.depth)) / 2
        width, depth = max(width, float(s.x) + reach), max(depth, float(s.y) + reach)
    for u in units:
        if u.x is not None:
            width, depth = max(width, float(u.x) + 1), max(depth, float(u.y) + 1)
    return SimpleNamespace(table_width=math.ceil(width / 12) * 12 if width % 12 else width,
                           table_depth=math.ceil(depth / 12) * 12 if depth % 12 else depth)


def tally(battles, structures, armies):
    """The campaign so far: results, each side's losses, and what the fighting has knocked down."""
    finished = [b for b in battles if not b.is_open]
    sides = []
    for side in SIDES:
        army = next((a for a in armies if a.side == side), None)
        rows = army.unit_rows if army else []
        # A fortification's crew fights for its side as much as a squad does.
        crews = [s for s in structures if s.crewed and s.crew_side == side]
        # Losses count from the crew it started the campaign with, not the sheet's: a bunker its
        # designer manned below the sheet lost none of the men it never had. Men who walked out (Crew
        # leaves) are neither lost nor counted twice: they are on the roster as the sections they
        # formed, which start with them and count their own losses.
        crew_start = sum(s.crew_start - s.crew_left for s in crews)
        crew_lost = sum(max(s.crew_start - s.crew_men - s.crew_left, 0) for s in crews)
        # A section that rejoined its crew holds only the men it lost outside: those who came back are the
        # crew's again (counted in crew_men, no longer in crew_left).
        back = [u for u in rows if u.rejoined]
        rows = [u for u in rows if not u.rejoined]
        sides.append(SimpleNamespace(
            side=side, army=army, wins=sum(b.winner == side for b in finished),
            models_lost=sum(u.lost for u in rows + back) + crew_lost, crew_lost=crew_lost,
            models_start=sum(u.models_start for u in rows) + sum(u.lost for u in back) + crew_start,
            models_left=sum(u.models_left for u in rows),
            units_destroyed=sum(u.destroyed for u in rows), units=len(rows),
        ))
    return SimpleNamespace(
        played=len(finished), open=len(battles) - len(finished), draws=sum(b.winner == "D" for b in finished),
        sides=sides,
        collapsed=sum(s.collapsed for s in structures),
        destroyed=sum(s.destroyed and not s.collapsed for s in structures),
        burning=sum(s.burning for s in structures),
        damaged=sum(bool(s.damage_taken) and not s.collapsed for s in structures),
        standing=sum(not (s.collapsed or s.destroyed) for s in structures),
        structures=len(structures),
    )
