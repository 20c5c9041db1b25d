"""What a screen reader is told about the forms: every id an aria-describedby, aria-labelledby or
label names exists on the page, so a field's help text and its errors are read with it."""

import pytest
from django.contrib.auth.models import User
from django.urls import reverse

from apps.battles.models import Battle
from apps.campaigns.models import Campaign, Scenario
from apps.structures.models import BunkerSheet
from tests.campaigns.test_pages import body, fast_passwords, page, signed_in  # noqa: F401 - autouse fixture
from tests.demo_rows import load_demo

pytestmark = pytest.mark.django_db


def dangling_references(html):
    """(attribute, id, tag) for each reference to an id the page does not hold."""
    nodes = list(page(html).iter())
    ids = {n.attrs["id"] for n in nodes if n.attrs.get("id")}
    missing = []
    for node in nodes:
        for attribute in ("aria-describedby", "aria-labelledby", "for"):
            for ref in (node.attrs.get(attribute) or "").split():
                if ref not in ids:
                    missing.append((attribute, ref, node.tag))
    return missing


@pytest.fixture
def demo():
    load_demo()
    return {name: User.objects.get(username=name) for name in ("demo", "alice", "dora")}


def test_the_pages_name_only_ids_they_hold(client, demo):
    battle = Battle.objects.get(name="Village crossroads — session 1")
    campaign = Campaign.objects.get(pk=battle.campaign_id)
    library = BunkerSheet.objects.filter(club__isnull=True, is_blank=False).order_by("pk").first()
    edit = signed_in(client, demo["dora"]).post(reverse("sheet_clone", args=[library.pk]))
    assert edit.status_code == 302
    scenario = Scenario.objects.filter(club=campaign.club).order_by("pk").first()
    for account, url in (("alice", reverse("battle", args=[battle.pk])),
                         ("demo", reverse("battle", args=[battle.pk])),
                         ("demo", reverse("campaign", args=[campaign.pk])),
                         ("demo", reverse("club", args=[campaign.club.slug])),
                         ("dora", edit.url),
                         ("dora", reverse("scenario", args=[scenario.pk]))):
        response = signed_in(client, demo[account]).get(url)
        assert response.status_code == 200, url
        assert dangling_references(body(response)) == [], (account, url)


def test_an_attack_forms_errors_and_help_are_read_with_their_fields(client, demo):
    """Resolve with nothing chosen: the attacker's select is invalid and described by its error; a
    choice group (Hit?) is described by its help text."""
    battle = Battle.objects.get(name="Village crossroads — session 1")
    signed_in(client, demo["alice"])
    response = client.post(reverse("battle_resolve", args=[battle.pk]), {"action": "ba_he"}, HTTP_HX_REQUEST="true")
    html = body(response)
    assert dangling_references(html) == []
    tree = page(html)
    attacker = tree.find("id_attacker")
    assert attacker.attrs.get("aria-invalid") == "true"
    assert "id_attacker_error" in attacker.attrs["aria-describedby"].split()
    assert "Choose the unit that attacks" in tree.find("id_attacker_error").text()
    hit = tree.find("field-hit").find_all("fieldset")[0]
    assert tree.find(hit.attrs["aria-describedby"]).text().startswith("Your to-hit roll")


def test_a_forms_errors_are_read_with_their_fields(client, demo):
    response = signed_in(client, demo["dora"]).post(reverse("scenario_new"), {"name": ""})
    assert response.status_code == 400
    html = body(response)
    assert dangling_references(html) == []
    name = page(html).find("id_name")
    assert name.attrs.get("aria-invalid") == "true" and "id_name_error" in name.attrs["aria-describedby"]
