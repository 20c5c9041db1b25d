import math
from decimal import Decimal

from django.db import models
from django.db.models import F, Q
from django.utils.functional import cached_property


class Surface(models.TextChoices):
    WALL = "wall", "Wall"
    ROOF = "roof", "Roof"


class Material(models.Model):
    """A construction material with its LaserGrenadiers armour class (seed 000 tables)."""

    slug = models.SlugField(max_length=60)
    name = models.CharField(max_length=80)
    surface = models.CharField(max_length=4, choices=Surface.choices)
    armor_class = models.PositiveSmallIntegerField()
    flammable = models.BooleanField(default=False)
    # Bolt Action only lets tanks ram wooden or brick buildings; the material says which it is.
    construction = models.CharField(
        max_length=10,
        choices=[("wooden", "Wooden"), ("brick", "Brick"), ("stone", "Stone"), ("concrete", "Concrete"),
                 ("earth", "Earth"), ("metal", "Metal"), ("other", "Other")],
        default="other",
    )

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["slug", "surface"], name="material_slug_unique_per_surface"),
            models.CheckConstraint(condition=Q(armor_class__lte=9), name="material_armor_class_0_9"),
        ]
        ordering = ["surface", "armor_class", "name"]

    def __str__(self):
        return f"{self.name} ({self.get_surface_display().lower()}, AC {self.armor_class})"


class SheetKind(models.TextChoices):
    BUNKER = "bunker", "Bunker"
    FORT = "fort", "Fort"


class BunkerSheet(models.Model):
    """A Disposable Heroes fortification card (seed 003).

    The location table, weapons and penetration row are kept as the card prints them (JSON), so the
    sheet round-trips exactly; `apps.rules` validates their shape and arithmetic.
    """

    club = models.ForeignKey(
        "campaigns.Club", null=True, blank=True, on_delete=models.CASCADE, related_name="bunker_sheets",
        help_text="Empty for the library sheets every club can clone",
    )
    slug = models.SlugField(max_length=80)
    name = models.CharField(max_length=120)
    kind = models.CharField(max_length=6, choices=SheetKind.choices, default=SheetKind.BUNKER)
    kind_note = models.CharField(max_length=200, blank=True)
    dm = models.SmallIntegerField("DM", default=0)
    crew_total = models.PositiveSmallIntegerField(default=0)
    leaders = models.JSONField(default=dict, blank=True, help_text='NCO ranks among the crew, e.g. {"NCO": 1}')
    # {"front": [{"location": "Walls", "d10_from": 1, "d10_to": 8, "av": 75}, ...], "side": [...],
    #  "rear": [...], "top": {"av": 25}}
    locations = models.JSONField(default=dict, blank=True)
    # [{"crew": 3 | "all" | null, "name": "45mm", "location": "Main Gun", "range": 48, "rof": 1, "ap": 1,
    #   "mm": -1, "dm": -1, "special": ""}]
    weapons = models.JSONField(default=list, blank=True)
    features = models.JSONField(default=list, blank=True)
    penetration_weapon = models.CharField(max_length=40, blank=True)
    penetration_row = models.JSONField(default=list, blank=True, help_text="ten values for d10 <2, 2 … 9, 10+")
    note = models.TextField(blank=True)
    is_blank = models.BooleanField(default=False)
    version = models.PositiveIntegerField(default=1)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["club", "slug"], name="sheet_slug_unique_in_club"),
            models.UniqueConstraint(
                fields=["slug"], condition=Q(club__isnull=True), name="library_sheet_slug_unique"
            ),
            models.CheckConstraint(condition=Q(kind__in=SheetKind.values), name="sheet_kind_known"),
            models.CheckConstraint(condition=Q(dm__gte=-10, dm__lte=10), name="sheet_dm_sane"),
        ]
        ordering = ["name"]

    def __str__(self):
        return self.name


class StructureKind(models.TextChoices):
    BUILDING = "building", "Building"
    BUNKER = "bunker", "Bunker"
    FORT = "fort", "Fort"
    PILLBOX = "pillbox", "Pillbox"
    FOXHOLE = "foxhole", "Foxhole"
    TRENCH = "trench", "Trench"
    WEAPON_EMPLACEMENT = "weapon_emplacement", "Weapon emplacement"
    WEAPON_TURRET = "weapon_turret", "Weapon turret"
    STRONGPOINT = "strongpoint", "Strongpoint"


FORTIFICATION_KINDS = {
    StructureKind.BUNKER, StructureKind.FORT, StructureKind.PILLBOX, StructureKind.STRONGPOINT,
}


# A bunker sheet's crew is a Disposable Heroes mechanic (seed 003). In Bolt Action a bunker is held by
# units, as a building is (seed 001 'Bunkers'), and LaserGrenadiers builds its fortifications without
# sheets: there a structure may use a sheet for its kind and shape, but it has no crew. The ruleset of
# its scenario, campaign or battle decides (docs/rules.md, "Sheet crews"); the crew fields of the
# other rulesets' structures are kept empty as well (the builder, copies, imports, a migration).
CREW_RULESET = "dh"
NO_CREW = {"crew_side": "", "crew_men": 0, "crew_pins": 0, "crew_routed": False, "crew_penetrating_hits": 0,
           "weapons_destroyed": [], "crew_left": 0, "crew_start": 0}


def has_crews(ruleset):
    return ruleset == CREW_RULESET


def mark_crews(structures, ruleset):
    """Set `crewed` on rows whose owner's ruleset the caller knows, so that reading it costs no query."""
    for s in structures:
        s.crewed = has_crews(ruleset) and s.sheet_id is not None
    return structures


def footprint_reach(width, depth, rotation):
    """Half the width and depth of the box a width × depth footprint covers turned `rotation` degrees."""
    turn = math.radians(float(rotation or 0))
    w, d = float(width or 0), float(depth or 0)
    across = (abs(w * math.cos(turn)) + abs(d * math.sin(turn))) / 2
    down = (abs(w * math.sin(turn)) + abs(d * math.cos(turn))) / 2
    return (Decimal(str(round(across, 2))), Decimal(str(round(down, 2))))


class StructureQuerySet(models.QuerySet):
    def with_layout(self):
        return self.select_related("wall_material", "roof_material", "sheet").prefetch_related(
            "floors__openings", "floors__occupant", "connections"
        )

    def man_sheets(self):
        """Give each structure with a sheet and no crew at all (none left, none walked out) the sheet's
        full crew, as a Disposable Heroes structure gets when it is added: for a scenario switched to
        Disposable Heroes after its bunkers were placed under another ruleset."""
        total = BunkerSheet.objects.filter(pk=models.OuterRef("sheet_id")).values("crew_total")[:1]
        return self.filter(sheet__isnull=False, crew_men=0, crew_left=0).update(crew_men=models.Subquery(total))


class Structure(models.Model):
    """A building or fortification on the table.

    It belongs to exactly one owner: a scenario (the designer's template), a campaign (the ground as
    it stands between sessions) or a battle (the live copy being fought over).
    """

    scenario = models.ForeignKey(
        "campaigns.Scenario", null=True, blank=True, on_delete=models.CASCADE, related_name="structures"
    )
    campaign = models.ForeignKey(
        "campaigns.Campaign", null=True, blank=True, on_delete=models.CASCADE, related_name="structures"
    )
    battle = models.ForeignKey(
        "battles.Battle", null=True, blank=True, on_delete=models.CASCADE, related_name="structures"
    )
    # The same piece of ground across a campaign's battles: the battle copy points at the campaign's.
    origin = models.ForeignKey("self", null=True, blank=True, on_delete=models.SET_NULL, related_name="copies")

    name = models.CharField(max_length=120)
    kind = models.CharField(max_length=20, choices=StructureKind.choices, default=StructureKind.BUILDING)
    wall_material = models.ForeignKey(Material, on_delete=models.PROTECT, related_name="+")
    roof_material = models.ForeignKey(Material, null=True, blank=True, on_delete=models.PROTECT, related_name="+")
    flammable = models.BooleanField(default=False)
    flimsy = models.BooleanField(default=False, help_text="Shed or kennel: a tank drives through without a roll")

    x = models.DecimalField(max_digits=6, decimal_places=2, default=0, help_text="centre of the footprint, inches from the left table edge")
    y = models.DecimalField(max_digits=6, decimal_places=2, default=0,
                            help_text="centre of the footprint, inches from the top table edge")
    width = models.DecimalField(max_digits=6, decimal_places=2, default=6)
    depth = models.DecimalField(max_digits=6, decimal_places=2, default=6)
    rotation = models.DecimalField(max_digits=5, decimal_places=1, default=0, help_text="degrees clockwise about the centre")
    connections = models.ManyToManyField("self", blank=True, symmetrical=True)

    damage_max = models.PositiveIntegerField(default=0)
    damage_taken = models.PositiveIntegerField(default=0)
    fire_size = models.DecimalField(
        max_digits=8, decimal_places=2, null=True, blank=True, help_text="square inches burning; empty = no fire"
    )
    fire_started_turn = models.PositiveIntegerField(null=True, blank=True)
    collapsed = models.BooleanField(default=False)
    # Untenable (LaserGrenadiers) or knocked out (a Disposable Heroes 9–10 result) without collapsing.
    destroyed = models.BooleanField(default=False)
    impassable = models.BooleanField(default=False)
    breach_needed = models.PositiveSmallIntegerField(default=0, help_text="successful attacks that breach it")
    breach_scored = models.PositiveSmallIntegerField(default=0)
    breached = models.BooleanField(default=False)

    sheet = models.ForeignKey(BunkerSheet, null=True, blank=True, on_delete=models.PROTECT, related_name="structures")
    facing = models.DecimalField(max_digits=5, decimal_places=1, default=0, help_text="degrees clockwise; 0 = the sheet's front faces the top table edge")
    crew_side = models.CharField(max_length=1, blank=True, choices=[("A", "Side A"), ("B", "Side B")],
                                 help_text="the side whose crew holds it")
    crew_men = models.PositiveSmallIntegerField(default=0)
    crew_pins = models.PositiveSmallIntegerField(default=0)
    crew_routed = models.BooleanField(default=False)
    crew_penetrating_hits = models.PositiveSmallIntegerField(default=0)
    weapons_destroyed = models.JSONField(default=list, blank=True, help_text="indexes into the sheet's weapons")
    # Not lost: the men are on their side's roster as the sections they formed (the campaign tally).
    crew_left = models.PositiveSmallIntegerField(
        default=0, help_text="crew who walked out of it as infantry sections (DH: Crew leaves)")
    # What the campaign tally counts losses from. Not the sheet's crew_total: a designer may man a bunker
    # below its sheet, and those missing men were never lost. Not the scenario row either: the designer
    # may change it after the campaign started, and an imported campaign has none.
    crew_start = models.PositiveSmallIntegerField(
        default=0, help_text="men its crew had when its campaign or battle was set up from the scenario")

    objects = StructureQuerySet.as_manager()

    class Meta:
        constraints = [
            models.CheckConstraint(
                condition=(
                    Q(scenario__isnull=False, campaign__isnull=True, battle__isnull=True)
                    | Q(scenario__isnull=True, campaign__isnull=False, battle__isnull=True)
                    | Q(scenario__isnull=True, campaign__isnull=True, battle__isnull=False)
                ),
                name="structure_exactly_one_owner",
            ),
            models.CheckConstraint(condition=Q(damage_taken__lte=F("damage_max")), name="structure_damage_within_max"),
            models.CheckConstraint(condition=Q(fire_size__isnull=True) | Q(fire_size__gt=0), name="structure_fire_positive"),
            models.CheckConstraint(condition=Q(width__gt=0, depth__gt=0), name="structure_footprint_positive"),
            models.CheckConstraint(condition=Q(breach_scored__lte=F("breach_needed")) | Q(breach_needed=0),
                                   name="structure_breach_within_needed"),
            models.CheckConstraint(condition=Q(crew_pins__lte=3), name="structure_crew_pins_at_most_3"),
            models.CheckConstraint(condition=Q(sheet__isnull=True) | Q(kind__in=["bunker", "fort", "pillbox",
                                   "strongpoint", "weapon_turret", "weapon_emplacement"]),
                                   name="structure_sheet_only_on_fortifications"),
        ]
        ordering = ["name", "id"]

    def __str__(self):
        return self.name

    @property
    def burning(self):
        return self.fire_size is not None

    @property
    def damage_percent(self):
        # Rounded down, as the collapse check reads it (A-LG-2) and the log prints it: 7/18 is 38%.
        return 100 * self.damage_taken // self.damage_max if self.damage_max else 0

    @property
    def crew_of(self):
        """The men its crew line counts the men inside out of: those it started its campaign or battle with
        (a bunker manned below its sheet's strength is not short of the rest; those who walked out are
        named beside it); for a scenario's row, which has not started, its sheet's crew."""
        if self.crew_start:
            return self.crew_start
        return self.sheet.crew_total if self.sheet_id else 0

    @property
    def is_fortification(self):
        return self.kind in FORTIFICATION_KINDS

    @cached_property
    def crewed(self):
        """Whether it has a sheet crew: a sheet in a Disposable Heroes scenario, campaign or battle.
        Loaders that know the ruleset set it (`mark_crews`); otherwise the owner is read once."""
        if self.sheet_id is None:
            return False
        owner = self.battle if self.battle_id else self.campaign if self.campaign_id else self.scenario
        return owner is not None and has_crews(owner.ruleset)


class Floor(models.Model):
    """One storey; level 0 is the ground floor. An accessible flat roof is the top floor."""

    structure = models.ForeignKey(Structure, on_delete=models.CASCADE, related_name="floors")
    level = models.PositiveSmallIntegerField()
    is_roof = models.BooleanField(default=False)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["structure", "level"], name="floor_level_unique")]
        # By the column, not the relation: ordering by `structure` joins it for its own ordering.
        ordering = ["structure_id", "level"]

    def __str__(self):
        return f"{self.structure} — {self.label}"

    @property
    def label(self):
        if self.is_roof:
            return "flat roof"
        return "ground floor" if self.level == 0 else f"floor {self.level}"


class Side(models.TextChoices):
    FRONT = "front", "Front"
    RIGHT = "right", "Right"
    REAR = "rear", "Rear"
    LEFT = "left", "Left"


class OpeningKind(models.TextChoices):
    WINDOW = "window", "Window"
    DOOR = "door", "Door"
    FIRING_SLIT = "firing_slit", "Firing slit"
    MADE_OPENING = "made_opening", "Made opening"


class Opening(models.Model):
    floor = models.ForeignKey(Floor, on_delete=models.CASCADE, related_name="openings")
    side = models.CharField(max_length=5, choices=Side.choices)
    kind = models.CharField(max_length=12, choices=OpeningKind.choices)
    count = models.PositiveSmallIntegerField(default=1)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["floor", "side", "kind"], name="opening_one_row_per_kind_and_side"),
            models.CheckConstraint(condition=Q(count__gte=1), name="opening_count_positive"),
            # Bolt Action: a made opening goes on a side of the floor that has no other opening.
            models.CheckConstraint(condition=~Q(kind="made_opening") | Q(count=1), name="made_opening_single"),
        ]
        ordering = ["floor_id", "side", "kind"]

    def __str__(self):
        return f"{self.count} × {self.get_kind_display().lower()} ({self.get_side_display().lower()})"


class FireChance(models.Model):
    """LaserGrenadiers (seed 000): the d10 range, 1 to `d10_max`, on which a weapon type starts a fire."""

    weapon_type = models.CharField(max_length=40, unique=True)
    d10_max = models.PositiveSmallIntegerField()

    class Meta:
        constraints = [models.CheckConstraint(condition=Q(d10_max__gte=1, d10_max__lte=10), name="fire_chance_1_10")]
        ordering = ["weapon_type"]

    def __str__(self):
        return f"{self.weapon_type}: 1 to {self.d10_max}"


class WeatherEffect(models.Model):
    """LaserGrenadiers (seed 000): weather that makes fires less likely, and by how much."""

    condition = models.CharField(max_length=20, unique=True)
    fire_modifier = models.SmallIntegerField(help_text="subtracted from the top of the fire range")

    class Meta:
        ordering = ["fire_modifier"]

    def __str__(self):
        return f"{self.condition}: -{self.fire_modifier}"
