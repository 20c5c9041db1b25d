"""The battle page: header, every structure's state, both armies, the log with its dice; its
partials render on their own; and its query count does not grow with the battle."""

import pytest
from django.db import connection
from django.template import Context, Template
from django.template.loader import render_to_string
from django.test.utils import CaptureQueriesContext
from django.urls import reverse
from django.utils import timezone

from apps.armies.models import Army, Unit
from apps.battles.log import append_entry
from apps.battles.models import LogEntry
from apps.battles import snapshot as snap
from apps.battles import views
from apps.battles.views import LOG_PAGE_SIZE, battle_context
from apps.structures.models import Floor, Opening, Structure, StructureKind
from tests.campaigns.test_pages import (  # noqa: F401 - fast_passwords is an autouse fixture
    assert_csp_clean,
    body,
    fast_passwords,
    make_world,
    page,
    signed_in,
    text_of,
)


@pytest.fixture
def world(db):
    return make_world()


def battle_page(client, w, account=None):
    response = signed_in(client, account or w.player).get(reverse("battle", args=[w.battle.pk]))
    assert response.status_code == 200
    return response


def test_header_shows_ruleset_turn_weather_status_and_version(client, world):
    response = battle_page(client, world)
    assert_csp_clean(response)
    header = text_of(response, "battle-header")
    for text in ("Crossroads Fight", "In progress", "Turn 3", "Rain", "Disposable Heroes", "Session 2",
                 "Scenario Crossroads", "Version 17"):
        assert text in header, text
    assert 'data-version="17"' in body(response)
    assert reverse("campaign", args=[world.campaign.pk]) in body(response)


def test_every_structure_shows_damage_fire_collapse_and_floors(client, world):
    response = battle_page(client, world)
    house = text_of(response, f"structure-{world.house.pk}")
    assert "Brick House" in house and "Damaged 25%" in house and "Damage 5/20 (25%)" in house
    assert "Ground floor empty" in house
    assert "Floor 1 Rifle Section (side A)" in house

    barn = text_of(response, f"structure-{world.barn.pk}")
    assert "Burning 12.5 sq in" in barn and "since turn 2" in barn and "Damaged 50%" in barn

    rubble = text_of(response, f"structure-{world.rubble.pk}")
    assert "Collapsed – rubble" in rubble and "Impassable" in rubble and "Intact" not in rubble

    cards = page(response).find("structures").find_all("li", cls="structure-card")
    assert len(cards) == 4
    assert 'href="{}"'.format(reverse("structure", args=[world.house.pk])) in body(response)


def test_bunker_crew_state(client, world):
    bunker = text_of(battle_page(client, world), f"structure-{world.bunker.pk}")
    assert "Crew pinned (2)" in bunker
    assert "Crew 9/12 men" in bunker and "Pins 2 of 3" in bunker and "Routed no" in bunker
    assert "Penetrating hits 1" in bunker and "Weapons destroyed 45mm" in bunker

    Structure.objects.filter(pk=world.bunker.pk).update(crew_routed=True, crew_pins=3, weapons_destroyed=[0, 1])
    bunker = text_of(battle_page(client, world), f"structure-{world.bunker.pk}")
    assert "Crew routed" in bunker and "Routed yes" in bunker and "Weapons destroyed 45mm, Maxim" in bunker


def test_a_destroyed_structure_is_not_edged_as_intact(client, world):
    """Found on a phone: a bunker knocked out by a main gun read "Destroyed" in red on a card edged in the
    green that the map's key calls intact, in the battle's structure list and on the campaign's ground."""
    Structure.objects.filter(pk=world.bunker.pk).update(destroyed=True, crew_left=0)
    Structure.objects.filter(pk=world.campaign_structure.pk).update(destroyed=True)
    cards = {card.attrs["id"]: card.attrs["class"].split()
             for card in page(battle_page(client, world)).find("structures").find_all("li", cls="structure-card")}
    assert cards[f"structure-{world.bunker.pk}"] == ["structure-card", "is-destroyed"]
    assert cards[f"structure-{world.house.pk}"] == ["structure-card", "is-damaged"]
    ground = page(signed_in(client, world.player).get(reverse("campaign", args=[world.campaign.pk])))
    assert ground.find(f"ground-{world.campaign_structure.pk}").attrs["class"].split() == ["structure-card", "is-destroyed"]


def test_both_armies_with_models_down_and_pins(client, world):
    armies = text_of(battle_page(client, world), "armies")
    assert "Red Guards" in armies and "Grey Column" in armies
    assert "Played by alice" in armies and "Played by bob" in armies
    assert "Rifle Section 8/10 models" in armies and "Pinned (1)" in armies
    assert "in Brick House, floor 1" in armies
    assert "Panzer IV 1/1 models" in armies and "Down" in armies and "at 30″, 20″" in armies
    assert armies.index("Red Guards") < armies.index("Grey Column")


def test_a_disposable_heroes_unit_with_three_pins_reads_routed(client, world):
    """DH-6: a unit's third pin routs it. The badge read "Pinned (3)", which a club takes for pinned and
    still holding; in Bolt Action pins do not rout, and three stay "Pinned (3)"."""
    from apps.armies.models import Unit

    Unit.objects.filter(army__battle=world.battle, name="Rifle Section").update(pins=3)
    armies = text_of(battle_page(client, world), "armies")
    assert "Rifle Section 8/10 models" in armies and "Routed (3 pins)" in armies and "Pinned" not in armies
    type(world.battle).objects.filter(pk=world.battle.pk).update(ruleset="ba")
    armies = text_of(battle_page(client, world), "armies")
    assert "Pinned (3)" in armies and "Routed" not in armies


def test_log_newest_first_with_dice_who_rolled_and_summary(client, world):
    response = battle_page(client, world)
    log = page(response).find("battle-log")
    entries = log.find_all("li", cls="log-entry")
    assert [e.attrs["id"] for e in entries] == ["log-3", "log-2", "log-1"]
    assert [t.text() for t in log.find_all("li", cls="log-turn")] == ["Turn 3", "Turn 1"]

    attack = text_of(response, "log-2")
    assert "#2 alice side A Attack" in attack
    assert "45mm AT gun hits Brick House: 5 damage points." in attack
    assert "To hit 7 ≤ 8 hits d10, entered by alice" in attack
    assert "Damage 4 1 → 5 sum d6 ×2, rolled by the server" in attack
    faces = [(d.attrs["class"], d.text()) for d in page(response).find("log-2").find_all("span", cls="die")]
    assert faces == [("die die-d10", "7"), ("die die-d6", "4"), ("die die-d6", "1")]

    fire = text_of(response, "log-3")
    assert "#3 Game" in fire and "fire chance" in fire.lower() and "rolled by the server" in fire
    assert "3 entries, newest first." in text_of(response, "battle-log")


def test_an_entrys_time_is_the_clubs_and_a_players_name_is_text(client, world, settings):
    """The log draws its dice and times in Python (views.rolls_html): still in the host's time zone,
    and a player's name, however odd, is text, never markup."""
    settings.TIME_ZONE = "America/New_York"
    LogEntry.objects.filter(battle=world.battle).update(actor_name='<b>"al"</b>')
    entry = LogEntry.objects.get(battle=world.battle, seq=2)
    moment = timezone.make_aware(timezone.datetime(2031, 1, 15, 23, 30), timezone.UTC)
    LogEntry.objects.filter(pk=entry.pk).update(created_at=moment)
    html = body(battle_page(client, world))
    assert '<time class="muted" datetime="2031-01-15T18:30:00-05:00">18:30</time>' in html
    assert "entered by &lt;b&gt;&quot;al&quot;&lt;/b&gt;" in html and '<b>"al"</b>' not in html
    assert 'aria-label="1d10: 7"' in html


def test_dice_of_any_shape_in_an_imported_log_draw_as_text(client, world):
    """A campaign file's log is free-form JSON: its dice may hold markup or the wrong kinds of value.
    The page still opens, and draws them as text."""
    LogEntry.objects.filter(battle=world.battle, seq=2).update(dice=[
        {"sides": '"><script>alert(1)</script>', "count": "2", "faces": "66", "purpose": 7, "source": "<b>x</b>"},
        "not a roll",
        {"count": 3, "faces": [1, "<i>2</i>"], "sides": 6, "value": "<u>9</u>", "target": "<s>hit</s>",
         "source": "server", "purpose": "damage"},
    ])
    response = battle_page(client, world)
    html = body(response)
    assert "<script>alert(1)</script>" not in html and "&lt;script&gt;" in html
    assert "<i>2</i>" not in html and "<u>9</u>" not in html and "<s>hit</s>" not in html and "<b>x</b>" not in html
    faces = [d.text() for d in page(response).find("log-2").find_all("span", cls="die")]
    assert faces == ["1", "<i>2</i>"]
    assert "Damage 1 <i>2</i> → <u>9</u> <s>hit</s> d6 ×3, rolled by the server" in text_of(response, "log-2")


def test_undone_entries_are_marked(client, world):
    attack = LogEntry.objects.get(battle=world.battle, seq=2)
    undo = append_entry(world.battle, action="undo", actor=world.organiser, summary="Undo #2", undoes=attack)
    LogEntry.objects.filter(pk=attack.pk).update(undone=True)
    response = battle_page(client, world)
    assert "Undone by #4" in text_of(response, "log-2")
    assert "is-undone" in page(response).find("log-2").attrs["class"]
    assert "Undoes #2" in text_of(response, f"log-{undo.seq}")


# What the log_entry partial drew before views.entry_html drew entries in Python.
ENTRY_TEMPLATE = """
<li id="log-{{ entry.seq }}" class="log-entry{% if entry.undone %} is-undone{% endif %}" data-seq="{{ entry.seq }}"\
{% if entry_oob %} hx-swap-oob="true"{% endif %}>
  <header class="log-entry-header">
    <span class="log-seq">#{{ entry.seq }}</span>
    <span class="log-actor">{{ entry.actor_name|default:"Game" }}{% if entry.side %} <span class="muted">side \
{{ entry.side }}</span>{% endif %}</span>
    <span class="tag">{{ entry.action_label|default:entry.action }}</span>
    <time class="muted" datetime="{{ entry.time_iso }}">{{ entry.time }}</time>
  </header>
  <p class="log-summary">{{ entry.summary }}</p>
  {{ entry.rolls }}
  {% if entry.undone %}<p class="log-note state-routed">Undone{% if entry.undone_by %} by \
#{{ entry.undone_by.seq }}{% endif %}</p>{% endif %}
  {% if entry.undoes_id %}<p class="log-note">Undoes #{{ entry.undoes.seq }}</p>{% endif %}
</li>
"""


def test_a_log_entry_is_drawn_to_the_character_of_its_template(world):
    """views.entry_html draws each entry (an answer at a busy table carries a dozen) as the partial did:
    every word escaped, undone and undoing entries marked, out of band when an answer replaces one."""
    attack = LogEntry.objects.get(battle=world.battle, seq=2)
    append_entry(world.battle, action="undo", actor=world.organiser, summary='Undid #2: <b>"x"</b> & co', undoes=attack)
    LogEntry.objects.filter(pk=attack.pk).update(undone=True, actor_name="<i>al</i>", side="B")
    LogEntry.objects.filter(battle=world.battle, seq=1).update(actor_name="", summary="<script>'1'</script>")
    entries = views.mark_turns(snap.log_entries(world.battle.pk))
    assert {e.seq for e in entries if e.undone} == {2} and len(entries) == 4
    template = Template(ENTRY_TEMPLATE)
    for entry in entries:
        for oob in (False, True):
            drawn = views.mark_turns([entry], oob=oob)[0].html
            assert drawn == template.render(Context({"entry": entry, "entry_oob": oob}))
    assert "&lt;i&gt;al&lt;/i&gt;" in entries[-2].html and "<script>" not in entries[-1].html

def test_log_shows_only_the_latest_entries(client, world):
    for n in range(4, 61):
        append_entry(world.battle, action="note", summary=f"Entry number {n}.")
    response = battle_page(client, world)
    log = page(response).find("battle-log")
    ids = [e.attrs["id"] for e in log.find_all("li", cls="log-entry")]
    assert len(ids) == LOG_PAGE_SIZE == 50
    assert ids[0] == "log-60" and ids[-1] == "log-11"
    assert "Latest 50 of 60 entries" in log.text()


def test_a_battle_without_anything_yet(client, world):
    from apps.battles.models import Battle

    empty = Battle.objects.create(club=world.club, name="Empty Field")
    response = signed_in(client, world.player).get(reverse("battle", args=[empty.pk]))
    assert response.status_code == 200
    html = body(response)
    assert "No structures on this table." in html and "Nothing has happened yet." in html
    assert "No armies yet." in html and "Setting up" in html


def test_another_club_and_anonymous(client, world):
    url = reverse("battle", args=[world.battle.pk])
    assert client.get(url).status_code == 302
    assert signed_in(client, world.outsider).get(url).status_code == 404


# ---------------------------------------------------------------------------------- partials

def test_partials_render_on_their_own(world):
    """Later HTMX responses render one panel: each partial stands alone, rooted at its swap id."""
    context = battle_context(world.battle)
    for name, root in [("header", 'id="battle-header"'), ("structures", 'id="structures"'),
                       ("armies", 'id="armies"'), ("log", 'id="battle-log"')]:
        html = render_to_string(f"battles/battle.html#{name}", context).strip()
        assert html.startswith("<") and root in html.split(">", 1)[0], name
        assert "<html" not in html and "<body" not in html, name

    structure = next(s for s in context["structures"] if s.pk == world.bunker.pk)
    html = render_to_string("battles/battle.html#structure", {**context, "structure": structure}).strip()
    assert html.startswith(f'<li id="structure-{world.bunker.pk}"') and "Crew pinned (2)" in html

    entry = context["log"][0]
    html = render_to_string("battles/battle.html#log_entry", {"battle": world.battle, "entry": entry}).strip()
    assert html.startswith('<li id="log-3"') and "The barn catches fire" in html


# ---------------------------------------------------------------------------------- query count

def grow(w, structures=30, entries=120):
    """Many more structures (with floors, openings, occupants and a sheet), units and log entries."""
    army = Army.objects.get(battle=w.battle, side="B")
    for n in range(structures):
        structure = Structure.objects.create(
            battle=w.battle, name=f"Block {n}", wall_material=w.brick, roof_material=w.slate, damage_max=10,
            damage_taken=n % 10, fire_size=("3.5" if n % 3 == 0 else None), fire_started_turn=1,
            kind=StructureKind.BUNKER if n % 5 == 0 else StructureKind.BUILDING,
            sheet=w.sheet if n % 5 == 0 else None, crew_men=4, weapons_destroyed=[1] if n % 5 == 0 else [],
        )
        structure.connections.add(w.house)
        for level in range(3):
            floor = Floor.objects.create(structure=structure, level=level)
            Opening.objects.create(floor=floor, side="left", kind="window", count=2)
            if level == 1:
                Unit.objects.create(army=army, name=f"Squad {n}", models_start=6, models_left=5, floor=floor)
    for n in range(entries):
        append_entry(
            w.battle, action="attack", actor=w.player_b, side="B", summary=f"Shot {n}.",
            dice=[{"purpose": "to hit", "sides": 6, "count": 2, "faces": [3, 5], "value": 8, "source": "server"}],
        )


def queries_for(client, url):
    with CaptureQueriesContext(connection) as captured:
        response = client.get(url)
    assert response.status_code == 200
    return len(captured.captured_queries), response


def test_battle_page_query_count_does_not_grow(client, world, capsys):
    signed_in(client, world.player)
    url = reverse("battle", args=[world.battle.pk])
    client.get(url)  # the first request after sign-in may touch the session differently
    small, _ = queries_for(client, url)
    grow(world)
    large, response = queries_for(client, url)
    assert len(page(response).find("structures").find_all("li", cls="structure-card")) == 34
    assert large == small, f"{small} queries for 4 structures and 3 entries, {large} for 34 and 123"
    assert small <= 12
    with capsys.disabled():
        print(f"\n  battle page: {small} queries (4 structures, 3 entries) and {large} (34 structures, 123 entries)")
