from django.core.management.base import BaseCommand, CommandError

from apps.battles.log import first_broken_entry
from apps.battles.models import Battle


class Command(BaseCommand):
    help = "Check a battle's log against its hash chain and name the first entry that no longer matches."

    def add_arguments(self, parser):
        parser.add_argument("battle", type=int, help="the battle's id")

    def handle(self, *args, battle, **options):
        try:
            subject = Battle.objects.get(pk=battle)
        except Battle.DoesNotExist:
            raise CommandError(f"there is no battle {battle}") from None
        broken = first_broken_entry(subject)
        if broken is not None:
            seq, reason = broken
            raise CommandError(f"battle {battle} ({subject.name}): first bad entry #{seq}: {reason}")
        count = subject.log_entries.count()
        self.stdout.write(f"battle {battle} ({subject.name}): all {count} log entries match their hash chain")
