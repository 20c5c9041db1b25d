"""Clubs: create one, invite by link or code, join, change roles, remove members, leave — and every
refusal (bad, expired, used-up or withdrawn codes, joining twice, a non-organiser changing roles,
the last organiser stepping down) says why and leaves the database as it was."""

import html as html_lib
import re
import threading
from datetime import timedelta
from types import SimpleNamespace

import pytest
from django.db import connection
from django.test import Client
from django.urls import reverse
from django.utils import timezone

from apps.campaigns.account_forms import INVITE_ALPHABET, new_invite_code
from apps.campaigns.models import Club, Invite, Membership, Role
from tests.campaigns.test_pages import PASSWORD, assert_csp_clean, fast_passwords  # noqa: F401
from tests.campaigns.test_pages import user as account
from tests.campaigns.test_pages import body as raw_body
from tests.campaigns.test_pages import page


def body(response):
    """The page as a person reads it (apostrophes unescaped)."""
    return html_lib.unescape(raw_body(response))


@pytest.fixture
def c(db):
    c = SimpleNamespace()
    c.club = Club.objects.create(name="Home Guard", slug="home-guard")
    c.other = Club.objects.create(name="Rival Legion", slug="rival-legion")
    c.org = account("org", c.club, Role.ORGANISER)
    c.dora = account("dora", c.club, Role.DESIGNER)
    c.alice = account("alice", c.club, Role.PLAYER)
    c.olga = account("olga", c.other, Role.ORGANISER)
    c.newbie = account("newbie")
    return c


def as_(user):
    client = Client()
    client.force_login(user)
    return client


def invite(c, club=None, **fields):
    fields = {"role": Role.PLAYER, "max_uses": 1, "expires_at": timezone.now() + timedelta(days=7), **fields}
    return Invite.objects.create(club=club or c.club, code=new_invite_code(), created_by=c.org, **fields)


def snapshot():
    """Everything a club action could change."""
    return (sorted(Membership.objects.values_list("club_id", "user_id", "role")),
            sorted(Invite.objects.values_list("pk", "club_id", "role", "code", "uses", "max_uses", "revoked_at")),
            sorted(Club.objects.values_list("pk", "name", "slug")))


def member_pk(club, user):
    return Membership.objects.get(club=club, user=user).pk


# ---------------------------------------------------------------------------------- creating

def test_creating_a_club_makes_its_creator_the_organiser(c):
    client = as_(c.newbie)
    page = client.get(reverse("club_new"))
    assert page.status_code == 200
    assert_csp_clean(page)
    response = client.post(reverse("club_new"), {"name": "Home Guard", "slug": "mine", "role": Role.PLAYER,
                                                  "members": [c.org.pk]})
    club = Club.objects.exclude(pk__in=[c.club.pk, c.other.pk]).get()
    assert response.status_code == 303 and response["Location"] == reverse("club", args=[club.slug]) + "#invites"
    assert club.name == "Home Guard" and club.slug == "home-guard-2", "slugs stay unique; the posted one is ignored"
    assert list(club.memberships.values_list("user__username", "role")) == [("newbie", Role.ORGANISER)]


def test_a_club_named_new_gets_its_own_page_not_the_new_club_form(c):
    response = as_(c.newbie).post(reverse("club_new"), {"name": "New"})
    club = Club.objects.get(name="New")
    assert club.slug == "new-2" and response["Location"] == reverse("club", args=["new-2"]) + "#invites"
    assert "New" in body(as_(c.newbie).get(reverse("club", args=[club.slug])))


def test_the_club_lists_new_club_form_sent_twice_makes_one_club(c):
    """A double tap on "Create the club" (or the page's form sent again from another tab) lands on the
    club the first send made; a club of the same name made on purpose later is still made."""
    from tests.structures.test_sheet_editor import form_data

    client = as_(c.newbie)
    data = {**form_data(client.get(reverse("club_list")), None), "name": "Home Guard"}
    data = {k: data[k] for k in ("name", "after")}
    first, again = client.post(reverse("club_new"), data), client.post(reverse("club_new"), data)
    club = Club.objects.get(name="Home Guard", memberships__user=c.newbie)
    assert first["Location"] == again["Location"] == reverse("club", args=[club.slug]) + "#invites"
    assert "Home Guard is already made (the form was sent twice): here it is." in body(client.get(again["Location"]))
    data = {**form_data(client.get(reverse("club_new")), None), "name": "Home Guard"}
    client.post(reverse("club_new"), {k: data[k] for k in ("name", "after")})
    assert Club.objects.filter(name="Home Guard", memberships__user=c.newbie).count() == 2


def test_a_club_needs_a_name(c):
    before = snapshot()
    response = as_(c.newbie).post(reverse("club_new"), {"name": "  ¡¿  "})
    assert response.status_code == 400 and "letter or digit" in body(response)
    assert snapshot() == before


@pytest.mark.parametrize("name", ["Бункерный клуб", "要塞クラブ", "Οχυρό"])
def test_a_club_named_in_another_alphabet_is_created(c, name):
    """Its name has letters, only not Latin ones: the address falls back to club(-n), the name stays."""
    client = as_(c.newbie)
    response = client.post(reverse("club_new"), {"name": name})
    club = Club.objects.get(name=name)
    assert response.status_code == 303 and re.fullmatch(r"club(-\d+)?", club.slug)
    assert list(club.memberships.values_list("user__username", "role")) == [("newbie", Role.ORGANISER)]
    assert name in body(client.get(reverse("club", args=[club.slug])))


def test_the_club_page_shows_members_to_everyone_and_management_to_organisers(c):
    page = as_(c.alice).get(reverse("club", args=[c.club.slug]))
    assert page.status_code == 200
    html = body(page)
    assert "org" in html and "dora" in html and "alice" in html
    assert "Invitations" not in html and "Spectator links" not in html
    assert reverse("club_member_role", args=[c.club.slug, member_pk(c.club, c.dora)]) not in html
    page = as_(c.org).get(reverse("club", args=[c.club.slug]))
    assert_csp_clean(page)
    html = body(page)
    assert "Invitations" in html and "Spectator links" in html
    assert reverse("club_member_role", args=[c.club.slug, member_pk(c.club, c.dora)]) in html
    assert as_(c.olga).get(reverse("club", args=[c.club.slug])).status_code == 404
    assert Client().get(reverse("club", args=[c.club.slug])).status_code == 302


# ---------------------------------------------------------------------------------- invitations

def test_an_organiser_invites_with_a_short_unambiguous_code(c):
    response = as_(c.org).post(reverse("club_invite_new", args=[c.club.slug]),
                               {"role": Role.DESIGNER, "days": 7, "max_uses": 3,
                                "club": c.other.pk, "uses": 2, "code": "AAAAAAAA", "created_by": c.alice.pk})
    assert response.status_code == 303
    made = Invite.objects.get()
    assert made.club == c.club and made.role == Role.DESIGNER and made.max_uses == 3 and made.uses == 0
    assert made.created_by == c.org and made.code != "AAAAAAAA"
    assert len(made.code) == 8 and set(made.code) <= set(INVITE_ALPHABET)
    assert not set(made.code) & set("0O1IL")
    assert timedelta(days=6, hours=23) < made.expires_at - timezone.now() <= timedelta(days=7)
    html = body(as_(c.org).get(reverse("club", args=[c.club.slug])))
    assert f"{made.code[:4]}-{made.code[4:]}" in html
    assert f"http://testserver{reverse('join_code', args=[made.code])}" in html


def test_an_invitation_expires_in_the_hosts_time_zone_and_says_which(c, settings):
    settings.TIME_ZONE = "America/New_York"
    expires = timezone.make_aware(timezone.datetime(2031, 1, 15, 23, 30), timezone.UTC)
    Invite.objects.create(club=c.club, code=new_invite_code(), role=Role.PLAYER, created_by=c.org, expires_at=expires)
    html = body(as_(c.org).get(reverse("club", args=[c.club.slug])))
    assert "until 15 Jan 2031 18:30 EST" in html


def test_codes_are_unique_and_random():
    codes = {new_invite_code() for _ in range(2000)}
    assert len(codes) == 2000


def test_bad_invitation_settings_are_refused_beside_the_field(c):
    response = as_(c.org).post(reverse("club_invite_new", args=[c.club.slug]),
                               {"role": "emperor", "days": 7, "max_uses": 0})
    assert response.status_code == 400
    assert Invite.objects.count() == 0
    assert "Select a valid choice" in body(response) and "greater than or equal to 1" in body(response)
    # The page that comes back opens at the form with its errors, not at the top.
    actions = [f.attrs.get("action") for f in page(response).find_all("form")]
    assert reverse("club_invite_new", args=[c.club.slug]) + "#invites" in actions


@pytest.mark.parametrize("who", ["dora", "alice"])
def test_only_organisers_invite_or_withdraw(c, who):
    existing = invite(c)
    before = snapshot()
    client = as_(getattr(c, who))
    response = client.post(reverse("club_invite_new", args=[c.club.slug]), {"role": Role.ORGANISER, "days": 7,
                                                                             "max_uses": 5})
    assert response.status_code == 403 and "organisers" in body(response)
    response = client.post(reverse("club_invite_revoke", args=[c.club.slug, existing.pk]))
    assert response.status_code == 403
    assert snapshot() == before


def test_another_clubs_invitations_are_not_found(c):
    theirs = invite(c, club=c.other)
    before = snapshot()
    client = as_(c.org)
    assert client.post(reverse("club_invite_revoke", args=[c.club.slug, theirs.pk])).status_code == 404
    assert client.post(reverse("club_invite_revoke", args=[c.other.slug, theirs.pk])).status_code == 404
    assert client.post(reverse("club_invite_new", args=[c.other.slug]), {"role": "player", "days": 1,
                                                                        "max_uses": 1}).status_code == 404
    assert snapshot() == before


def test_withdrawing_an_invitation(c):
    made = invite(c)
    response = as_(c.org).post(reverse("club_invite_revoke", args=[c.club.slug, made.pk]))
    assert response.status_code == 303
    made.refresh_from_db()
    assert made.revoked_at is not None
    response = as_(c.newbie).post(reverse("join_code", args=[made.code]))
    assert response.status_code == 410 and "withdrawn" in body(response)
    assert not Membership.objects.filter(user=c.newbie).exists()


# ---------------------------------------------------------------------------------- joining

def test_joining_by_link_gives_the_invitations_role(c):
    made = invite(c, role=Role.DESIGNER, max_uses=2)
    client = as_(c.newbie)
    page = client.get(reverse("join_code", args=[made.code]))
    assert page.status_code == 200
    assert_csp_clean(page)
    assert "Home Guard" in body(page) and "designer" in body(page)
    response = client.post(reverse("join_code", args=[made.code]), {"role": Role.ORGANISER, "club": c.other.pk})
    assert response.status_code == 303 and response["Location"] == reverse("club", args=[c.club.slug])
    assert Membership.objects.get(user=c.newbie).club == c.club
    assert Membership.objects.get(user=c.newbie).role == Role.DESIGNER, "the posted role is ignored"
    made.refresh_from_db()
    assert made.uses == 1


def test_invitation_codes_cannot_be_guessed_without_end(c):
    """Twenty wrong codes from one address in 15 minutes pause trying codes from it: then even a right
    code is refused, with why and for how long, and nobody joins. Another address is not paused."""
    made = invite(c)
    client = as_(c.newbie)
    for i in range(20):
        assert client.get(reverse("join_code", args=[f"WRONGAA{chr(65 + i)}"]),
                          REMOTE_ADDR="203.0.113.9").status_code == 404
    refused = client.post(reverse("join_code", args=[made.code]), REMOTE_ADDR="203.0.113.9")
    assert refused.status_code == 429 and "trying codes from here is paused" in body(refused)
    assert not Membership.objects.filter(user=c.newbie).exists()
    elsewhere = client.post(reverse("join_code", args=[made.code]), REMOTE_ADDR="198.51.100.7")
    assert elsewhere.status_code == 303 and Membership.objects.filter(user=c.newbie, club=c.club).exists()


def test_typing_the_code_in_any_case_with_a_dash_or_spaces(c):
    made = invite(c)
    client = as_(c.newbie)
    typed = f" {made.code[:4].lower()}-{made.code[4:]} "
    response = client.post(reverse("join"), {"code": typed})
    assert response.status_code == 303 and response["Location"] == reverse("join_code", args=[made.code])
    client.post(response["Location"])
    assert Membership.objects.filter(user=c.newbie, club=c.club).exists()


def test_a_malformed_code_is_refused_beside_the_field(c):
    response = as_(c.newbie).post(reverse("join"), {"code": "O0I1-XXXX"})
    assert response.status_code == 400 and "not an invitation code" in body(response)


def test_an_unknown_code(c):
    before = snapshot()
    response = as_(c.newbie).post(reverse("join_code", args=["ABCDEFGH"]))
    assert response.status_code == 404 and "No invitation has this code" in body(response)
    assert as_(c.newbie).get(reverse("join_code", args=["ABCDEFGH"])).status_code == 404
    assert snapshot() == before


@pytest.mark.parametrize("trouble, words", [
    ({"expires_at": timezone.now() - timedelta(minutes=1)}, "expired"),
    ({"uses": 1, "max_uses": 1}, "used as many times"),
    ({"revoked_at": timezone.now()}, "withdrawn"),
])
def test_expired_used_up_or_withdrawn_codes_change_nothing(c, trouble, words):
    made = invite(c, **trouble)
    before = snapshot()
    client = as_(c.newbie)
    page = client.get(reverse("join_code", args=[made.code]))
    assert page.status_code == 410 and words in body(page)
    assert "<form" not in body(page).split('id="invite-title"')[1]
    response = client.post(reverse("join_code", args=[made.code]))
    assert response.status_code == 410 and words in body(response)
    assert snapshot() == before


def test_the_last_use_goes_to_one_person_only(c):
    made = invite(c, max_uses=1)
    as_(c.newbie).post(reverse("join_code", args=[made.code]))
    late = account("late")
    response = as_(late).post(reverse("join_code", args=[made.code]))
    assert response.status_code == 410
    assert not Membership.objects.filter(user=late).exists()
    made.refresh_from_db()
    assert made.uses == 1


def test_joining_twice_changes_nothing(c):
    made = invite(c, role=Role.ORGANISER, max_uses=5)
    before = snapshot()
    response = as_(c.alice).post(reverse("join_code", args=[made.code]))
    assert response.status_code == 303
    follow = as_(c.alice).get(response["Location"])
    assert follow.status_code == 200
    assert snapshot() == before, "alice stays a player and the code keeps its uses"
    response = as_(c.alice).post(reverse("join_code", args=[made.code]), follow=True)
    assert "already a member" in body(response)


def test_the_member_who_used_up_an_invitation_opens_its_link_again_and_is_told_they_are_in(c):
    """The link in the club's chat is how a player finds the club again. Opened after they had used its
    one use, it said "used as many times as it allows. Ask the club's organisers for a new one", with
    410, to someone who needs none: they are a member, and the page says so with a way to the club."""
    made = invite(c, max_uses=1)
    assert as_(c.newbie).post(reverse("join_code", args=[made.code])).status_code == 303
    page = as_(c.newbie).get(reverse("join_code", args=[made.code]))
    assert page.status_code == 200
    html = body(page)
    assert "You are already a member of this club" in html and reverse("club", args=[c.club.slug]) in html
    assert "Ask the club" not in html and "used as many times" not in html
    # Anyone else still learns it is used up.
    assert as_(account("late")).get(reverse("join_code", args=[made.code])).status_code == 410


def test_strangers_are_asked_to_sign_in_or_up_and_come_back(c):
    made = invite(c)
    page = Client().get(reverse("join_code", args=[made.code]))
    here = reverse("join_code", args=[made.code])
    assert page.status_code == 200
    assert f"{reverse('signup')}?next={here}" in body(page)
    response = Client().post(here)
    assert response.status_code == 302 and response["Location"] == f"{reverse('login')}?next={here}"
    assert Invite.objects.get().uses == 0
    # A new account comes straight back to the invitation.
    response = Client().post(reverse("signup"), {"username": "fresh", "email": "fresh@example.org",
                                                 "password1": "a-long-Pass-phrase-77", "password2": "a-long-Pass-phrase-77",
                                                 "next": here})
    assert response.status_code == 302 and response["Location"] == here


def test_a_new_account_back_at_its_invitation_is_not_sent_to_type_a_code(c):
    """Found signing up from an invitation link on a phone: back on the invitation, its Join button just
    below, the welcome said "Join a club with an invitation code, or start your own", as if the code still
    had to be typed somewhere else. Sent back where they came from, the welcome says only that."""
    made = invite(c)
    here = reverse("join_code", args=[made.code])
    data = {"username": "fresh", "email": "fresh@example.org", "password1": "a-long-Pass-phrase-77",
            "password2": "a-long-Pass-phrase-77", "next": here}
    response = Client().post(reverse("signup"), data, follow=True)
    assert response.redirect_chain == [(here, 302)]
    said = [li.text() for li in page(raw_body(response)).find_all("li", cls="message")]
    assert said == ["Welcome, fresh."]
    assert Invite.objects.get().uses == 0  # joining is still the Join button's
    # Without an invitation to go back to, the welcome still says how to get into a club.
    response = Client().post(reverse("signup"), {**data, "username": "other", "email": "other@example.org",
                                                 "next": ""}, follow=True)
    said = [li.text() for li in page(raw_body(response)).find_all("li", cls="message")]
    assert said == ["Welcome, other. Join a club with an invitation code, or start your own."]


# ---------------------------------------------------------------------------------- roles

def test_an_organiser_changes_a_role(c):
    response = as_(c.org).post(reverse("club_member_role", args=[c.club.slug, member_pk(c.club, c.alice)]),
                               {"role": Role.DESIGNER, "user": c.org.pk, "club": c.other.pk})
    assert response.status_code == 303
    # Back at alice's own row, where her new role shows.
    assert response["Location"].endswith(f"#member-{member_pk(c.club, c.alice)}")
    membership = Membership.objects.get(user=c.alice)
    assert membership.role == Role.DESIGNER and membership.club == c.club
    assert Membership.objects.get(user=c.org).role == Role.ORGANISER


@pytest.mark.parametrize("who", ["dora", "alice"])
def test_a_role_change_by_a_non_organiser_is_refused(c, who):
    before = snapshot()
    response = as_(getattr(c, who)).post(
        reverse("club_member_role", args=[c.club.slug, member_pk(c.club, getattr(c, who))]), {"role": Role.ORGANISER})
    assert response.status_code == 403
    assert f"Only the organisers of {c.club.name} change members' roles" in body(response)
    assert snapshot() == before


def test_an_unknown_role_is_refused_beside_the_member(c):
    before = snapshot()
    response = as_(c.org).post(reverse("club_member_role", args=[c.club.slug, member_pk(c.club, c.alice)]),
                               {"role": "general"})
    assert response.status_code == 409 and "Choose organiser, designer or player" in body(response)
    assert snapshot() == before


def test_another_clubs_member_is_not_found(c):
    before = snapshot()
    client = as_(c.org)
    theirs = member_pk(c.other, c.olga)
    assert client.post(reverse("club_member_role", args=[c.club.slug, theirs]), {"role": "player"}).status_code == 404
    assert client.post(reverse("club_member_remove", args=[c.club.slug, theirs])).status_code == 404
    assert client.post(reverse("club_member_role", args=[c.other.slug, theirs]), {"role": "player"}).status_code == 404
    assert client.post(reverse("club_leave", args=[c.other.slug])).status_code == 404
    assert snapshot() == before


def test_the_last_organiser_cannot_step_down_be_removed_or_leave(c):
    before = snapshot()
    client = as_(c.org)
    mine = member_pk(c.club, c.org)
    response = client.post(reverse("club_member_role", args=[c.club.slug, mine]), {"role": Role.PLAYER})
    assert response.status_code == 409 and "last organiser" in body(response)
    response = client.post(reverse("club_member_remove", args=[c.club.slug, mine]))
    assert response.status_code == 409 and "last organiser" in body(response)
    response = client.post(reverse("club_leave", args=[c.club.slug]))
    assert response.status_code == 409 and "last organiser" in body(response)
    assert snapshot() == before

    # With a second organiser, the first may step down, and then leave.
    client.post(reverse("club_member_role", args=[c.club.slug, member_pk(c.club, c.dora)]), {"role": Role.ORGANISER})
    assert client.post(reverse("club_member_role", args=[c.club.slug, mine]), {"role": Role.PLAYER}).status_code == 303
    assert client.post(reverse("club_leave", args=[c.club.slug])).status_code == 303
    assert list(c.club.memberships.filter(role=Role.ORGANISER).values_list("user__username", flat=True)) == ["dora"]


def test_an_organiser_removes_a_member_who_then_sees_nothing(c):
    response = as_(c.org).post(reverse("club_member_remove", args=[c.club.slug, member_pk(c.club, c.alice)]))
    assert response.status_code == 303
    assert not Membership.objects.filter(user=c.alice).exists()
    assert as_(c.alice).get(reverse("club", args=[c.club.slug])).status_code == 404


def test_a_player_cannot_remove_anyone(c):
    before = snapshot()
    response = as_(c.alice).post(reverse("club_member_remove", args=[c.club.slug, member_pk(c.club, c.dora)]))
    assert response.status_code == 403
    assert snapshot() == before


def test_a_member_leaves(c):
    response = as_(c.alice).post(reverse("club_leave", args=[c.club.slug]))
    assert response.status_code == 303 and response["Location"] == reverse("club_list")
    assert not Membership.objects.filter(user=c.alice).exists()


def test_the_club_list(c):
    page = as_(c.alice).get(reverse("club_list"))
    assert page.status_code == 200
    assert_csp_clean(page)
    assert reverse("club", args=[c.club.slug]) in body(page) and "Rival Legion" not in body(page)


# ---------------------------------------------------------------------------------- races

@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_two_organisers_stepping_down_at_once_leave_one(settings):
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
    club = Club.objects.create(name="Race", slug="race")
    first, second = account("first", club, Role.ORGANISER), account("second", club, Role.ORGANISER)
    barrier = threading.Barrier(2)
    results = {}

    def step_down(user):
        try:
            client = as_(user)
            url = reverse("club_member_role", args=[club.slug, member_pk(club, user)])
            barrier.wait()
            results[user.username] = client.post(url, {"role": Role.PLAYER}).status_code
        finally:
            connection.close()

    threads = [threading.Thread(target=step_down, args=(u,)) for u in (first, second)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(results.values()) == [303, 409]
    assert club.memberships.filter(role=Role.ORGANISER).count() == 1


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_the_last_use_of_a_code_cannot_be_taken_twice(settings):
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
    club = Club.objects.create(name="Race", slug="race")
    account("boss", club, Role.ORGANISER)
    made = Invite.objects.create(club=club, code=new_invite_code(), max_uses=1,
                                 expires_at=timezone.now() + timedelta(days=1))
    people = [account(f"p{i}") for i in range(6)]
    barrier = threading.Barrier(len(people))
    results = []

    def join(user):
        try:
            client = as_(user)
            barrier.wait()
            results.append(client.post(reverse("join_code", args=[made.code])).status_code)
        finally:
            connection.close()

    threads = [threading.Thread(target=join, args=(u,)) for u in people]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(results) == [303] + [410] * 5
    assert club.memberships.count() == 2
    made.refresh_from_db()
    assert made.uses == 1


def test_a_deactivated_organiser_does_not_count_as_the_one_the_club_keeps(c):
    """The second organiser's account was deactivated (it cannot sign in any more): the first is the
    club's last organiser who can run it, may not leave or step down, and the page says why."""
    org2 = account("org2", c.club, Role.ORGANISER)
    org2.is_active = False
    org2.save(update_fields=["is_active"])
    client = as_(c.org)
    page = body(client.get(reverse("club", args=[c.club.slug])))
    assert "Account deactivated" in page and "You are its only organiser" in page
    before = snapshot()
    assert client.post(reverse("club_leave", args=[c.club.slug])).status_code == 409
    response = client.post(reverse("club_member_role", args=[c.club.slug, member_pk(c.club, c.org)]),
                           {"role": Role.PLAYER})
    assert response.status_code == 409 and "last organiser" in body(response)
    assert snapshot() == before
    # Once someone who can sign in organises too, the first may go.
    assert client.post(reverse("club_member_role", args=[c.club.slug, member_pk(c.club, c.dora)]),
                       {"role": Role.ORGANISER}).status_code == 303
    assert client.post(reverse("club_leave", args=[c.club.slug])).status_code == 303


def test_removing_a_member_warns_of_the_invitations_that_would_let_them_back(c):
    """The club's shared link still had uses left: the removed player could rejoin at once."""
    client = as_(c.org)
    response = client.post(reverse("club_member_remove", args=[c.club.slug, member_pk(c.club, c.alice)]), follow=True)
    assert "could join again" not in body(response), "no live invitation, no warning"
    Membership.objects.create(club=c.club, user=c.alice, role=Role.PLAYER)
    shared = invite(c, max_uses=20)
    invite(c, revoked_at=timezone.now())
    invite(c, expires_at=timezone.now() - timedelta(days=1))
    response = client.post(reverse("club_member_remove", args=[c.club.slug, member_pk(c.club, c.alice)]), follow=True)
    assert ("1 invitation of the club still works: alice could join again with it. Withdraw it under Invitations "
            "if they should not.") in body(response)
    assert as_(c.alice).post(reverse("join_code", args=[shared.code])).status_code == 303  # as it warned
