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

    @property
    def possessive(self):
        """"Wargamers' sheet", not "Wargamers's sheet"."""
        return f"{self.name}'" if self.name.lower().endswith("s") else f"{self.name}'s"

    @classmethod
    def lock(cls, pk):
        """The club's row, locked to the end of the transaction. Whatever picks a free name or slug among
        the club's sheets, scenarios or campaigns holds it first: two tabs (or a double tap) doing so at
        once would otherwise both pick the same one, and the second would fail on the unique constraint."""
        return cls.objects.select_for_update().get(pk=pk)


class Role(models.TextChoices):
    ORGANISER = "organiser", "Organiser"
    DESIGNER = "designer", "Designer"
    PLAYER = "player", "Player"


class MembershipQuerySet(models.QuerySet):
    def end_watches(self):
        """Every battle page these memberships have open stops polling and reloads (the poll refuses
        its token): one UPDATE, no rows read."""
        return self.update(watch_epoch=models.F("watch_epoch") + 1)


class Membership(models.Model):
    club = models.ForeignKey(Club, on_delete=models.CASCADE, related_name="memberships")
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="memberships")
    role = models.CharField(max_length=10, choices=Role.choices, default=Role.PLAYER)
    joined_at = models.DateTimeField(auto_now_add=True)
    # Carried by every battle page's poll token (apps/battles/watch.py), which needs no session. Bumped
    # when what the token was issued under ends: signing out, a new password, a switched-off account, a
    # new role. The poll's one query compares it, so an old page stops at once, not 12 hours later.
    watch_epoch = models.PositiveIntegerField(default=0)

    objects = MembershipQuerySet.as_manager()

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
    # Its own copy of the scenario's zones, as of its start, as it has of the ground and forces: every
    # session's map shades them, and a designer's later change to the scenario moves no running campaign's.
    deployment_zones = models.JSONField(
        default=list, blank=True, help_text='[{"side": "A", "x": 0, "y": 0, "width": 72, "depth": 12}]'
    )
    # The table its first session was set up on (its scenario's): a session set up while none is left (the
    # first, discarded as set up by mistake) is set up on it again, as a later one is on the last session's.
    # Unknown (None) for a campaign that never had a session.
    table_width = models.DecimalField(max_digits=6, decimal_places=2, null=True, blank=True, help_text="inches")
    table_depth = models.DecimalField(max_digits=6, decimal_places=2, null=True, blank=True, help_text="inches")
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


# Invitations, spectator links and sign-in throttling (issue 6) ----------------------------------

# Read aloud at the table or typed on a phone: no 0/O or 1/I/L to mix up.
INVITE_ALPHABET = "23456789ABCDEFGHJKMNPQRSTUVWXYZ"
INVITE_CODE_LENGTH = 8


class Invite(models.Model):
    """A code (and the link /join/<code>/) that makes whoever uses it a member of the club with
    the role the organiser chose, until it expires, is used up or is revoked."""

    club = models.ForeignKey(Club, on_delete=models.CASCADE, related_name="invites")
    role = models.CharField(max_length=10, choices=Role.choices, default=Role.PLAYER)
    code = models.CharField(max_length=16, unique=True)
    expires_at = models.DateTimeField()
    max_uses = models.PositiveIntegerField(default=1)
    uses = models.PositiveIntegerField(default=0)
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL,
                                   related_name="+")
    created_at = models.DateTimeField(auto_now_add=True)
    revoked_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        constraints = [
            models.CheckConstraint(condition=Q(role__in=Role.values), name="invite_role_known"),
            models.CheckConstraint(condition=Q(max_uses__gte=1), name="invite_max_uses_positive"),
            # Uses are counted with an UPDATE guarded by the same condition; this is the backstop.
            models.CheckConstraint(condition=Q(uses__lte=models.F("max_uses")), name="invite_uses_within_max"),
        ]
        ordering = ["-created_at"]

    def __str__(self):
        return f"{self.code} ({self.get_role_display()} of {self.club})"

    def problem(self, now):
        """Why this code cannot be used now, in words for the person typing it; None if it can."""
        if self.revoked_at is not None:
            return "This invitation was withdrawn by the club's organisers. Ask them for a new one."
        if self.expires_at <= now:
            return "This invitation has expired. Ask the club's organisers for a new one."
        if self.uses >= self.max_uses:
            return "This invitation has been used as many times as it allows. Ask the club's organisers for a new one."
        return None


class SpectatorLink(models.Model):
    """Read-only, account-free access to one battle, for as long as the link is not revoked. The URL
    carries a signed (link id, secret): the signature keeps ids from being guessed, the secret ties
    the URL to this very row (an id reused after a restore into another instance opens nothing)."""

    battle = models.ForeignKey("battles.Battle", on_delete=models.CASCADE, related_name="spectator_links")
    secret = models.CharField(max_length=32)
    label = models.CharField(max_length=80, blank=True, help_text="Who the link is for, e.g. “club night screen”")
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL,
                                   related_name="+")
    created_at = models.DateTimeField(auto_now_add=True)
    revoked_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at"]

    def __str__(self):
        return f"Spectator link {self.pk} for {self.battle_id}"


class SignInFailure(models.Model):
    """One sign-in attempt that has not (yet) succeeded. The throttle counts these rows: they live in
    the database because every gunicorn process on every server must see the same count. A row is
    written before the password is checked and deleted when it was right, so requests racing each
    other can never get more guesses than the limit."""

    username = models.CharField(max_length=150)
    ip = models.GenericIPAddressField(null=True, blank=True)
    at = models.DateTimeField(db_index=True)  # expired rows are purged by age

    class Meta:
        indexes = [
            models.Index(fields=["username", "at"], name="signin_failure_user_at"),
            models.Index(fields=["ip", "at"], name="signin_failure_ip_at"),
        ]

    def __str__(self):
        return f"{self.username} from {self.ip} at {self.at:%Y-%m-%d %H:%M}"
