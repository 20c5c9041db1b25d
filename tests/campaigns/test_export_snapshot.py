"""The campaign download reads one moment of the database, on real PostgreSQL: it is written while it
is sent, so players may attack in the middle of it, and a file whose log runs past its battle's
`log_head` and ground would no longer verify on the host it is imported into."""

import json

import pytest
from django.contrib.auth.models import User
from django.db import connection

from apps.armies.models import Unit
from apps.battles import services
from apps.battles.log import first_broken_entry
from apps.campaigns.export import campaign_file, export_campaign, import_campaign
from apps.campaigns.models import Campaign, Club, Membership, Role
from apps.structures.models import Structure
from tests.battles.test_concurrency import run_together
from tests.campaigns.test_two_tabs import demo  # noqa: F401 - the fixture: `manage.py demo`, committed

pytestmark = [pytest.mark.postgres, pytest.mark.django_db(transaction=True)]


def test_an_attack_committed_while_the_file_is_sent_is_not_in_it(demo):  # noqa: F811
    campaign = Campaign.objects.get(name="Operation Crossroads")
    battle = campaign.battles.get(session_number=1)
    squad = Unit.objects.get(army__battle=battle, army__side="A", name="1st Rifle Squad")
    house = Structure.objects.get(battle=battle, name="Timber workshop")
    as_it_was = export_campaign(campaign)

    file = campaign_file(campaign_id=campaign.pk)
    head = next(file)  # the battles, their log heads and ground are read; their logs not yet
    # On its own connection, committed before the log is read: an entry, a new log_head, the squad moved.
    run_together(lambda: services.perform(battle_id=battle.pk, user=User.objects.get(username="alice"),
                                          action="move", inputs={"unit": f"u{squad.pk}", "structure": f"s{house.pk}",
                                                                 "floor": "1"}))
    doc = json.loads(head + b"".join(file))
    assert not connection.in_atomic_block  # the snapshot ends with the file
    assert export_campaign(campaign) != as_it_was  # the attack did land
    assert doc == as_it_was
    session = doc["battles"][0]
    assert session["log"][-1]["entry_hash"] == session["log_head"]

    # Imported on another host, every battle's log verifies against its head.
    club = Club.objects.create(name="The new host", slug="new-host")
    organiser = User.objects.get(username="demo")
    Membership.objects.create(club=club, user=organiser, role=Role.ORGANISER)
    copy_ = import_campaign(doc, club=club, user=organiser)
    assert [first_broken_entry(b) for b in copy_.battles.all()] == [None]


def test_a_dropped_download_ends_its_transaction(demo):  # noqa: F811
    """The server closes the response of a client that went away: the read-only snapshot is rolled back,
    not left open on a connection the worker keeps."""
    campaign = Campaign.objects.get(name="Operation Crossroads")
    file = campaign_file(campaign_id=campaign.pk)
    next(file)
    assert connection.in_atomic_block
    file.close()
    assert not connection.in_atomic_block
    with connection.cursor() as cursor:
        cursor.execute("SELECT current_setting('transaction_read_only')")
        assert cursor.fetchone() == ("off",)  # the next request's statements are not read-only
