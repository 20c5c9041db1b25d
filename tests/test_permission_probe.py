"""The permission probe: every row of the permission matrix (tests/test_permission_matrix.py), sent
the other way too, by two more kinds of visitor.

Visitors beyond the matrix's seven:
  removed      rex, a player of the demo club until an organiser removed him: he still holds his
               session cookie and the poll token his battle page gave him
  deactivated  dana, a player of the demo club whose account was deactivated: her session cookie and
               poll token too

The removed member must get what a member of another club gets (404 for the club's objects, refused
by the polls), except where that member of another club is only let in because she has a club of her
own to design for or import into. The deactivated account must get what an anonymous visitor gets:
its session no longer signs anyone in.

Then every row is sent with the other method and with and without HX-Request, by every visitor:
never a 5xx; the database changes only where the matrix lets that visitor send that request; and what
the matrix answers with 404 or a sign-in stays a 404 or a sign-in (an id reveals nothing, whichever
way it is asked for).
"""

import pytest
from django.conf import settings
from django.contrib.auth.models import User
from django.db import transaction
from django.test import Client

from apps.battles import watch
from apps.campaigns.models import Membership, Role
from tests.test_permission_matrix import (DEMO_PASSWORD, HTMX, ROLES, ROWS, demo_world, fingerprint, is_login_redirect,
                                          url_of)

EXTRA = ["removed", "deactivated"]
VISITORS = ROLES + EXTRA
POLLS = ("battle_poll", "spectator_poll")
# The other club's organiser designs and imports into her own club; a removed member has none.
OWN_CLUB_ONLY = {("campaign_import", "GET"), ("campaign_import", "POST"), ("sheet_new", "POST"),
                 ("sheet_import", "GET"), ("sheet_import", "POST"), ("scenario_new", "GET"), ("scenario_new", "POST"),
                 ("scenario_import", "GET"), ("scenario_import", "POST")}
OK = {200, 201, 204, 301, 302, 303}


@pytest.fixture(scope="module")
def d(django_db_setup, django_db_blocker):
    """The matrix's demo world, plus a removed member and a deactivated account, each still holding
    what their browser kept from when they belonged."""
    with demo_world(django_db_blocker) as world, django_db_blocker.unblock():
        world.tokens = {}
        for role, name in (("removed", "rex"), ("deactivated", "dana")):
            user = User.objects.create_user(name, password=DEMO_PASSWORD)
            membership = Membership.objects.create(club=world.mine.club, user=user, role=Role.PLAYER)
            client = Client()
            client.force_login(user)
            world.sessions[role] = client.cookies[settings.SESSION_COOKIE_NAME].value
            world.tokens[role] = watch.issue(world.mine.battle.pk, user.pk)
            if role == "removed":
                membership.delete()
            else:
                User.objects.filter(pk=user.pk).update(is_active=False)
        world.before = fingerprint()
        yield world


def expected(row, visitor):
    if visitor in ROLES:
        return row.cells[visitor]
    if visitor == "removed":
        return "403" if (row.name, row.method) in OWN_CLUB_ONLY else row.cells["other club"]
    if row.name == "spectator":  # the matrix's anonymous visitor holds a forged link; hers is genuine
        return "ok"
    return row.cells["anonymous"]


def send(d, row, visitor, method, htmx):
    """(outcome, status, changed) of one request, rolled back whatever it did. A POST row's body is
    not put in the query of its GET (a pasted document would be an address no browser sends)."""
    client = Client()
    if visitor in d.sessions:
        client.cookies[settings.SESSION_COOKIE_NAME] = d.sessions[visitor]
    # The extra visitors' URLs and bodies are a member's (player B's): what their old pages gave them.
    as_role = visitor if visitor in ROLES else "player B"
    with transaction.atomic():
        data = row.data(d, as_role) if row.data and (method == row.method or method == "POST") else {}
        if visitor in EXTRA and row.name in POLLS:
            data = {**data, "t": d.tokens[visitor]}
        response = (client.get if method == "GET" else client.post)(url_of(d, row, d.mine, as_role), data,
                                                                       **(HTMX if htmx else {}))
        changed = fingerprint() != d.before
        transaction.set_rollback(True)
    status = response.status_code
    if is_login_redirect(response):
        return "login", status, changed
    return ("ok" if status in OK else str(status)), status, changed


def allowed_to_change(visitor, name, method):
    if (name, method) == ("logout", "POST"):
        return True  # signing out, however asked, ends the member's poll tokens (Membership.watch_epoch)
    return any(row.name == name and row.method == method and row.changes and expected(row, visitor) == "ok"
               for row in ROWS)


def test_a_removed_member_and_a_deactivated_account_are_outsiders(d, db):
    wrong = []
    for row in ROWS:
        for visitor in EXTRA:
            want = expected(row, visitor)
            outcome, status, changed = send(d, row, visitor, row.method, row.htmx)
            if outcome == "ok" and row.changes and not changed:
                outcome = "no"
            if outcome != want:
                wrong.append(f"{row.name} {row.method} as {visitor}: expected {want}, got {outcome} ({status})")
            if changed and want != "ok":
                wrong.append(f"{row.name} {row.method} as {visitor}: {status} but the database changed")
    assert not wrong, "\n".join(wrong)


ROW_OF = {(row.name, row.method): row for row in ROWS}


@pytest.mark.parametrize("flip", ["htmx", "method", "both"])
def test_every_row_asked_the_other_way(d, db, flip):
    wrong = []
    for row in ROWS:
        method = {"GET": "POST", "POST": "GET"}[row.method] if flip in ("method", "both") else row.method
        htmx = not row.htmx if flip in ("htmx", "both") else row.htmx
        for visitor in VISITORS:
            # The matrix's row for that method, where it has one (a page's GET beside its form's POST).
            want = expected(ROW_OF.get((row.name, method), row), visitor)
            outcome, status, changed = send(d, row, visitor, method, htmx)
            where = f"{row.name} {row.method} sent as {method}{' with HX-Request' if htmx else ''} by {visitor}"
            if status >= 500:
                wrong.append(f"{where}: {status}")
            if changed and not allowed_to_change(visitor, row.name, method):
                wrong.append(f"{where}: {status} and the database changed")
            # A GET of a POST-only address may send a browser back to the page (a reload never posts):
            # the page itself then answers as the matrix says.
            if want in ("404", "login") and outcome != want and not (method == "GET" and status in (303, 405)) \
                    and status != 405:
                wrong.append(f"{where}: {outcome} ({status}) where the matrix answers {want}")
    assert not wrong, "\n".join(wrong)
