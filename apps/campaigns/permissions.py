"""Who may see and do what. Every view calls into this module; nothing else decides access.

Objects of a club the user does not belong to are not found (404), never forbidden (403), so ids
reveal nothing about other clubs.
"""

from django.http import Http404

from apps.campaigns.models import Campaign, Club, Membership, Role, Scenario


def memberships(user):
    if not user.is_authenticated:
        return Membership.objects.none()
    return Membership.objects.filter(user=user)


def role_in(user, club_id):
    """The user's role in the club, or None. Cached per request on the user object."""
    if not user.is_authenticated:
        return None
    cache = getattr(user, "_redoubt_roles", None)
    if cache is None:
        cache = dict(Membership.objects.filter(user=user).values_list("club_id", "role"))
        user._redoubt_roles = cache
    return cache.get(club_id)


def clubs_for(user):
    if not user.is_authenticated:
        return Club.objects.none()
    return Club.objects.filter(memberships__user=user)


def campaigns_for(user):
    return Campaign.objects.filter(club__in=clubs_for(user))


def scenarios_for(user):
    return Scenario.objects.filter(club__in=clubs_for(user))


def battles_for(user):
    from apps.battles.models import Battle

    return Battle.objects.filter(club__in=clubs_for(user))


def structures_for(user):
    from django.db.models import Q

    from apps.structures.models import Structure

    clubs = clubs_for(user)
    return Structure.objects.filter(
        Q(battle__club__in=clubs) | Q(campaign__club__in=clubs) | Q(scenario__club__in=clubs)
    )


def sheets_for(user):
    """Library sheets (no club) are visible to every signed-in user; club sheets to members."""
    from django.db.models import Q

    from apps.structures.models import BunkerSheet

    if not user.is_authenticated:
        return BunkerSheet.objects.none()
    return BunkerSheet.objects.filter(Q(club__isnull=True) | Q(club__in=clubs_for(user)))


def get_or_404(queryset, **lookup):
    try:
        return queryset.get(**lookup)
    except queryset.model.DoesNotExist:
        raise Http404(f"No {queryset.model._meta.verbose_name} found.") from None


def is_organiser(user, club_id):
    return role_in(user, club_id) == Role.ORGANISER


def can_design(user, club_id):
    return role_in(user, club_id) in {Role.ORGANISER, Role.DESIGNER}


def can_act_for_army(user, army):
    """Players act only for their own army; organisers may act for either side."""
    club_id = army_club_id(army)
    role = role_in(user, club_id)
    if role == Role.ORGANISER:
        return True
    return role is not None and army.owner_id == user.pk


def army_club_id(army):
    if army.battle_id:
        return army.battle.club_id
    if army.campaign_id:
        return army.campaign.club_id
    return army.scenario.club_id
