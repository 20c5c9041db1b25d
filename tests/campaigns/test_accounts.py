"""Accounts: sign up with Django's password validators, password change and reset by email, and
the sign-in throttle — counted in the database (every process sees it), at most 5 failures per
user name and 20 per address in 15 minutes, then a clear message and no password check at all."""

import html as html_lib
import re
import threading
from datetime import timedelta
from unittest import mock

import pytest
from django.contrib.auth import forms as auth_forms
from django.contrib.auth import signals
from django.contrib.auth.models import User
from django.db import connection
from django.test import Client
from django.urls import reverse
from django.utils import timezone

from apps.campaigns import account_forms
from apps.campaigns.account_forms import PER_IP, PER_USERNAME, claim_attempt
from apps.campaigns.models import SignInFailure
from tests.campaigns.test_pages import PASSWORD, assert_csp_clean, fast_passwords  # noqa: F401
from tests.campaigns.test_pages import body as raw_body
from tests.campaigns.test_pages import page

GOOD = "a-long-Pass-phrase-77"


def body(response):
    return html_lib.unescape(raw_body(response))


@pytest.fixture
def alice(db):
    return User.objects.create_user("alice", email="alice@example.org", password=PASSWORD)


def sign_in(client, username, password, ip="10.0.0.1"):
    return client.post(reverse("login"), {"username": username, "password": password}, REMOTE_ADDR=ip)


@pytest.fixture
def password_checks():
    """How many times a password was actually checked against the database."""
    calls = []
    real = auth_forms.authenticate

    def counting(*args, **kwargs):
        calls.append(kwargs.get("username"))
        return real(*args, **kwargs)

    with mock.patch("django.contrib.auth.forms.authenticate", counting):
        yield calls


# ---------------------------------------------------------------------------------- sign up

def test_sign_in_and_sign_up_call_the_username_alike(db):
    """Exploratory test: sign-in said "User name", sign-up "Username", as if they were two things."""
    labels = [label.text().strip() for name in ("login", "signup")
              for label in page(Client().get(reverse(name))).find_all("label") if label.attrs.get("for") == "id_username"]
    assert labels == ["Username", "Username"]


def test_sign_up_creates_the_account_and_signs_in(db):
    client = Client()
    page = client.get(reverse("signup"))
    assert page.status_code == 200
    assert_csp_clean(page)
    response = client.post(reverse("signup"), {"username": "newbie", "email": "newbie@example.org",
                                               "password1": GOOD, "password2": GOOD,
                                               "is_staff": "on", "is_superuser": "on", "is_active": ""})
    assert response.status_code == 302 and response["Location"] == reverse("club_list")
    user = User.objects.get(username="newbie")
    assert user.email == "newbie@example.org" and user.check_password(GOOD)
    assert not user.is_staff and not user.is_superuser and user.is_active
    assert client.get(reverse("club_list")).status_code == 200


@pytest.mark.parametrize("fields, error", [
    ({"password1": "password", "password2": "password"}, "This password is too common"),
    ({"password1": "12345678901", "password2": "12345678901"}, "This password is entirely numeric"),
    ({"password1": "Ab3-", "password2": "Ab3-"}, "at least 8 characters"),
    ({"password1": "newbie!!", "password2": "newbie!!"}, "too similar"),
    ({"password2": "something-else-123"}, "didn’t match"),
    ({"email": "not an email"}, "Enter a valid email address"),
    ({"email": "ALICE@example.org"}, "already uses this email"),
    ({"username": "alice"}, "already exists"),
    ({"username": "bad name!"}, "Enter a valid username"),
])
def test_sign_up_refuses_bad_input_beside_the_field(alice, fields, error):
    data = {"username": "newbie", "email": "newbie@example.org", "password1": GOOD, "password2": GOOD, **fields}
    response = Client().post(reverse("signup"), data)
    assert response.status_code == 400
    assert error in body(response)
    assert 'class="field-error"' in body(response)
    assert User.objects.count() == 1


def test_sign_up_goes_back_to_a_safe_next_only(db):
    response = Client().post(reverse("signup"), {"username": "a1", "email": "a1@example.org", "password1": GOOD,
                                                 "password2": GOOD, "next": "https://evil.example/"})
    assert response["Location"] == reverse("club_list")
    response = Client().post(reverse("signup"), {"username": "a2", "email": "a2@example.org", "password1": GOOD,
                                                 "password2": GOOD, "next": "/join/ABCDEFGH/"})
    assert response["Location"] == "/join/ABCDEFGH/"


def test_signed_in_people_skip_sign_up(alice):
    client = Client()
    client.force_login(alice)
    assert client.get(reverse("signup"))["Location"] == reverse("home")


def test_the_sign_in_page_links_sign_up_and_reset(db):
    html = body(Client().get(reverse("login") + "?next=/join/ABCDEFGH/"))
    assert f'href="{reverse("password_reset")}"' in html
    assert f'href="{reverse("signup")}?next=/join/ABCDEFGH/"' in html


# ---------------------------------------------------------------------------------- passwords

def test_password_change(alice):
    client = Client()
    assert client.get(reverse("password_change")).status_code == 302  # signed-in people only
    client.force_login(alice)
    page = client.get(reverse("password_change"))
    assert page.status_code == 200
    assert_csp_clean(page)
    wrong = client.post(reverse("password_change"), {"old_password": "nope", "new_password1": GOOD,
                                                     "new_password2": GOOD})
    assert wrong.status_code == 200 and "Your old password was entered incorrectly" in body(wrong)
    response = client.post(reverse("password_change"), {"old_password": PASSWORD, "new_password1": GOOD,
                                                        "new_password2": GOOD})
    assert response.status_code == 302 and response["Location"] == reverse("password_change_done")
    assert client.get(reverse("password_change_done")).status_code == 200
    alice.refresh_from_db()
    assert alice.check_password(GOOD)


def test_the_home_page_leads_to_the_password_change(alice):
    """Nothing linked the page: a member who wanted a new password had to know its address."""
    client = Client()
    client.force_login(alice)
    home = body(client.get(reverse("home")))
    link = re.search(r'<a class="button-link" href="([^"]+)">Change password</a>', home)
    assert link and link.group(1) == reverse("password_change")
    assert "a password reset goes to alice@example.org" in home
    response = client.post(link.group(1), {"old_password": PASSWORD, "new_password1": GOOD, "new_password2": GOOD})
    assert response.status_code == 302 and response["Location"] == reverse("password_change_done")
    alice.refresh_from_db()
    assert alice.check_password(GOOD)


def test_password_reset_by_email(alice, mailoutbox):
    client = Client()
    page = client.get(reverse("password_reset"))
    assert page.status_code == 200
    assert_csp_clean(page)
    response = client.post(reverse("password_reset"), {"email": "alice@example.org"})
    assert response["Location"] == reverse("password_reset_done")
    assert client.get(reverse("password_reset_done")).status_code == 200
    assert len(mailoutbox) == 1
    mail = mailoutbox[0]
    assert mail.to == ["alice@example.org"] and mail.subject == "Redoubt: choose a new password"
    link = re.search(r"http://testserver(/accounts/reset/\S+/)", mail.body).group(1)

    form = client.get(link, follow=True)
    assert form.status_code == 200 and "Choose a new password" in body(form)
    set_url = form.redirect_chain[-1][0]
    done = client.post(set_url, {"new_password1": GOOD, "new_password2": GOOD})
    assert done["Location"] == reverse("password_reset_complete")
    assert client.get(reverse("password_reset_complete")).status_code == 200
    alice.refresh_from_db()
    assert alice.check_password(GOOD)
    # The link works once.
    again = client.get(link, follow=True)
    assert "This link no longer works" in body(again)


def test_password_reset_for_an_unknown_address_looks_the_same_and_sends_nothing(alice, mailoutbox):
    response = Client().post(reverse("password_reset"), {"email": "nobody@example.org"})
    assert response["Location"] == reverse("password_reset_done")
    assert mailoutbox == []


def test_reset_mail_to_one_address_is_paused_after_three_beside_the_field(alice, mailoutbox):
    """Anyone may ask for a member's reset link: not without end. The fourth request for one address
    in 15 minutes is refused beside the field, mails nothing, and reads the same for an address no
    account has (the answer must not tell who has one)."""
    for n in range(account_forms.RESETS_PER_ADDRESS):
        response = Client(REMOTE_ADDR=f"10.0.1.{n}").post(reverse("password_reset"), {"email": "Alice@example.org"})
        assert response.status_code == 302
    assert len(mailoutbox) == account_forms.RESETS_PER_ADDRESS
    for email in ("alice@example.org", "nobody@example.org"):
        for _ in range(account_forms.RESETS_PER_ADDRESS if email.startswith("nobody") else 0):
            Client(REMOTE_ADDR="10.0.2.1").post(reverse("password_reset"), {"email": email})
        response = Client(REMOTE_ADDR="10.0.3.1").post(reverse("password_reset"), {"email": email})
        assert response.status_code == 429
        errors = page(response).find("id_email_error").text()
        assert "Reset links were sent to this address a few times already" in errors and "Ask again in" in errors
    assert len(mailoutbox) == account_forms.RESETS_PER_ADDRESS


def test_reset_requests_count_with_an_addresss_failed_sign_ins(alice, mailoutbox):
    ip = "10.0.4.1"
    for n in range(PER_IP - 1):
        sign_in(Client(), f"guess{n}", "wrong", ip=ip)
    assert Client(REMOTE_ADDR=ip).post(reverse("password_reset"), {"email": "alice@example.org"}).status_code == 302
    response = Client(REMOTE_ADDR=ip).post(reverse("password_reset"), {"email": "alice@example.org"})
    assert response.status_code == 429
    assert "Too many reset requests or failed sign-ins from your network" in page(response).find("id_email_error").text()
    assert len(mailoutbox) == 1
    # Another address is not held up by this one.
    assert Client(REMOTE_ADDR="10.0.5.1").post(reverse("password_reset"),
                                                {"email": "alice@example.org"}).status_code == 302


def test_sign_out_is_post_only(alice):
    client = Client()
    client.force_login(alice)
    assert client.get(reverse("logout")).status_code == 405
    assert client.post(reverse("logout")).status_code == 302
    assert client.get(reverse("home")).status_code == 302


# ---------------------------------------------------------------------------------- throttle

def test_five_failures_then_no_password_is_checked_even_the_right_one(alice, password_checks):
    client = Client()
    for _ in range(PER_USERNAME):
        response = sign_in(client, "alice", "wrong")
        assert response.status_code == 200 and "Please enter a correct" in body(response)
    assert len(password_checks) == PER_USERNAME
    assert SignInFailure.objects.filter(username="alice").count() == PER_USERNAME

    failed = []
    signals.user_login_failed.connect(lambda **kw: failed.append(kw), weak=False, dispatch_uid="t-throttle")
    try:
        response = sign_in(client, "alice", PASSWORD)
    finally:
        signals.user_login_failed.disconnect(dispatch_uid="t-throttle")
    assert response.status_code == 429
    assert "Too many failed sign-ins for this user name" in body(response)
    assert "try again in 15 minutes" in body(response)
    assert len(password_checks) == PER_USERNAME, "the refused attempt never reached authenticate()"
    assert failed == []
    assert "_auth_user_id" not in client.session
    assert SignInFailure.objects.filter(username="alice").count() == PER_USERNAME, "refusals do not extend the pause"


def test_the_count_is_in_the_database_not_in_a_process(alice):
    for _ in range(PER_USERNAME):
        sign_in(Client(), "alice", "wrong")
    # Another process or server would have a fresh client and fresh memory; only the database is shared.
    fresh = Client()
    assert sign_in(fresh, "alice", PASSWORD).status_code == 429


def test_user_names_are_counted_whatever_their_case(alice):
    for name in ["alice", "ALICE", " Alice", "aLiCe", "alice "]:
        sign_in(Client(), name, "wrong")
    assert sign_in(Client(), "alice", PASSWORD).status_code == 429


def test_a_success_clears_the_user_names_count(alice):
    client = Client()
    for _ in range(PER_USERNAME - 1):
        sign_in(client, "alice", "wrong")
    response = sign_in(client, "alice", PASSWORD)
    assert response.status_code == 302
    assert not SignInFailure.objects.filter(username="alice").exists()
    client.post(reverse("logout"))
    for _ in range(PER_USERNAME - 1):
        assert sign_in(client, "alice", "wrong").status_code == 200
    assert sign_in(client, "alice", PASSWORD).status_code == 302


def test_the_pause_ends_fifteen_minutes_after_the_failures(alice):
    for _ in range(PER_USERNAME):
        sign_in(Client(), "alice", "wrong")
    SignInFailure.objects.update(at=timezone.now() - timedelta(minutes=14))
    response = sign_in(Client(), "alice", PASSWORD)
    assert response.status_code == 429 and "try again in 1 minute" in body(response)
    SignInFailure.objects.update(at=timezone.now() - timedelta(minutes=15, seconds=1))
    assert sign_in(Client(), "alice", PASSWORD).status_code == 302
    assert not SignInFailure.objects.exists(), "old rows are purged"


def test_twenty_failures_from_one_address_pause_it_for_every_user_name(alice, password_checks):
    for n in range(PER_IP):
        assert sign_in(Client(), f"guess{n}", "wrong", ip="203.0.113.9").status_code == 200
    response = sign_in(Client(), "alice", PASSWORD, ip="203.0.113.9")
    assert response.status_code == 429 and "from your network" in body(response)
    assert len(password_checks) == PER_IP
    # Other addresses are not affected.
    assert sign_in(Client(), "alice", PASSWORD, ip="198.51.100.7").status_code == 302


def test_a_user_names_failures_from_many_addresses_still_count(alice):
    for n in range(PER_USERNAME):
        sign_in(Client(), "alice", "wrong", ip=f"192.0.2.{n + 1}")
    assert sign_in(Client(), "alice", PASSWORD, ip="192.0.2.200").status_code == 429


def test_an_incomplete_form_is_not_counted(alice):
    Client().post(reverse("login"), {"username": "alice"})
    Client().post(reverse("login"), {"password": "x"})
    assert not SignInFailure.objects.exists()


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_simultaneous_attempts_never_get_more_than_the_limit():
    """Twelve processes guessing at the same instant: exactly five of them get to check a password."""
    barrier = threading.Barrier(12)
    allowed = []

    def attempt():
        try:
            barrier.wait()
            try:
                claim_attempt("victim", "192.0.2.1")
                allowed.append(1)
            except account_forms.Throttled:
                pass
        finally:
            connection.close()

    threads = [threading.Thread(target=attempt) for _ in range(12)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(allowed) == PER_USERNAME
    assert SignInFailure.objects.filter(username="victim").count() == len(allowed)


def test_the_admin_sign_in_is_counted_with_the_sites(alice, password_checks):
    """Staff accounts are the most powerful: /admin/login/ must not let anyone guess past the pause."""
    User.objects.create_user("root", password=PASSWORD, is_staff=True, is_superuser=True)
    client = Client()
    for _ in range(PER_USERNAME):
        response = client.post(reverse("admin:login"), {"username": "root", "password": "wrong"},
                               REMOTE_ADDR="10.0.0.2")
        assert response.status_code == 200
    response = client.post(reverse("admin:login"), {"username": "root", "password": PASSWORD}, REMOTE_ADDR="10.0.0.2")
    assert response.status_code == 200 and "Too many failed sign-ins for this user name" in body(response)
    assert len(password_checks) == PER_USERNAME and "_auth_user_id" not in client.session
    # Failures on one door count at the other.
    assert sign_in(Client(), "root", PASSWORD, ip="10.0.0.3").status_code == 429


def test_a_password_reset_ends_the_pause(alice, mailoutbox):
    """Anyone can type a member's name wrong five times; the member gets back in with a reset."""
    for _ in range(PER_USERNAME):
        sign_in(Client(), "Alice ", "wrong")
    assert sign_in(Client(), "alice", PASSWORD).status_code == 429
    client = Client()
    client.post(reverse("password_reset"), {"email": "alice@example.org"})
    link = re.search(r"http://testserver(/accounts/reset/\S+/)", mailoutbox[0].body).group(1)
    set_url = client.get(link, follow=True).redirect_chain[-1][0]
    assert client.post(set_url, {"new_password1": GOOD, "new_password2": GOOD})["Location"] == \
        reverse("password_reset_complete")
    assert sign_in(Client(), "alice", GOOD).status_code == 302
