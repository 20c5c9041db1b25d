"""The permission matrix: every URL pattern of the project × every kind of visitor, on the demo.

Visitors (columns):
  anonymous   no session and no spectator link (a URL that needs a link gets a forged one)
  spectator   no session, holds the battle's spectator link (its URL, and the poll token its page gives)
  player A    alice, commands side A of the demo battle      player B   bob, side B
  designer    dora                                           organiser  demo
  other club  olga, organiser of another club

Each row names a URL pattern, how to build its arguments from one club's objects, the request
(method, data) and what each visitor must get:
  ok     allowed: 2xx, or a redirect that is not to the sign-in page; for a row marked `changes`, the
         database changed too
  no     let in, but the rules refuse (a message, a redirect back): the database did not change
  login  redirected to sign in;  403 / 404 / 405 / 409 / 410 / 422 / 400  that status
Every cell that is not `ok` must leave the database exactly as it was. Every cell runs inside a
transaction that is rolled back, so the cells cannot affect each other.

The matrix is printed; a URL pattern without a row fails the test, so a new URL cannot ship without
deciding who may use it. Then: another club's ids in a URL or a form are never read or written, and
fields a form does not have (club, role, owner, damage, version…) are never saved.
"""

import re
import uuid
from contextlib import contextmanager
from dataclasses import dataclass
from html.parser import HTMLParser
from types import SimpleNamespace
from typing import Callable

import pytest
from django.conf import settings
from django.contrib.auth.models import User
from django.contrib.auth.tokens import default_token_generator
from django.db import connection, transaction
from django.test import Client, override_settings
from django.urls import URLPattern, URLResolver, get_resolver, reverse
from django.utils import timezone
from django.utils.encoding import force_bytes
from django.utils.http import urlsafe_base64_encode

from apps.armies.models import Army, Unit, UnitWeapon, Weapon
from apps.battles import services as battle_services, watch
from apps.battles.models import Battle, LogEntry
from apps.campaigns import services as sessions
from apps.campaigns.account_forms import new_invite_code
from apps.campaigns.models import Campaign, Club, Invite, Membership, Role, Scenario, SpectatorLink
from apps.structures.formats import sheet_body
from apps.structures.models import BunkerSheet, Floor, Opening, Structure
from apps.structures.views import clone_into
from tests.demo_rows import load_demo

ROLES = ["anonymous", "spectator", "player A", "player B", "designer", "organiser", "other club"]
USERS = {"player A": "alice", "player B": "bob", "designer": "dora", "organiser": "demo", "other club": "olga"}
SIGNED_IN = [r for r in ROLES if r in USERS]
FAST = ["django.contrib.auth.hashers.MD5PasswordHasher"]
HTMX = {"HTTP_HX_REQUEST": "true"}
DEMO_PASSWORD = "redoubt-demo"
NEW_PASSWORD = "a-new-Pass-phrase-81"

# Models a request could change; what each cell is compared on. Sessions, sign-in counters and
# last_login are left out: signing in changes them by design.
WATCHED = [Club, Membership, Invite, SpectatorLink, Campaign, Scenario, Battle, LogEntry, Structure, Floor, Opening,
           Army, Unit, UnitWeapon, BunkerSheet, User]


def watched_columns(model):
    return [f.column for f in model._meta.concrete_fields if f.attname != "last_login"]


def fingerprint():
    """The watched tables' contents: one md5 per table in one query on PostgreSQL, the rows themselves
    elsewhere."""
    if connection.vendor == "postgresql":
        parts = []
        for model in WATCHED:
            table, columns = model._meta.db_table, ", ".join(f't."{c}"' for c in watched_columns(model))
            parts.append(f'(SELECT count(*) || md5(coalesce(string_agg(ROW({columns})::text, \'|\' ORDER BY t."id"), \'\')) '
                         f'FROM "{table}" t)')
        with connection.cursor() as cursor:
            cursor.execute("SELECT " + ", ".join(parts))
            return cursor.fetchone()
    return [list(model.objects.order_by("pk").values_list(
        *[f.attname for f in model._meta.concrete_fields if f.attname != "last_login"])) for model in WATCHED]


# ---------------------------------------------------------------------------------- the world

class Forms(HTMLParser):
    """The forms of a page, as a browser would submit them: [(action, [(name, value), ...]), ...]."""

    def __init__(self, url):
        super().__init__(convert_charrefs=True)
        self.url, self.forms, self.form, self.select, self.textarea = url, [], None, None, None

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "form":
            # A browser posts to the action without its #fragment (which only says where to land).
            self.form = ((a.get("action") or self.url).split("#")[0], [])
            self.forms.append(self.form)
        elif self.form is None:
            return
        elif tag == "input" and a.get("name"):
            kind = a.get("type", "text")
            if kind in ("checkbox", "radio") and "checked" not in a:
                return
            if kind not in ("submit", "button", "file", "image"):
                self.form[1].append((a["name"], a.get("value", "on" if kind == "checkbox" else "")))
        elif tag == "select" and a.get("name"):
            self.select = {"name": a["name"], "options": [], "chosen": []}
        elif tag == "option" and self.select is not None:
            self.select["options"].append(a.get("value", ""))
            if "selected" in a:
                self.select["chosen"].append(a.get("value", ""))
        elif tag == "textarea" and a.get("name"):
            self.textarea = [a["name"], ""]

    def handle_data(self, data):
        if self.textarea is not None:
            self.textarea[1] += data

    def handle_endtag(self, tag):
        if tag == "select" and self.select is not None:
            chosen = self.select["chosen"] or self.select["options"][:1]
            self.form[1].extend((self.select["name"], value) for value in chosen)
            self.select = None
        elif tag == "textarea" and self.textarea is not None:
            self.form[1].append((self.textarea[0], self.textarea[1].lstrip("\n")))
            self.textarea = None
        elif tag == "form":
            self.form = None


def form_on(client, page, action=None):
    """The fields of the form on `page` that posts to `action` (the page itself by default), as a dict
    of lists for Client.post."""
    response = client.get(page)
    assert response.status_code == 200, (page, response.status_code)
    parser = Forms(page)
    parser.feed(response.content.decode())
    for url, fields in parser.forms:
        if url == (action or page):
            data = {}
            for name, value in fields:
                data.setdefault(name, []).append(value)
            data.pop("csrfmiddlewaretoken", None)
            return data
    raise AssertionError(f"no form posting to {action or page} on {page}")


def club_objects(club, member):
    """One club's objects, under the same names for both clubs (so a row's URL can be built for
    either, and the id-swap test can point a URL at the other club's)."""
    o = SimpleNamespace(club=club)
    o.campaign = Campaign.objects.filter(club=club).order_by("pk").first()
    o.battle = Battle.objects.filter(club=club).order_by("pk").first()
    o.scenario = Scenario.objects.filter(club=club).order_by("pk").first()
    o.battle_structure = o.battle.structures.order_by("pk").first()
    o.sid = f"s{o.battle_structure.pk}"
    o.scenario_structure = o.scenario.structures.order_by("pk").first()
    o.army = o.scenario.armies.order_by("side").first()
    o.unit = Unit.objects.filter(army__scenario=o.scenario, x__isnull=False).order_by("pk").first()
    library = BunkerSheet.objects.filter(club__isnull=True, is_blank=False).order_by("pk").first()
    o.sheet = clone_into(sheet_body(library), club)
    o.invite = Invite.objects.create(club=club, code=new_invite_code(), role=Role.PLAYER, max_uses=5,
                                     expires_at=timezone.now() + timezone.timedelta(days=7))
    o.link = SpectatorLink.objects.create(battle=o.battle, secret=watch.new_link_secret(), label="matrix")
    o.link_token = watch.link_token(o.link)
    o.membership = Membership.objects.get(club=club, user=member)
    # A campaign whose one session is finished: something to reopen, and room to start the next.
    organiser = Membership.objects.filter(club=club, role=Role.ORGANISER).order_by("pk").first().user
    o.finished_campaign = Campaign.objects.create(club=club, name="Matrix campaign", ruleset=o.campaign.ruleset)
    session = sessions.start_session(campaign_id=o.finished_campaign.pk, user=organiser)
    battle_services.start(battle_id=session.pk, user=organiser)
    sessions.finish_battle(battle_id=session.pk, user=organiser, winner="A", result="Held the ford")
    # And one whose newest session is only set up: something to discard.
    o.setup_campaign = Campaign.objects.create(club=club, name="Matrix campaign two", ruleset=o.campaign.ruleset)
    sessions.start_session(campaign_id=o.setup_campaign.pk, user=organiser)
    return o


@contextmanager
def demo_world(django_db_blocker):
    """The demo and the objects the rows use, inside a transaction that is rolled back at the end."""
    with django_db_blocker.unblock(), override_settings(PASSWORD_HASHERS=FAST):
        atomic = transaction.atomic()
        atomic.__enter__()
        try:
            load_demo()
            d = SimpleNamespace(users={role: User.objects.get(username=name) for role, name in USERS.items()})
            for user in d.users.values():  # the demo hashed with the real hasher; signing in must be quick
                user.set_password(DEMO_PASSWORD)
                user.save(update_fields=["password"])
            demo_club = Club.objects.get(memberships__user__username="demo")
            olga_club = Club.objects.get(memberships__user__username="olga")
            oscar = User.objects.create_user("oscar", password=DEMO_PASSWORD)
            Membership.objects.create(club=olga_club, user=oscar, role=Role.PLAYER)
            d.mine = club_objects(demo_club, d.users["player B"])
            d.theirs = club_objects(olga_club, oscar)
            d.sessions = {}
            for role, user in d.users.items():
                client = Client()
                client.force_login(user)
                d.sessions[role] = client.cookies[settings.SESSION_COOKIE_NAME].value
            prepare(d)
            d.before = fingerprint()
            yield d
        finally:
            transaction.set_rollback(True)
            atomic.__exit__(None, None, None)


@pytest.fixture(scope="module")
def d(django_db_setup, django_db_blocker):
    """The demo world, loaded once for the module."""
    with demo_world(django_db_blocker) as world:
        yield world


def prepare(d):
    """Request bodies that succeed for whoever may send them, taken from the pages themselves."""
    o = d.mine
    organiser = client_for(d, "organiser")
    battle = o.battle
    units = {(u.army.side, u.name): f"u{u.pk}" for u in Unit.objects.filter(army__battle=battle).select_related("army")}
    structures = {s.name: f"s{s.pk}" for s in battle.structures.all()}
    he = Weapon.objects.get(ruleset=battle.ruleset, slug="he-2d6")
    d.resolve = {"action": "ba_he", "attacker": units[("A", "Field gun team")], "weapon": f"w{he.pk}",
                 "structure": structures["Brick townhouse"], "target": units[("B", "Grenadier Squad 2")],
                 "hit": "yes", "went_down": "no", "pins": "1", "dice_mode": "player", "dice_0": "4", "dice_1": "3"}
    scenario = reverse("scenario", args=[o.scenario.pk])
    d.scenario_settings = form_on(organiser, scenario, reverse("scenario_settings", args=[o.scenario.pk]))
    d.scenario_settings["name"] = ["Village crossroads (renamed)"]
    d.scenario_zones = form_on(organiser, scenario, reverse("scenario_zones", args=[o.scenario.pk]))
    d.scenario_zones["zones-0-depth"] = ["10"]
    d.structure_add = form_on(organiser, scenario, reverse("scenario_structure_add", args=[o.scenario.pk]))
    d.army = form_on(organiser, scenario, reverse("scenario_army", args=[o.scenario.pk, o.army.pk]))
    d.army[f"army{o.army.pk}-name"] = ["Renamed company"]
    d.start = form_on(organiser, scenario, reverse("scenario_start", args=[o.scenario.pk]))
    d.campaign = form_on(organiser, scenario, reverse("scenario_campaign", args=[o.scenario.pk]))
    d.scenario_copy = form_on(organiser, scenario, reverse("scenario_copy", args=[o.scenario.pk]))
    structure_page = reverse("scenario_structure", args=[o.scenario.pk, o.scenario_structure.pk])
    d.structure_edit = form_on(organiser, structure_page)
    d.structure_edit["name"] = ["Renamed house"]
    unit_new = reverse("scenario_unit_new", args=[o.scenario.pk, o.army.pk])
    d.unit_new = form_on(organiser, unit_new)
    d.unit_new["name"] = ["New squad"]
    unit_page = reverse("scenario_unit", args=[o.scenario.pk, o.unit.pk])
    d.unit_edit = form_on(organiser, unit_page)
    d.unit_edit["name"] = ["Renamed team"]
    d.sheet_edit = form_on(organiser, reverse("sheet_edit", args=[o.sheet.pk]))
    d.scenario_new = form_on(organiser, reverse("scenario_new"))
    d.scenario_new["name"] = ["A new scenario"]
    library = BunkerSheet.objects.filter(club__isnull=True, is_blank=False).order_by("pk").first()
    d.sheet_document = organiser.get(reverse("sheet_export", args=[library.pk])).content.decode()
    d.scenario_document = organiser.get(reverse("scenario_export", args=[o.scenario.pk])).content.decode()
    d.campaign_document = organiser.get(reverse("campaign_export", args=[o.campaign.pk])).getvalue().decode()
    d.campaign_settings = {"single_open_battle": "on"} if not o.campaign.single_open_battle else {}
    d.commander = form_on(organiser, reverse("campaign", args=[o.campaign.pk]),
                          reverse("campaign_commander", args=[o.campaign.pk]))
    d.commander["owner"] = [str(d.users["player B"].pk)]
    d.reset_uid = urlsafe_base64_encode(force_bytes(d.users["player A"].pk))
    d.reset_token = default_token_generator.make_token(d.users["player A"])


def client_for(d, role, **defaults):
    client = Client(**defaults)
    if role in USERS:
        client.cookies[settings.SESSION_COOKIE_NAME] = d.sessions[role]
    return client


def own_club(d, role):
    """The club a visitor designs for (for pages that ask which club): the other club's organiser
    picks her own, everyone else the demo club."""
    return d.theirs.club if role == "other club" else d.mine.club


# ---------------------------------------------------------------------------------- the rows

@dataclass
class Row:
    name: str
    method: str
    expect: str
    kwargs: Callable = lambda o, role: {}
    data: Callable = None  # (d, role) -> request body or query
    changes: bool = False  # an `ok` POST must change the database
    htmx: bool = False
    swap: bool | int = True  # its URL names club objects: the id-swap test points it at the other club's and
    # expects 404 (or this status: the polls refuse a token for another battle with 403)

    @property
    def cells(self):
        cells = dict(zip(ROLES, self.expect.split()))
        assert len(cells) == len(ROLES) == len(self.expect.split()), self.name
        return cells


# Column order: anonymous spectator player-A player-B designer organiser other-club
EVERYONE = "ok ok ok ok ok ok ok"
SIGNED = "login login ok ok ok ok ok"
MEMBERS = "login login ok ok ok ok 404"
EDITORS = "login login 403 403 ok ok 404"
ORGANISERS = "login login 403 403 403 ok 404"
DESIGN_ANYWHERE = "login login 403 403 ok ok ok"  # a club to design for: the other club's organiser has hers


def scenario_pk(o, role):
    return {"pk": o.scenario.pk}


def scenario_structure(o, role):
    return {"pk": o.scenario.pk, "sid": o.scenario_structure.pk}


def scenario_army(o, role):
    return {"pk": o.scenario.pk, "army_id": o.army.pk}


def scenario_unit(o, role):
    return {"pk": o.scenario.pk, "uid": o.unit.pk}


def battle_pk(o, role):
    return {"pk": o.battle.pk}


def sheet_pk(o, role):
    return {"pk": o.sheet.pk}


def club_slug(o, role):
    return {"slug": o.club.slug}


def poll_query(d, role):
    """What each visitor's page would have given them. The other club's organiser holds a token issued
    to her (as if she had been a member): the changed path must still refuse her."""
    battle = d.mine.battle
    tokens = {"spectator": watch.issue_spectator(battle.pk, d.mine.link.pk), "anonymous": ""}
    token = tokens[role] if role in tokens else watch.issue(battle.pk, d.users[role].pk)
    return {"v": 0, "m": 0, "after": 0, "t": token}


def resolve_data(d, role):
    return {**d.resolve, "client_token": str(uuid.uuid4())}


def turn_data(d, role):
    # "confirmed": without JavaScript the page asks first (views.unconfirmed); these posts answer yes.
    return {"action": "end_turn", "client_token": str(uuid.uuid4()), "confirmed": "1"}


def undo_data(d, role):
    return {"confirmed": "1"}


def import_data(document):
    return lambda d, role: {"club": own_club(d, role).pk, "text": document(d)}


ROWS = [
    Row("healthz", "GET", EVERYONE, swap=False),
    # Accounts
    Row("signup", "GET", EVERYONE, swap=False),
    # Signed-in people are sent on to their home page: no second account.
    Row("signup", "POST", "ok ok no no no no no", changes=True, swap=False, data=lambda d, role: {
        "username": "newcomer", "email": "newcomer@example.org", "password1": NEW_PASSWORD, "password2": NEW_PASSWORD}),
    Row("login", "GET", EVERYONE, swap=False),
    Row("login", "POST", EVERYONE, swap=False, data=lambda d, role: {"username": "alice", "password": DEMO_PASSWORD}),
    Row("logout", "POST", EVERYONE, swap=False),
    Row("password_change", "GET", SIGNED, swap=False),
    Row("password_change", "POST", SIGNED, changes=True, swap=False, data=lambda d, role: {
        "old_password": DEMO_PASSWORD, "new_password1": NEW_PASSWORD, "new_password2": NEW_PASSWORD}),
    Row("password_change_done", "GET", SIGNED, swap=False),
    Row("password_reset", "GET", EVERYONE, swap=False),
    Row("password_reset", "POST", EVERYONE, swap=False, data=lambda d, role: {"email": "nobody@example.org"}),
    Row("password_reset_done", "GET", EVERYONE, swap=False),
    Row("password_reset_confirm", "GET", EVERYONE, swap=False),  # alice's genuine reset link (see url_of)
    Row("password_reset_complete", "GET", EVERYONE, swap=False),
    # Home, clubs, invitations
    Row("home", "GET", SIGNED, swap=False),
    Row("club_list", "GET", SIGNED, swap=False),
    Row("club_new", "GET", SIGNED, swap=False),
    Row("club_new", "POST", SIGNED, changes=True, swap=False, data=lambda d, role: {"name": "Brand new club"}),
    Row("club", "GET", MEMBERS, kwargs=club_slug),
    Row("club_invite_new", "POST", ORGANISERS, changes=True, kwargs=club_slug,
        data=lambda d, role: {"role": "player", "days": 7, "max_uses": 2}),
    Row("club_invite_revoke", "POST", ORGANISERS, changes=True,
        kwargs=lambda o, role: {"slug": o.club.slug, "pk": o.invite.pk}),
    Row("club_member_role", "POST", ORGANISERS, changes=True, data=lambda d, role: {"role": "designer"},
        kwargs=lambda o, role: {"slug": o.club.slug, "pk": o.membership.pk}),
    Row("club_member_remove", "POST", ORGANISERS, changes=True,
        kwargs=lambda o, role: {"slug": o.club.slug, "pk": o.membership.pk}),
    # Everyone may leave, but not the last organiser (409): the demo club has one.
    Row("club_leave", "POST", "login login ok ok ok 409 404", changes=True, kwargs=club_slug),
    Row("join", "GET", EVERYONE, swap=False),
    Row("join", "POST", EVERYONE, swap=False, data=lambda d, role: {"code": d.mine.invite.code}),
    # A code is a capability, not a club object: anyone may read it; members of its club change nothing.
    Row("join_code", "GET", EVERYONE, swap=False, kwargs=lambda o, role: {"code": o.invite.code}),
    Row("join_code", "POST", "login login no no no no ok", changes=True, swap=False,
        kwargs=lambda o, role: {"code": o.invite.code}),
    # Campaigns: members read and take the file home; organisers run the sessions and settings and
    # import a campaign into a club they organise (the other club's organiser into hers).
    Row("campaign", "GET", MEMBERS, kwargs=lambda o, role: {"pk": o.campaign.pk}),
    Row("campaign_export", "GET", MEMBERS, kwargs=lambda o, role: {"pk": o.campaign.pk}),
    Row("campaign_import", "GET", "login login 403 403 403 ok ok", swap=False),
    Row("campaign_import", "POST", "login login 403 403 403 ok ok", changes=True, swap=False,
        data=import_data(lambda d: d.campaign_document)),
    Row("campaign_settings", "POST", ORGANISERS, changes=True, kwargs=lambda o, role: {"pk": o.campaign.pk},
        data=lambda d, role: d.campaign_settings),
    Row("campaign_commander", "POST", ORGANISERS, changes=True, kwargs=lambda o, role: {"pk": o.campaign.pk},
        data=lambda d, role: d.commander),
    Row("campaign_session_start", "POST", ORGANISERS, changes=True, data=lambda d, role: {"weather": "clear"},
        kwargs=lambda o, role: {"pk": o.finished_campaign.pk}),
    Row("campaign_session_reopen", "POST", ORGANISERS, changes=True, data=lambda d, role: {"confirm": "on"},
        kwargs=lambda o, role: {"pk": o.finished_campaign.pk}),
    Row("campaign_session_discard", "POST", ORGANISERS, changes=True, data=lambda d, role: {},
        kwargs=lambda o, role: {"pk": o.setup_campaign.pk}),
    Row("battle_finish", "POST", ORGANISERS, changes=True, kwargs=battle_pk,
        data=lambda d, role: {"winner": "B", "result": "The village holds", "confirmed": "1"}),
    Row("battle_commander", "POST", ORGANISERS, changes=True, kwargs=battle_pk,
        data=lambda d, role: {"side": "B", "owner": str(d.users["player A"].pk)}),
    # The battle screen: players act for their own side only (bob may not fire side A's gun: 422);
    # a designer watches; the organiser acts for both sides.
    Row("battle", "GET", MEMBERS, kwargs=battle_pk),
    Row("battle_form", "GET", "login login ok ok 403 ok 404", kwargs=battle_pk, htmx=True,
        data=lambda d, role: {"action": "ba_he"}),
    Row("battle_card", "GET", MEMBERS, htmx=True, kwargs=lambda o, role: {"pk": o.battle.pk, "sid": o.sid}),
    Row("battle_log", "GET", MEMBERS, kwargs=battle_pk, htmx=True, data=lambda d, role: {"before": 5}),
    Row("battle_resolve", "POST", "login login ok 422 403 ok 404", changes=True, kwargs=battle_pk, data=resolve_data),
    Row("battle_undo", "POST", "login login no no no ok 404", changes=True, kwargs=battle_pk, data=undo_data),
    Row("battle_turn", "POST", "login login ok ok no ok 404", changes=True, kwargs=battle_pk, data=turn_data),
    Row("battle_poll", "GET", "403 403 ok ok ok ok 403", kwargs=battle_pk, htmx=True, data=poll_query, swap=403),
    # Spectators: the link is the credential (anonymous has a forged one); members' poll tokens do not
    # open the spectator poll, nor a spectator's the members' poll (above).
    Row("spectator", "GET", "404 ok ok ok ok ok ok", swap=False,
        kwargs=lambda o, role: {"token": "forged" + o.link_token[6:] if role == "anonymous" else o.link_token}),
    Row("spectator_poll", "GET", "403 ok 403 403 403 403 403", kwargs=battle_pk, htmx=True,
        data=poll_query, swap=403),
    Row("spectator_link_new", "POST", ORGANISERS, changes=True, kwargs=battle_pk),
    Row("spectator_link_revoke", "POST", ORGANISERS, changes=True, kwargs=lambda o, role: {"pk": o.link.pk}),
    # Structures and bunker sheets: designers edit their club's sheets; anyone signed in reads the library.
    Row("structure", "GET", MEMBERS, kwargs=lambda o, role: {"pk": o.battle_structure.pk}),
    Row("sheet_list", "GET", SIGNED, swap=False),
    Row("sheet_reference", "GET", SIGNED, swap=False),
    Row("sheet_new", "POST", DESIGN_ANYWHERE, changes=True, swap=False,
        data=lambda d, role: {"club": own_club(d, role).pk}),
    Row("sheet_import", "GET", DESIGN_ANYWHERE, swap=False),
    Row("sheet_import", "POST", DESIGN_ANYWHERE, changes=True, swap=False,
        data=import_data(lambda d: d.sheet_document)),
    Row("sheet", "GET", MEMBERS, kwargs=sheet_pk),
    Row("sheet_edit", "GET", EDITORS, kwargs=sheet_pk),
    Row("sheet_edit", "POST", EDITORS, changes=True, kwargs=sheet_pk, data=lambda d, role: d.sheet_edit),
    Row("sheet_preview", "POST", EDITORS, kwargs=sheet_pk, htmx=True, data=lambda d, role: d.sheet_edit),
    Row("sheet_clone", "POST", EDITORS, changes=True, kwargs=sheet_pk,
        data=lambda d, role: {"club": d.mine.club.pk}),
    Row("sheet_delete", "POST", EDITORS, changes=True, kwargs=sheet_pk),
    Row("sheet_export", "GET", MEMBERS, kwargs=sheet_pk),
    Row("sheet_print", "GET", MEMBERS, kwargs=sheet_pk),
    # Scenarios: every member reads; designers and organisers change; organisers start battles.
    Row("scenario_list", "GET", SIGNED, swap=False),
    Row("scenario_new", "GET", DESIGN_ANYWHERE, swap=False),
    Row("scenario_new", "POST", DESIGN_ANYWHERE, changes=True, swap=False,
        data=lambda d, role: {**d.scenario_new, "club": [own_club(d, role).pk]}),
    Row("scenario_import", "GET", DESIGN_ANYWHERE, swap=False),
    Row("scenario_import", "POST", DESIGN_ANYWHERE, changes=True, swap=False,
        data=import_data(lambda d: d.scenario_document.replace("Village crossroads", "Imported crossroads"))),
    Row("scenario", "GET", MEMBERS, kwargs=scenario_pk),
    Row("scenario_settings", "POST", EDITORS, changes=True, kwargs=scenario_pk, data=lambda d, role: d.scenario_settings),
    Row("scenario_zones", "POST", EDITORS, changes=True, kwargs=scenario_pk, data=lambda d, role: d.scenario_zones),
    Row("scenario_structure_add", "POST", EDITORS, changes=True, kwargs=scenario_pk,
        data=lambda d, role: d.structure_add),
    Row("scenario_structure", "GET", EDITORS, kwargs=scenario_structure),
    Row("scenario_structure", "POST", EDITORS, changes=True, kwargs=scenario_structure,
        data=lambda d, role: d.structure_edit),
    Row("scenario_structure_move", "POST", EDITORS, changes=True, htmx=True,
        data=lambda d, role: {"x": "3", "y": "3"}, kwargs=scenario_structure),
    Row("scenario_structure_section", "POST", EDITORS, changes=True, kwargs=scenario_structure),
    Row("scenario_structure_delete", "POST", EDITORS, changes=True, kwargs=scenario_structure),
    # Both sides of the demo scenario have an army, so a new one is refused as bad input (400).
    Row("scenario_army_new", "POST", "login login 403 403 400 400 404", changes=True, kwargs=scenario_pk,
        data=lambda d, role: {"newarmy-side": "A", "newarmy-name": "Third army"}),
    Row("scenario_army", "POST", EDITORS, changes=True, data=lambda d, role: d.army, kwargs=scenario_army),
    Row("scenario_unit_new", "GET", EDITORS, kwargs=scenario_army),
    Row("scenario_unit_new", "POST", EDITORS, changes=True, data=lambda d, role: d.unit_new, kwargs=scenario_army),
    Row("scenario_unit", "GET", EDITORS, kwargs=scenario_unit),
    Row("scenario_unit", "POST", EDITORS, changes=True, data=lambda d, role: d.unit_edit, kwargs=scenario_unit),
    Row("scenario_unit_move", "POST", EDITORS, changes=True, htmx=True,
        data=lambda d, role: {"x": "2", "y": "2"}, kwargs=scenario_unit),
    Row("scenario_unit_delete", "POST", EDITORS, changes=True, kwargs=scenario_unit),
    Row("scenario_start", "POST", ORGANISERS, changes=True, kwargs=scenario_pk, data=lambda d, role: d.start),
    Row("scenario_campaign", "POST", ORGANISERS, changes=True, kwargs=scenario_pk, data=lambda d, role: d.campaign),
    # The demo's scenario has started battles: it stays (409); one never played is deleted (its own test).
    Row("scenario_copy", "POST", EDITORS, changes=True, kwargs=scenario_pk, data=lambda d, role: d.scenario_copy),
    Row("scenario_delete", "POST", "login login 403 403 409 409 404", kwargs=scenario_pk),
    Row("scenario_export", "GET", MEMBERS, kwargs=scenario_pk),
    Row("scenario_print", "GET", MEMBERS, kwargs=scenario_pk),
]

def url_of(d, row, o, role):
    kwargs = row.kwargs(o, role)
    if row.name == "password_reset_confirm":
        kwargs = {"uidb64": d.reset_uid, "token": d.reset_token}
    return reverse(row.name, kwargs=kwargs)


# ---------------------------------------------------------------------------------- running a cell

def is_login_redirect(response):
    """Sent to sign in: a redirect, or for htmx (config.middleware.HtmxSignInMiddleware) the header
    that makes the browser go there."""
    sign_in = f"{reverse('login')}?next="
    if response.status_code == 204:
        return response.get("HX-Redirect", "").startswith(sign_in)
    return response.status_code in (301, 302, 303) and response["Location"].startswith(sign_in)


def run(d, row, role, o=None):
    """One cell: (outcome, status, changed), rolled back whatever it did."""
    client = client_for(d, role)
    url = url_of(d, row, o or d.mine, role)
    extra = HTMX if row.htmx else {}
    with transaction.atomic():
        data = row.data(d, role) if row.data else {}
        if row.method == "GET":
            response = client.get(url, data, **extra)
        else:
            response = client.post(url, data, **extra)
        changed = fingerprint() != d.before if row.method == "POST" else False
        transaction.set_rollback(True)
    status = response.status_code
    if is_login_redirect(response):
        outcome = "login"
    elif status in (200, 201, 204, 301, 302, 303):
        outcome = "no" if row.changes and not changed else "ok"
    else:
        outcome = str(status)
    return outcome, status, changed


def cell_text(outcome):
    return "✓" if outcome == "ok" else f"✗ {outcome}"


def print_matrix(results):
    width = max(len(f"{row.name} {row.method}") for row in ROWS) + 2
    lines = ["", "Permission matrix (✓ allowed, ✗ denied: login = sent to sign in, no = refused by the rules, "
                 "else the status)", " " * width + "".join(f"{role:<12}" for role in ROLES)]
    for row in ROWS:
        cells = "".join(f"{cell_text(results[(row.name, row.method, role)][0]):<12}" for role in ROLES)
        lines.append(f"{row.name + ' ' + row.method:<{width}}{cells}")
    return "\n".join(lines)


# ---------------------------------------------------------------------------------- the tests

def project_patterns(patterns=None, prefix=""):
    """(route, name) of every URL pattern, admin's aside."""
    for p in get_resolver().url_patterns if patterns is None else patterns:
        route = prefix + str(p.pattern)
        if isinstance(p, URLResolver):
            if route.startswith("admin/"):
                continue
            yield from project_patterns(p.url_patterns, route)
        elif isinstance(p, URLPattern):
            if p.callback.__module__ in ("django.views.static", "django.contrib.staticfiles.views"):
                continue
            yield route, p.name


def test_every_url_pattern_has_a_row():
    patterns = list(project_patterns())
    names = {name for _, name in patterns}
    assert None not in names, f"an unnamed URL pattern: {[r for r, n in patterns if n is None]}"
    rows = {row.name for row in ROWS}
    missing = sorted(names - rows)
    assert not missing, f"URL patterns without a row in the permission matrix: {missing}"
    assert not rows - names, f"rows for URL patterns that no longer exist: {sorted(rows - names)}"
    for row in ROWS:
        row.cells  # every row has a cell for every role


def test_the_matrix(d, db, capsys):
    results, wrong = {}, []
    for row in ROWS:
        for role, expected in row.cells.items():
            outcome, status, changed = run(d, row, role)
            results[(row.name, row.method, role)] = (outcome, status)
            if outcome != expected:
                wrong.append(f"{row.name} {row.method} as {role}: expected {expected}, got {outcome} ({status})")
            if outcome not in ("ok",) and changed:
                wrong.append(f"{row.name} {row.method} as {role}: {outcome} ({status}) but the database changed")
    matrix = print_matrix(results)
    with capsys.disabled():
        print(matrix)
    assert not wrong, "\n".join(wrong) + "\n" + matrix


def refusal(d, row, role):
    """The response to one cell, rolled back whatever it did."""
    client = client_for(d, role)
    with transaction.atomic():
        data = row.data(d, role) if row.data else {}
        send = client.get if row.method == "GET" else client.post
        response = send(url_of(d, row, d.mine, role), data, **(HTMX if row.htmx else {}))
        transaction.set_rollback(True)
    return response


def test_every_refusal_says_why_inside_the_sites_layout(d, db):
    """Every 403 of the matrix: a page opened or posted without htmx is the refusal page, in the site's
    layout (the header and its navigation, a way home) with the view's reason, under the same CSP as
    every page; an htmx request gets the reason alone, in a few words."""
    wrong = []
    for row in ROWS:
        for role, expected in row.cells.items():
            if expected != "403":
                continue
            response = refusal(d, row, role)
            where = f"{row.name} {row.method} as {role}"
            html = response.content.decode()
            if response.status_code != 403:
                wrong.append(f"{where}: {response.status_code}")
            elif row.htmx:
                if not html.strip() or "<html" in html or len(html) > 300:
                    wrong.append(f"{where} (htmx): not a short reason: {html[:80]!r}")
            else:
                reason = re.search(r'<p class="notice" role="alert">([^<]+)</p>', html)
                nonce = re.search(r"'nonce-([^']+)'", response.get("Content-Security-Policy", ""))
                if not ('<header class="site-header">' in html and 'class="brand" href="/"' in html and reason):
                    wrong.append(f"{where}: no layout or no reason: {html[:80]!r}")
                elif not nonce or any(f'nonce="{nonce.group(1)}"' not in tag
                                      for tag in re.findall(r"<script\b[^>]*>", html)):
                    wrong.append(f"{where}: a script without the CSP nonce")
    assert not wrong, "\n".join(wrong)


def test_a_refusals_reason_is_escaped(rf):
    """The reason is text: markup in it is shown, never run."""
    from django.contrib.auth.models import AnonymousUser
    from django.core.exceptions import PermissionDenied

    from config.responses import permission_denied

    request = rf.get("/")
    request.user, request.htmx = AnonymousUser(), False
    response = permission_denied(request, PermissionDenied('<script>alert("x")</script> & co'))
    html = response.content.decode()
    assert response.status_code == 403
    assert "&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt; &amp; co" in html and "<script>alert" not in html


def test_changing_an_id_in_the_url_to_another_clubs_object_reads_and_writes_nothing(d, db):
    """The demo club's organiser and designer, pointed at Olga's club's objects: 404, nothing changed."""
    wrong = []
    for row in ROWS:
        if not row.swap:
            continue
        for role in ("organiser", "designer", "player A"):
            outcome, status, changed = run(d, row, role, o=d.theirs)
            if status != (404 if row.swap is True else row.swap) or changed:
                wrong.append(f"{row.name} {row.method} as {role} with the other club's ids: {status}, "
                             f"changed={changed}")
    assert not wrong, "\n".join(wrong)


def post(d, role, name, data, *, htmx=False, **kwargs):
    client = client_for(d, role)
    return client.post(reverse(name, kwargs=kwargs), data, **(HTMX if htmx else {}))


def test_another_clubs_ids_in_a_form_are_refused(d, db):
    """Ids in a request body that point into another club: refused, and nothing anywhere changed."""
    mine, theirs = d.mine, d.theirs
    their_unit = f"u{Unit.objects.filter(army__battle=theirs.battle).order_by('pk').first().pk}"
    cases = [
        ("sheet_new", {}, {"club": theirs.club.pk}),
        ("sheet_clone", {"pk": mine.sheet.pk}, {"club": theirs.club.pk}),
        ("sheet_import", {}, {"club": theirs.club.pk, "text": d.sheet_document}),
        ("scenario_import", {}, {"club": theirs.club.pk, "text": d.scenario_document}),
        ("campaign_import", {}, {"club": theirs.club.pk, "text": d.campaign_document}),
        ("scenario_new", {}, {**d.scenario_new, "club": [theirs.club.pk]}),
        ("scenario_army", {"pk": mine.scenario.pk, "army_id": mine.army.pk},
         {**d.army, f"army{mine.army.pk}-owner": [User.objects.get(username="olga").pk]}),
        ("scenario_structure_add", {"pk": mine.scenario.pk},
         {**d.structure_add, "sheet": [theirs.sheet.pk]}),
        ("battle_resolve", {"pk": mine.battle.pk}, {**resolve_data(d, "organiser"), "target": their_unit}),
        ("battle_resolve", {"pk": mine.battle.pk}, {**resolve_data(d, "organiser"), "structure": theirs.sid}),
        ("battle_turn", {"pk": mine.battle.pk}, {"action": "lg_activate", "unit": their_unit}),
        ("club_member_role", {"slug": mine.club.slug, "pk": theirs.membership.pk}, {"role": "organiser"}),
        ("spectator_link_revoke", {"pk": theirs.link.pk}, {}),
    ]
    wrong = []
    for name, kwargs, data in cases:
        with transaction.atomic():
            response = post(d, "organiser", name, data, **kwargs)
            changed = fingerprint() != d.before
            transaction.set_rollback(True)
        if changed or response.status_code in (200, 201):
            wrong.append(f"{name} with {data}: {response.status_code}, changed={changed}")
    assert not wrong, "\n".join(wrong)


def saved(model, pk, *fields):
    return model.objects.filter(pk=pk).values_list(*fields).get()


def test_fields_a_form_does_not_have_are_never_saved(d, db):
    """Extra fields (club, role, owner, author, damage, version, scenario…) ride along with good
    requests: the requests succeed and none of the extras is stored."""
    mine, theirs = d.mine, d.theirs
    olga = User.objects.get(username="olga")
    with transaction.atomic():
        structure = mine.scenario_structure
        response = post(d, "organiser", "scenario_structure", {
            **d.structure_edit, "damage_taken": "99", "collapsed": "on", "scenario": theirs.scenario.pk,
            "battle": theirs.battle.pk, "campaign": theirs.campaign.pk, "fire_size": "12"},
            pk=mine.scenario.pk, sid=structure.pk)
        assert response.status_code == 302
        assert saved(Structure, structure.pk, "name", "damage_taken", "collapsed", "scenario_id", "battle_id",
                     "campaign_id", "fire_size") == ("Renamed house", structure.damage_taken, False, mine.scenario.pk,
                                                   None, None, structure.fire_size)

        response = post(d, "organiser", "scenario_settings", {
            **d.scenario_settings, "club": theirs.club.pk, "author": olga.pk, "updated_at": "2000-01-01"},
            pk=mine.scenario.pk)
        assert response.status_code == 302
        assert saved(Scenario, mine.scenario.pk, "name", "club_id", "author_id") == (
            "Village crossroads (renamed)", mine.club.pk, mine.scenario.author_id)

        response = post(d, "organiser", "scenario_unit", {
            **d.unit_edit, "army": theirs.army.pk, "destroyed": "on", "models_left": "0", "acted": "on"},
            pk=mine.scenario.pk, uid=mine.unit.pk)
        assert response.status_code == 302
        assert saved(Unit, mine.unit.pk, "name", "army_id") == ("Renamed team", mine.unit.army_id)

        response = post(d, "organiser", "sheet_edit", {**d.sheet_edit, "club": theirs.club.pk, "is_blank": "on"},
                        pk=mine.sheet.pk)
        assert response.status_code == 302
        assert saved(BunkerSheet, mine.sheet.pk, "club_id", "is_blank") == (mine.club.pk, False)

        response = post(d, "organiser", "club_member_role", {"role": "designer", "club": theirs.club.pk,
                                                              "user": olga.pk}, slug=mine.club.slug,
                        pk=mine.membership.pk)
        assert response.status_code == 303
        assert saved(Membership, mine.membership.pk, "club_id", "user_id", "role") == (
            mine.club.pk, d.users["player B"].pk, "designer")

        response = post(d, "organiser", "club_invite_new", {"role": "player", "days": 1, "max_uses": 1,
                                                             "club": theirs.club.pk, "uses": 1, "code": "AAAAAAAA"},
                        slug=mine.club.slug)
        assert response.status_code == 303
        invite = Invite.objects.order_by("-pk").first()
        assert (invite.club_id, invite.uses) == (mine.club.pk, 0) and invite.code != "AAAAAAAA"

        campaign = mine.campaign
        response = post(d, "organiser", "campaign_settings", {**d.campaign_settings, "club": theirs.club.pk,
                                                               "name": "Hijacked", "ruleset": "lg"}, pk=campaign.pk)
        assert response.status_code == 303
        assert saved(Campaign, campaign.pk, "club_id", "name", "ruleset", "single_open_battle") == (
            mine.club.pk, campaign.name, campaign.ruleset, "single_open_battle" in d.campaign_settings)

        version = Battle.objects.get(pk=mine.battle.pk).version
        response = post(d, "player A", "battle_resolve", {**resolve_data(d, "player A"), "version": 1,
                                                          "damage_taken": 99, "side": "B", "actor": olga.pk},
                        pk=mine.battle.pk)
        assert response.status_code == 303
        entry = LogEntry.objects.filter(battle=mine.battle).order_by("-seq").first()
        assert entry.actor_id == d.users["player A"].pk and entry.side == "A"
        assert Battle.objects.get(pk=mine.battle.pk).version > version
        transaction.set_rollback(True)


def test_players_are_offered_only_their_own_sides_units(d, db):
    """The services refuse other sides (the battle_resolve row); the form does not even offer them."""
    battle = d.mine.battle
    sides = dict(Unit.objects.filter(army__battle=battle).values_list("pk", "army__side"))
    for role, side in (("player A", "A"), ("player B", "B")):
        html = client_for(d, role).get(reverse("battle", args=[battle.pk])).content.decode()
        start = html.index('name="attacker"')
        options = html[start:html.index("</select>", start)]
        offered = {int(pk) for pk in re.findall(r'value="u(\d+)"', options)}
        assert offered and {sides[pk] for pk in offered} == {side}, (role, offered)
    designer = client_for(d, "designer").get(reverse("battle", args=[battle.pk])).content.decode()
    assert 'name="attacker"' not in designer and "You are watching" in designer


def test_the_admin_is_for_staff_only(d, db):
    for role in ROLES:
        response = client_for(d, role).get("/admin/")
        assert response.status_code == 302 and response["Location"].startswith("/admin/login/"), role
        response = client_for(d, role).get(f"/admin/campaigns/club/{d.mine.club.pk}/change/")
        assert response.status_code == 302 and response["Location"].startswith("/admin/login/"), role

