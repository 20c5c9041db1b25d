"""The error pages production shows (DEBUG off, as in every test): 400, 404, 500 and a refused CSRF
check come in the site's layout with its stylesheet, say in words what happened and what to do, and
never show the exception, a traceback or the request's details."""

import pytest
from django.contrib.auth.models import User
from django.test import Client
from django.urls import reverse

from apps.campaigns.models import Campaign, Club
from config.views import CSRF_TITLE, NO_COOKIE

LEAKS = ("Traceback", "secret-detail", "hunter2", "/srv/", "DEBUG", "matches the given query", "found.</", "Campaign",
         "More information is available")


def in_the_layout(response):
    html = response.content.decode()
    assert 'class="brand"' in html and "css/redoubt.css" in html, html
    assert "<style" not in html  # a style without the CSP nonce would be blocked: the page would look broken
    for leak in LEAKS:
        assert leak not in html, leak
    return html


def test_a_missing_page_is_the_sites_own(client, db):
    response = client.get("/no-such-page/")
    assert response.status_code == 404
    html = in_the_layout(response)
    assert "Not found" in html and "Sign in" in html


@pytest.mark.django_db
def test_another_clubs_campaign_is_not_found_in_words_without_naming_the_model():
    club = Club.objects.create(name="Theirs", slug="theirs")
    campaign = Campaign.objects.create(club=club, name="Secret plan")
    client = Client()
    client.force_login(User.objects.create_user("nosy"))
    response = client.get(reverse("campaign", args=[campaign.pk]))
    assert response.status_code == 404
    html = in_the_layout(response)
    assert "removed (in another tab" in html and "Secret plan" not in html and reverse("home") in html


@pytest.mark.urls("tests.error_urls")
def test_a_server_error_is_the_sites_own_page_and_shows_nothing_of_the_error(db):
    response = Client(raise_request_exception=False).get("/broken/")
    assert response.status_code == 500
    html = in_the_layout(response)
    assert "Something went wrong on the server" in html and "saved completely or not at all" in html


def test_a_request_for_another_host_is_refused_in_the_layout(client, db):
    response = client.get("/", HTTP_HOST="evil.example")
    assert response.status_code == 400
    html = in_the_layout(response)
    assert "Bad request" in html and "evil.example" not in html


def test_a_form_without_the_csrf_cookie_says_cookies_are_needed(db):
    client = Client(enforce_csrf_checks=True)
    response = client.post(reverse("login"), {"username": "x", "password": "y"})
    assert response.status_code == 403
    html = in_the_layout(response)
    assert CSRF_TITLE in html and NO_COOKIE.split(":")[0].replace("'", "&#x27;") in html


def test_a_form_from_a_page_older_than_the_sign_in_says_to_reload(db):
    client = Client(enforce_csrf_checks=True)
    client.force_login(User.objects.create_user("tabby"))
    client.get(reverse("home"))  # the CSRF cookie
    response = client.post(reverse("club_new"), {"name": "Stale", "csrfmiddlewaretoken": "x" * 64})
    assert response.status_code == 403
    html = in_the_layout(response)
    assert CSRF_TITLE in html and "reload the page" in html and "Nothing was changed" in html
    assert not Club.objects.filter(name="Stale").exists()
