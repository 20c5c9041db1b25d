from django.contrib import admin

from apps.campaigns.models import Campaign, Club, Membership, Scenario


class MembershipInline(admin.TabularInline):
    model = Membership
    extra = 0
    autocomplete_fields = ["user"]


@admin.register(Club)
class ClubAdmin(admin.ModelAdmin):
    list_display = ["name", "slug", "created_at"]
    search_fields = ["name", "slug"]
    prepopulated_fields = {"slug": ["name"]}
    inlines = [MembershipInline]


@admin.register(Membership)
class MembershipAdmin(admin.ModelAdmin):
    list_display = ["user", "club", "role", "joined_at"]
    list_filter = ["role", "club"]
    search_fields = ["user__username", "club__name"]


@admin.register(Campaign)
class CampaignAdmin(admin.ModelAdmin):
    list_display = ["name", "club", "ruleset", "created_at"]
    list_filter = ["ruleset", "club"]
    search_fields = ["name"]


@admin.register(Scenario)
class ScenarioAdmin(admin.ModelAdmin):
    list_display = ["name", "club", "ruleset", "table_width", "table_depth", "version"]
    list_filter = ["ruleset", "club"]
    search_fields = ["name"]
