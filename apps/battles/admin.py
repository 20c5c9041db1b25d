from django.contrib import admin

from apps.battles.models import Battle, LogEntry


@admin.register(Battle)
class BattleAdmin(admin.ModelAdmin):
    list_display = ["name", "club", "campaign", "ruleset", "turn", "status", "version"]
    list_filter = ["ruleset", "status", "club"]
    search_fields = ["name"]


@admin.register(LogEntry)
class LogEntryAdmin(admin.ModelAdmin):
    # The log is tamper-evident: the admin shows it but never edits it.
    list_display = ["battle", "seq", "turn", "action", "summary", "undone", "created_at"]
    list_filter = ["action", "undone"]
    search_fields = ["summary"]
    list_select_related = ["battle"]

    def has_change_permission(self, request, obj=None):
        return False

    def has_add_permission(self, request):
        return False

    def has_delete_permission(self, request, obj=None):
        return False
