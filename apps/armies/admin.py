from django.contrib import admin

from apps.armies.models import Army, Unit, UnitWeapon, Weapon, WeaponType


class UnitInline(admin.TabularInline):
    model = Unit
    extra = 0
    fields = ["name", "kind", "experience", "models_start", "models_left", "pins", "down", "destroyed"]
    show_change_link = True


@admin.register(Army)
class ArmyAdmin(admin.ModelAdmin):
    list_display = ["name", "side", "owner", "battle", "campaign", "scenario"]
    list_filter = ["side"]
    search_fields = ["name"]
    raw_id_fields = ["origin", "battle", "campaign", "scenario"]
    inlines = [UnitInline]


class UnitWeaponInline(admin.TabularInline):
    model = UnitWeapon
    extra = 0
    autocomplete_fields = ["weapon"]


@admin.register(Unit)
class UnitAdmin(admin.ModelAdmin):
    list_display = ["name", "army", "kind", "experience", "models_left", "models_start", "pins", "down"]
    list_filter = ["kind", "experience"]
    search_fields = ["name"]
    raw_id_fields = ["origin", "floor"]
    inlines = [UnitWeaponInline]


@admin.register(WeaponType)
class WeaponTypeAdmin(admin.ModelAdmin):
    list_display = ["name", "attack_factor"]
    search_fields = ["name"]


@admin.register(Weapon)
class WeaponAdmin(admin.ModelAdmin):
    list_display = ["name", "ruleset", "attack_factor", "he_value", "dh_category"]
    list_filter = ["ruleset"]
    search_fields = ["name"]


@admin.register(UnitWeapon)
class UnitWeaponAdmin(admin.ModelAdmin):
    list_display = ["unit", "weapon", "count"]
    list_select_related = ["unit", "weapon"]
