import pytest
from django.contrib.auth.models import User

from apps.campaigns.models import Club, Membership


@pytest.mark.django_db
def test_home_lists_only_my_clubs(client):
    me = User.objects.create_user("me", password="pw-123456!")
    mine = Club.objects.create(name="Mine", slug="mine")
    Club.objects.create(name="Theirs", slug="theirs")
    Membership.objects.create(club=mine, user=me)
    client.force_login(me)
    body = client.get("/").content.decode()
    assert "Mine" in body and "Theirs" not in body
