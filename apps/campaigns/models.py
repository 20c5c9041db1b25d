from django.conf import settings
from django.db import models
from django.db.models import Q


class Ruleset(models.TextChoices):
    LASER_GRENADIERS = "lg", "LaserGrenadiers"
    BOLT_ACTION = "ba", "Bolt Action"
    DISPOSABLE_HEROES = "dh", "Disposable Heroes"


class Weather(models.TextChoices):
    CLEAR = "clear", "Clear"
    MIST = "mist", "Mist"
    RAIN = "rain", "Rain"
    VERY_STRONG_WIND = "very_strong_wind", "Very strong wind"


class DamageVariant(models.IntegerChoices):
    NONE = 0, "No damage points"
    ONE = 1, "Variant 1: a penetration is 1 point"
    TWO = 2, "Variant 2: hit 1, penetration = attack factor"
    THREE = 3, "Variant 3: as 2, doubled for effect-area weapons"


class RulesOptions(models.Model):
    """The switches a scenario, campaign or battle sets for its ruleset's optional rules."""

    ruleset = models.CharField(max_length=2, choices=Ruleset.choices, default=Ruleset.BOLT_ACTION)
    damage_variant = models.PositiveSmallIntegerField(choices=DamageVariant.choices, default=DamageVariant.NONE)
    collapse_check = models.BooleanField(default=False, help_text="LaserGrenadiers: start-of-turn collapse check")
    fires = models.BooleanField(default=True, help_text="Weapons may set flammable structures on fire")
    uncontrolled_events = models.BooleanField(default=False, help_text="LaserGrenadiers: initiative ties roll events")
    fireteam_initiative = models.BooleanField(default=False, help_text="LaserGrenadiers: fireteams act together")
    weather = models.CharField(max_length=20, choices=Weather.choices, default=Weather.CLEAR)
    options = models.JSONField(default=dict, blank=True, help_text="Further house-rule settings")

    class Meta:
        abstract = True
        constraints = [
            models.CheckConstraint(
                condition=Q(damage_variant__gte=0, damage_variant__lte=3), name="%(class)s_damage_variant_0_3"
            ),
            models.CheckConstraint(condition=Q(ruleset__in=Ruleset.values), name="%(class)s_ruleset_known"),
            models.CheckConstraint(condition=Q(weather__in=Weather.values), name="%(class)s_weather_known"),
        ]

    def rules_options(self):
        return {
            "ruleset": self.ruleset,
            "damage_variant": self.damage_variant,
            "collapse_check": self.collapse_check,
            "fires": self.fires,
            "uncontrolled_events": self.uncontrolled_events,
            "fireteam_initiative": self.fireteam_initiative,
            "weather": self.weather,
            **(self.options or {}),
        }


class Club(models.Model):
    name = models.CharField(max_length=120)
    slug = models.SlugField(max_length=60, unique=True)
    created_at = models.DateTimeField(auto_now_add=True)
    members = models.ManyToManyField(settings.AUTH_USER_MODEL, through="Membership", related_name="clubs")

    class Meta:
        ordering = ["name"]

    def __str__(self):
        return self.name


class Role(models.TextChoices):
    ORGANISER = "organiser", "Organiser"
    DESIGNER = "designer", "Designer"
    PLAYER = "player", "Player"


class Membership(models.Model):
    club = models.ForeignKey(Club, on_delete=models.CASCADE, related_name="memberships")
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="memberships")
    role = models.CharField(max_length=10, choices=Role.choices, default=Role.PLAYER)
    joined_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["club", "user"], name="membership_one_per_club"),
            models.CheckConstraint(condition=Q(role__in=Role.values), name="membership_role_known"),
        ]
        ordering = ["club", "role", "user__username"]

    def __str__(self):
        return f"{self.user} — {self.get_role_display()} of {self.club}"


class Campaign(RulesOptions):
    club = models.ForeignKey(Club, on_delete=models.CASCADE, related_name="campaigns")
    name = models.CharField(max_length=120)
    description = models.TextField(blank=True)
    fires_persist = models.BooleanField(
        default=False, help_text="Fires still burning when a session ends keep burning in the next one"
    )
    single_open_battle = models.BooleanField(
        default=True, help_text="A new session can only start once the previous battle is finished"
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta(RulesOptions.Meta):
        constraints = [
            *RulesOptions.Meta.constraints,
            models.UniqueConstraint(fields=["club", "name"], name="campaign_name_unique_in_club"),
        ]
        ordering = ["club", "name"]

    def __str__(self):
        return self.name


class Scenario(RulesOptions):
    club = models.ForeignKey(Club, on_delete=models.CASCADE, related_name="scenarios")
    name = models.CharField(max_length=120)
    description = models.TextField(blank=True)
    table_width = models.DecimalField(max_digits=6, decimal_places=2, default=72, help_text="inches")
    table_depth = models.DecimalField(max_digits=6, decimal_places=2, default=48, help_text="inches")
    deployment_zones = models.JSONField(
        default=list, blank=True, help_text='[{"side": "A", "x": 0, "y": 0, "width": 72, "depth": 12}]'
    )
    author = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL)
    version = models.PositiveIntegerField(default=1)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta(RulesOptions.Meta):
        constraints = [
            *RulesOptions.Meta.constraints,
            models.UniqueConstraint(fields=["club", "name"], name="scenario_name_unique_in_club"),
            models.CheckConstraint(condition=Q(table_width__gt=0, table_depth__gt=0), name="scenario_table_positive"),
        ]
        ordering = ["club", "name"]

    def __str__(self):
        return self.name
