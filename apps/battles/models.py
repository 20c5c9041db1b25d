from django.conf import settings
from django.core.serializers.json import DjangoJSONEncoder
from django.db import models
from django.db.models import F, Q

from apps.battles.watch import SWITCHED_OFF
from apps.campaigns.models import RulesOptions


class BattleStatus(models.TextChoices):
    SETUP = "setup", "Setting up"
    IN_PROGRESS = "in_progress", "In progress"
    FINISHED = "finished", "Finished"


class BattleQuerySet(models.QuerySet):
    def bump_version(self, battle_id):
        """Every change to a battle bumps its version so watching phones know to refresh."""
        return self.filter(pk=battle_id).update(version=F("version") + 1)

    def sides_changed(self):
        """Who plays a side changed, which no log entry records: phones redraw their map and the
        armies panel ("Played by"), as after a map change they cannot account for, and their form."""
        return self.update(version=F("version") + 1, map_version=F("map_version") + 1)

    def versions(self, battle_id, *, watcher=None, spectator_link_id=None):
        """(version, map_version, x) of a battle, or None. For a member's poll, `watcher` is its
        token's (membership id, user id) and x that membership's watch_epoch, None once it is not
        the user's membership in this battle's club, SWITCHED_OFF once the account is inactive; for a spectator's, x says whether that link of
        this battle is still live. The poll asks this of every phone every two seconds: one fixed
        statement, no ORM query building (a third of the poll's time otherwise)."""
        from django.db import connection

        battle_table = self.model._meta.db_table
        if watcher is not None:
            from apps.campaigns.models import Membership

            from django.contrib.auth import get_user_model

            # A subquery, not a second query: the poll stays one round trip (two more index probes) and
            # never reads the session. The account's is_active is read here because switching it off
            # need not go through save() (a bulk update in the admin or the shell bumps no epoch).
            user_table = get_user_model()._meta.db_table
            sql = (f'SELECT b.version, b.map_version, (SELECT CASE WHEN u.is_active THEN m.watch_epoch '
                   f'ELSE {SWITCHED_OFF} END FROM "{Membership._meta.db_table}" m JOIN "{user_table}" u '
                   f'ON u.id = m.user_id WHERE m.id = %s AND m.user_id = %s AND m.club_id = b.club_id) '
                   f'FROM "{battle_table}" b WHERE b.id = %s')
            params = [*watcher, battle_id]
        else:
            from apps.campaigns.models import SpectatorLink

            sql = (f'SELECT b.version, b.map_version, EXISTS (SELECT 1 FROM "{SpectatorLink._meta.db_table}" l '
                   f'WHERE l.id = %s AND l.battle_id = b.id AND l.revoked_at IS NULL) '
                   f'FROM "{battle_table}" b WHERE b.id = %s')
            params = [spectator_link_id, battle_id]
        with connection.cursor() as cursor:
            cursor.execute(sql, params)
            return cursor.fetchone()


class Battle(RulesOptions):
    club = models.ForeignKey("campaigns.Club", on_delete=models.CASCADE, related_name="battles")
    campaign = models.ForeignKey(
        "campaigns.Campaign", null=True, blank=True, on_delete=models.CASCADE, related_name="battles"
    )
    scenario = models.ForeignKey(
        "campaigns.Scenario", null=True, blank=True, on_delete=models.SET_NULL, related_name="battles"
    )
    name = models.CharField(max_length=120)
    session_number = models.PositiveSmallIntegerField(null=True, blank=True, help_text="its place in the campaign")
    turn = models.PositiveIntegerField(default=1)
    status = models.CharField(max_length=12, choices=BattleStatus.choices, default=BattleStatus.SETUP)
    version = models.PositiveBigIntegerField(default=1)
    # Bumped only when structures or units change, so a poll can skip redrawing the map.
    map_version = models.PositiveBigIntegerField(default=1)
    upkeep_turn = models.PositiveIntegerField(default=0, help_text="last turn whose start-of-turn upkeep ran")
    # Hash of the newest log entry: without it, deleting the last entries would leave a valid chain.
    log_head = models.CharField(max_length=64, blank=True)
    # The newest entry that came with a campaign import. Its undo data names the old host's rows (and
    # the file could say anything there): entries up to it are never undone here.
    imported_seq = models.PositiveIntegerField(default=0)
    # LaserGrenadiers sequence of play: who holds the initiative, the pass streak, events pending.
    sequence = models.JSONField(default=dict, blank=True)
    table_width = models.DecimalField(max_digits=6, decimal_places=2, default=72, help_text="inches")
    table_depth = models.DecimalField(max_digits=6, decimal_places=2, default=48, help_text="inches")
    winner = models.CharField(max_length=1, blank=True, choices=[("A", "Side A"), ("B", "Side B"), ("D", "Draw")])
    result = models.CharField(max_length=300, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    # The campaign's rows as they were before this battle's end state was written back (for reopening).
    campaign_before = models.JSONField(default=dict, blank=True, encoder=DjangoJSONEncoder)
    # A session brought open by a campaign import: the campaign's rows as it was set up from them, with
    # this host's ids. Its 'session_start' entry names the old host's, frozen by the hash chain.
    imported_setup = models.JSONField(default=dict, blank=True, encoder=DjangoJSONEncoder)

    objects = BattleQuerySet.as_manager()

    class Meta(RulesOptions.Meta):
        constraints = [
            *RulesOptions.Meta.constraints,
            models.CheckConstraint(condition=Q(turn__gte=1), name="battle_turn_from_1"),
            models.CheckConstraint(condition=Q(status__in=BattleStatus.values), name="battle_status_known"),
            models.CheckConstraint(
                condition=~Q(status="finished") | Q(finished_at__isnull=False), name="battle_finished_has_time"
            ),
            models.UniqueConstraint(
                fields=["campaign", "session_number"], condition=Q(campaign__isnull=False),
                name="battle_session_number_unique_in_campaign",
            ),
        ]
        ordering = ["-created_at"]

    def __str__(self):
        return self.name

    @property
    def is_open(self):
        return self.status != BattleStatus.FINISHED


class DieSource(models.TextChoices):
    SERVER = "server", "rolled by the server"
    PLAYER = "player", "entered by a player"


class LogEntry(models.Model):
    """One thing that happened in a battle, with every die and what is needed to undo it.

    `dice` is a list of {"purpose", "sides", "count", "faces", "value", "source"}; `outcome` is the
    rules engine's JSON outcome; `undo` holds the rows' state before the entry was applied.
    `entry_hash` chains over `prev_hash`, so an edited, deleted or reordered entry is detectable.
    """

    battle = models.ForeignKey(Battle, on_delete=models.CASCADE, related_name="log_entries")
    seq = models.PositiveIntegerField()
    turn = models.PositiveIntegerField()
    actor = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="battle_log_entries"
    )
    actor_name = models.CharField(max_length=150, blank=True, help_text="kept when the account is deleted")
    side = models.CharField(max_length=1, blank=True)
    action = models.CharField(max_length=40)
    inputs = models.JSONField(default=dict, blank=True)
    dice = models.JSONField(default=list, blank=True)
    outcome = models.JSONField(default=dict, blank=True)
    summary = models.CharField(max_length=500)
    undo = models.JSONField(default=dict, blank=True)
    undone = models.BooleanField(default=False)
    undoes = models.OneToOneField(
        "self", null=True, blank=True, on_delete=models.PROTECT, related_name="undone_by"
    )
    # The form's one-time token: a double tap resolves once.
    client_token = models.CharField(max_length=64, null=True, blank=True)
    prev_hash = models.CharField(max_length=64, blank=True)
    entry_hash = models.CharField(max_length=64, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        verbose_name_plural = "log entries"
        constraints = [
            models.UniqueConstraint(fields=["battle", "seq"], name="log_seq_unique_per_battle"),
            models.UniqueConstraint(
                fields=["battle", "client_token"], condition=Q(client_token__isnull=False),
                name="log_client_token_once_per_battle",
            ),
            models.CheckConstraint(condition=Q(seq__gte=1), name="log_seq_from_1"),
        ]
        # The (battle, seq) unique index also serves "newest first" scans.
        ordering = ["-seq"]

    def __str__(self):
        return f"#{self.seq} {self.summary}"
