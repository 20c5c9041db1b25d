from django.conf import settings
from django.db import models
from django.db.models import F, Q

from apps.campaigns.models import Ruleset


class Side(models.TextChoices):
    A = "A", "Side A"
    B = "B", "Side B"


class Army(models.Model):
    """A force on one side. Like structures it belongs to a scenario, a campaign or a battle."""

    scenario = models.ForeignKey(
        "campaigns.Scenario", null=True, blank=True, on_delete=models.CASCADE, related_name="armies"
    )
    campaign = models.ForeignKey(
        "campaigns.Campaign", null=True, blank=True, on_delete=models.CASCADE, related_name="armies"
    )
    battle = models.ForeignKey("battles.Battle", null=True, blank=True, on_delete=models.CASCADE, related_name="armies")
    origin = models.ForeignKey("self", null=True, blank=True, on_delete=models.SET_NULL, related_name="copies")
    side = models.CharField(max_length=1, choices=Side.choices)
    name = models.CharField(max_length=120)
    owner = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="armies"
    )

    class Meta:
        verbose_name_plural = "armies"
        constraints = [
            models.CheckConstraint(
                condition=(
                    Q(scenario__isnull=False, campaign__isnull=True, battle__isnull=True)
                    | Q(scenario__isnull=True, campaign__isnull=False, battle__isnull=True)
                    | Q(scenario__isnull=True, campaign__isnull=True, battle__isnull=False)
                ),
                name="army_exactly_one_owner",
            ),
            models.CheckConstraint(condition=Q(side__in=Side.values), name="army_side_known"),
            models.UniqueConstraint(fields=["battle", "side"], condition=Q(battle__isnull=False),
                                    name="army_one_per_side_in_battle"),
            models.UniqueConstraint(fields=["campaign", "side"], condition=Q(campaign__isnull=False),
                                    name="army_one_per_side_in_campaign"),
            models.UniqueConstraint(fields=["scenario", "side"], condition=Q(scenario__isnull=False),
                                    name="army_one_per_side_in_scenario"),
        ]
        ordering = ["side", "name"]

    def __str__(self):
        return f"{self.name} ({self.get_side_display()})"


class WeaponType(models.Model):
    """LaserGrenadiers (seed 004): the attack factor of each weapon type. Anti-matter has none:
    its attack factor equals the armour class it strikes."""

    slug = models.SlugField(max_length=60, unique=True)
    name = models.CharField(max_length=80)
    attack_factor = models.PositiveSmallIntegerField(null=True, blank=True)

    class Meta:
        constraints = [
            models.CheckConstraint(
                condition=Q(attack_factor__isnull=True) | Q(attack_factor__gte=1, attack_factor__lte=9),
                name="weapon_type_attack_factor_1_9",
            )
        ]
        ordering = ["attack_factor", "name"]

    def __str__(self):
        return f"{self.name} (AF {self.attack_factor or 'varies'})"


class Weapon(models.Model):
    """A catalogue entry: one weapon with the characteristics its ruleset's seeds give it."""

    ruleset = models.CharField(max_length=2, choices=Ruleset.choices)
    slug = models.SlugField(max_length=80)
    name = models.CharField(max_length=120)
    notes = models.CharField(max_length=300, blank=True)

    # LaserGrenadiers (seed 004)
    weapon_type = models.CharField(
        max_length=40, blank=True,
        help_text="key of the LaserGrenadiers attack-factor table (apps.rules.tables.ATTACK_FACTOR), "
                  "e.g. fusion_small_arms",
    )
    attack_factor = models.PositiveSmallIntegerField(null=True, blank=True, help_text="empty for anti-matter")
    range_factor = models.PositiveSmallIntegerField(null=True, blank=True, help_text="short range in inches")
    min_range = models.PositiveSmallIntegerField(null=True, blank=True)
    rof_code = models.CharField(
        max_length=1, blank=True,
        choices=[("A", "Automatic"), ("B", "Beam"), ("P", "Pulse"), ("R", "Rotary automatic"), ("S", "Single shot")],
    )
    weapon_class = models.CharField(
        max_length=1, blank=True,
        choices=[("L", "Light"), ("M", "Medium"), ("H", "Heavy"), ("G", "Magnum"), ("U", "Ultra")],
    )
    effect_area = models.DecimalField(max_digits=5, decimal_places=2, null=True, blank=True, help_text="inches")
    # The seeds say which weapons have an effect area, but rarely how large (that is in the weapon charts):
    # damage variant 3 and the hits inside a structure need only the former.
    has_effect_area = models.BooleanField(
        default=False, help_text="the weapon has an effect area, whether or not its size is known")
    detection_effect = models.SmallIntegerField(null=True, blank=True)
    barrels = models.PositiveSmallIntegerField(default=1)
    cost = models.PositiveIntegerField(null=True, blank=True, help_text="from the weapon charts (not in the seeds)")
    vehicle_only = models.BooleanField(default=False)
    variable_fire = models.BooleanField(default=False, help_text="beam weapon that may fire in pulse mode")

    # Bolt Action (seed 001)
    he_value = models.CharField(
        max_length=3, blank=True, choices=[("D3", "D3"), ("D6", "D6"), ("2D6", "2D6"), ("3D6", "3D6")],
        help_text="HE 'damage in buildings' value",
    )
    flamethrower = models.BooleanField(default=False)
    heavy_weapon = models.BooleanField(default=False)
    heavy_howitzer = models.BooleanField(default=False)
    indirect = models.BooleanField(default=False)

    # Disposable Heroes (seed 003)
    dh_category = models.CharField(
        max_length=12, blank=True,
        choices=[("small_arms", "Small arms"), ("main_gun", "Main gun"), ("infantry_at", "Infantry anti-tank"),
                 ("atr", "Anti-tank rifle"), ("flamethrower", "Flamethrower"), ("explosives", "Explosives")],
    )
    ap = models.PositiveSmallIntegerField("AP", null=True, blank=True)
    rof = models.PositiveSmallIntegerField("ROF", null=True, blank=True)
    mm = models.SmallIntegerField("MM", null=True, blank=True)
    dm = models.SmallIntegerField("DM", null=True, blank=True)
    penetration_row = models.JSONField(default=list, blank=True, help_text="ten values for d10 <2, 2 … 9, 10+")
    range_in = models.DecimalField(
        max_digits=6, decimal_places=2, null=True, blank=True,
        help_text="range in inches (DH sheets; LG uses range_factor)",
    )
    special = models.CharField(max_length=80, blank=True, help_text='DH "Special" column, e.g. No Acq., Indirect')

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["ruleset", "slug"], name="weapon_slug_unique_per_ruleset"),
            models.CheckConstraint(condition=Q(ruleset__in=Ruleset.values), name="weapon_ruleset_known"),
            models.CheckConstraint(
                condition=Q(attack_factor__isnull=True) | Q(attack_factor__gte=1, attack_factor__lte=9),
                name="weapon_attack_factor_1_9",
            ),
            models.CheckConstraint(condition=Q(barrels__gte=1), name="weapon_barrels_positive"),
        ]
        ordering = ["ruleset", "name"]

    def __str__(self):
        return f"{self.name} ({self.get_ruleset_display()})"


class UnitKind(models.TextChoices):
    INFANTRY = "infantry", "Infantry"
    ARTILLERY = "artillery", "Artillery"
    VEHICLE = "vehicle", "Vehicle"


class TankClass(models.TextChoices):
    NONE = "", "Not heavy (a light or medium tank, or no tank)"
    HEAVY = "heavy", "Heavy tank"
    SUPER_HEAVY = "super_heavy", "Super-heavy tank"


class Experience(models.TextChoices):
    INEXPERIENCED = "inexperienced", "Inexperienced"
    REGULAR = "regular", "Regular"
    VETERAN = "veteran", "Veteran"


class Unit(models.Model):
    army = models.ForeignKey(Army, on_delete=models.CASCADE, related_name="units")
    origin = models.ForeignKey("self", null=True, blank=True, on_delete=models.SET_NULL, related_name="copies")
    name = models.CharField(max_length=120)
    kind = models.CharField(max_length=10, choices=UnitKind.choices, default=UnitKind.INFANTRY)
    tank_class = models.CharField(max_length=12, choices=TankClass.choices, default=TankClass.NONE, blank=True)
    experience = models.CharField(max_length=14, choices=Experience.choices, default=Experience.REGULAR)
    models_start = models.PositiveSmallIntegerField(default=1, help_text="models at full strength")
    models_left = models.PositiveSmallIntegerField(default=1, help_text="models still fighting")
    down = models.BooleanField(default=False)
    pins = models.PositiveSmallIntegerField(default=0)
    acted = models.BooleanField(default=False, help_text="has had its action or initiative this turn")
    incapacitated = models.BooleanField(default=False)
    morale_check_pending = models.BooleanField(default=False)
    fireteam = models.CharField(max_length=40, blank=True, help_text="LaserGrenadiers fireteam this piece belongs to")
    destroyed = models.BooleanField(default=False)
    # Where it is: a floor of a structure (one unit per floor) or a point on the table.
    floor = models.OneToOneField(
        "structures.Floor", null=True, blank=True, on_delete=models.SET_NULL, related_name="occupant"
    )
    x = models.DecimalField(max_digits=6, decimal_places=2, null=True, blank=True)
    y = models.DecimalField(max_digits=6, decimal_places=2, null=True, blank=True)
    weapons = models.ManyToManyField(Weapon, through="UnitWeapon", related_name="units", blank=True)
    # A Disposable Heroes section formed by a crew that left its fortification (same owner as the unit):
    # moved back into it, its men are that crew again (docs/rules.md, "A section rejoins its crew").
    crew_of = models.ForeignKey("structures.Structure", null=True, blank=True, on_delete=models.SET_NULL,
                                related_name="+", help_text="the fortification whose crew walked out as this section")
    # Back in its crew: off the table, its men counted in the crew; kept (not deleted) so Undo, a reopened
    # session and the tally (its dead outside are the crew's losses) still find it.
    rejoined = models.BooleanField(default=False, help_text="moved back into its fortification as its crew")

    class Meta:
        constraints = [
            models.CheckConstraint(condition=Q(models_left__lte=F("models_start")), name="unit_models_within_start"),
            models.CheckConstraint(condition=Q(kind__in=UnitKind.values), name="unit_kind_known"),
            models.CheckConstraint(condition=Q(tank_class="") | Q(kind="vehicle"), name="unit_tank_class_only_vehicles"),
            models.CheckConstraint(condition=Q(experience__in=Experience.values), name="unit_experience_known"),
            models.CheckConstraint(
                condition=Q(floor__isnull=True) | Q(x__isnull=True, y__isnull=True),
                name="unit_on_a_floor_or_on_the_table",
            ),
            models.CheckConstraint(
                condition=Q(x__isnull=True, y__isnull=True) | Q(x__isnull=False, y__isnull=False),
                name="unit_point_has_both_coordinates",
            ),
        ]
        ordering = ["army", "name"]

    def __str__(self):
        return self.name

    @property
    def losses(self):
        return self.models_start - self.models_left


class UnitWeapon(models.Model):
    unit = models.ForeignKey(Unit, on_delete=models.CASCADE, related_name="unit_weapons")
    weapon = models.ForeignKey(Weapon, on_delete=models.PROTECT, related_name="unit_weapons")
    count = models.PositiveSmallIntegerField(default=1)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["unit", "weapon"], name="unit_weapon_once"),
            models.CheckConstraint(condition=Q(count__gte=1), name="unit_weapon_count_positive"),
        ]

    def __str__(self):
        return f"{self.count} × {self.weapon.name}"
