from django.contrib import admin

from apps.structures.models import BunkerSheet, FireChance, Floor, Material, Opening, Structure, WeatherEffect


@admin.register(Material)
class MaterialAdmin(admin.ModelAdmin):
    list_display = ["name", "surface", "armor_class", "flammable", "construction"]
    list_filter = ["surface", "flammable"]
    search_fields = ["name"]


@admin.register(FireChance)
class FireChanceAdmin(admin.ModelAdmin):
    list_display = ["weapon_type", "d10_max"]


@admin.register(WeatherEffect)
class WeatherEffectAdmin(admin.ModelAdmin):
    list_display = ["condition", "fire_modifier"]


@admin.register(BunkerSheet)
class BunkerSheetAdmin(admin.ModelAdmin):
    list_display = ["name", "kind", "dm", "crew_total", "club", "version"]
    list_filter = ["kind", "club"]
    search_fields = ["name"]


class OpeningInline(admin.TabularInline):
    model = Opening
    extra = 0


@admin.register(Floor)
class FloorAdmin(admin.ModelAdmin):
    list_display = ["structure", "level", "is_roof"]
    inlines = [OpeningInline]
    list_select_related = ["structure"]


class FloorInline(admin.TabularInline):
    model = Floor
    extra = 0
    show_change_link = True


@admin.register(Structure)
class StructureAdmin(admin.ModelAdmin):
    list_display = ["name", "kind", "battle", "campaign", "scenario", "damage_taken", "damage_max", "collapsed"]
    list_filter = ["kind", "collapsed", "impassable"]
    search_fields = ["name"]
    list_select_related = ["battle", "campaign", "scenario"]
    raw_id_fields = ["origin", "battle", "campaign", "scenario"]
    filter_horizontal = ["connections"]
    inlines = [FloorInline]


@admin.register(Opening)
class OpeningAdmin(admin.ModelAdmin):
    list_display = ["floor", "side", "kind", "count"]
    list_select_related = ["floor__structure"]
