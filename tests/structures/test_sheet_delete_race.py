"""A designer deletes a sheet while another places it in a scenario, on real PostgreSQL. The delete
used to check "is it placed anywhere?" before the placement was saved: it deleted the sheet and the
placement then failed on the missing row with a server error (or, the other way round, the delete did).
Both now take the sheet's row: the placement finishes and the delete is refused, naming the scenario."""

import threading

import pytest
from django.db import connection
from django.test import Client
from django.urls import reverse

from apps.campaigns import scenario_views
from apps.campaigns.models import Club, Role, Scenario
from apps.structures.models import BunkerSheet, Structure
from tests.campaigns.test_pages import fast_passwords, user  # noqa: F401 - autouse: cheap hashing
from tests.demo_rows import load_demo

pytestmark = [pytest.mark.postgres, pytest.mark.django_db(transaction=True)]


def test_deleting_a_sheet_while_it_is_being_placed_waits_and_is_refused(monkeypatch):
    load_demo()
    club = Club.objects.get(name="Redoubt Demo Club")
    designer = user("sapper", club, Role.DESIGNER)
    sheet = BunkerSheet.objects.create(club=club, slug="draft", name="Draft pillbox")
    scenario = Scenario.objects.create(club=club, name="Hill 112", ruleset="dh")

    placing, answers = threading.Event(), {}
    free_spot = scenario_views.free_spot

    def slow_free_spot(*args):
        # The placement has checked its form and holds what it holds: the delete starts now.
        placing.set()
        threading.Event().wait(0.5)
        return free_spot(*args)

    monkeypatch.setattr(scenario_views, "free_spot", slow_free_spot)

    def place():
        try:
            client = Client()
            client.force_login(designer)
            answers["place"] = client.post(reverse("scenario_structure_add", args=[scenario.pk]),
                                           {"blueprint": "bunker", "sheet": sheet.pk})
        finally:
            connection.close()

    def delete():
        try:
            placing.wait(5)
            client = Client()
            client.force_login(designer)
            answers["delete"] = client.post(reverse("sheet_delete", args=[sheet.pk]))
        finally:
            connection.close()

    threads = [threading.Thread(target=place), threading.Thread(target=delete)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(30)
    assert answers["place"].status_code == 302
    assert answers["delete"].status_code == 409
    assert "Draft pillbox is placed in the scenario Hill 112" in answers["delete"].content.decode()
    assert BunkerSheet.objects.filter(pk=sheet.pk).exists()
    assert Structure.objects.filter(scenario=scenario, sheet=sheet).count() == 1


def test_a_sheet_deleted_the_moment_before_it_is_placed_is_named_beside_the_sheet_field(client, monkeypatch):
    load_demo()
    club = Club.objects.get(name="Redoubt Demo Club")
    designer = user("sapper", club, Role.DESIGNER)
    sheet = BunkerSheet.objects.create(club=club, slug="draft", name="Draft pillbox")
    scenario = Scenario.objects.create(club=club, name="Hill 112", ruleset="dh")
    checked = scenario_views.AddStructureForm.is_valid

    def deleted_once_checked(form):
        valid = checked(form)
        BunkerSheet.objects.filter(pk=sheet.pk).delete()  # the other designer's delete, committed
        return valid

    monkeypatch.setattr(scenario_views.AddStructureForm, "is_valid", deleted_once_checked)
    client.force_login(designer)
    response = client.post(reverse("scenario_structure_add", args=[scenario.pk]),
                           {"blueprint": "bunker", "sheet": sheet.pk})
    assert response.status_code == 400
    assert "Draft pillbox was deleted a moment ago: choose another sheet" in response.content.decode()
    assert not scenario.structures.exists()
