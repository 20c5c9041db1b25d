"""The battle screen through plain links and forms (no HX-Request header): what a phone that blocks
scripts, or whose script failed to load, sends. Each POST answers with a redirect to the page, or the
page again with the message beside the field; the choices made so far and the card open stay."""

import uuid
from urllib.parse import parse_qs, urlsplit

from apps.armies.models import Unit
from apps.battles.models import Battle, BattleStatus, LogEntry
from tests.battles.test_views import lg, sid, signed, uid, url, w  # noqa: F401 - fixtures
from tests.campaigns.test_pages import fast_passwords, page, text_of  # noqa: F401 - autouse: cheap password hashing

HTMX = {"HTTP_HX_REQUEST": "true"}


def damage_roll(w, **extra):
    """The damage roll for hits on the grenadiers, as its follow-up link opens it: a unit aimed at, no
    structure of the action's own."""
    data = {"action": "ba_damage", "target": uid(w.squad), "hits": "2", "source": "he", "structure": sid(w.house),
            "attacker": uid(w.gun)}
    data.update(extra)
    return data


def chosen(node, select_id):
    return [o.attrs["value"] for o in node.find(select_id).find_all("option") if "selected" in o.attrs]


def test_a_tap_on_another_structure_keeps_the_unit_a_damage_roll_is_aimed_at(client, w):
    """With JavaScript a tap only opens the card when the action aims at no structure (battle_card);
    the plain link dropped the unit aimed at, to be chosen again after every look at a card."""
    barn = w.structure("Barn", floors=1, x=50, y=30)
    signed(client, w.alice)
    html = page(client.get(url(w, "battle"), damage_roll(w)))
    href = html.find(f"map-{sid(barn)}").attrs["href"]
    assert parse_qs(urlsplit(href).query)["target"] == [uid(w.squad), sid(barn)]
    tapped = client.get(href)
    assert text_of(tapped, "card-title") == "Barn"
    assert chosen(page(tapped), "id_target") == [uid(w.squad)]
    assert chosen(page(tapped), "id_action") == ["ba_damage"]


def test_a_tap_for_an_action_aimed_at_a_structure_still_clears_the_unit_inside_the_old_one(client, w):
    barn = w.structure("Barn", floors=1, x=50, y=30)
    signed(client, w.alice)
    html = page(client.get(url(w, "battle"), {"action": "ba_he", "attacker": uid(w.gun), "weapon": f"w{w.he.pk}",
                                              "structure": sid(w.house), "target": uid(w.squad)}))
    href = html.find(f"map-{sid(barn)}").attrs["href"]
    assert parse_qs(urlsplit(href).query)["target"] == [sid(barn)]


def test_the_form_sends_the_card_open_beside_it(client, w):
    """The card open is #card-target, outside the form, which only htmx adds to what is sent; a
    plain form carries it itself (inside <noscript>: with JavaScript htmx sends the live one)."""
    signed(client, w.alice)
    form = page(client.get(url(w, "battle"), damage_roll(w))).find("attack-form")
    cards = [i.attrs.get("value") for i in form.find_all("input") if i.attrs.get("name") == "card"]
    assert cards == [sid(w.house)]
    # An htmx answer holds no such input: parsed by htmx, a noscript's input is a real one.
    answer = page(client.get(url(w, "battle_form"), damage_roll(w), **HTMX)).find("attack-form")
    assert not [i for i in answer.find_all("input") if i.attrs.get("name") == "card"]


def test_a_resolved_damage_roll_opens_the_page_again_with_its_card(client, w):
    """A damage roll's form has no structure: the redirect named none, and the page came back with no
    card where the HTMX answer keeps it (`card`)."""
    signed(client, w.alice)
    # What the form holds: it has no structure field, so none is sent.
    sent = {**damage_roll(w, structure=""), "card": sid(w.house), "dice_mode": "player", "dice_0": "6", "dice_1": "1",
            "client_token": str(uuid.uuid4())}
    response = client.post(url(w, "battle_resolve"), sent)
    assert response.status_code == 303
    assert LogEntry.objects.filter(battle=w.battle, action="ba_damage").exists()
    assert parse_qs(urlsplit(response["Location"]).query)["target"] == [sid(w.house)]
    again = client.get(response["Location"])
    assert text_of(again, "card-title") == "Brick house"
    assert chosen(page(again), "id_action") == ["ba_damage"]


def test_a_resolve_from_another_card_keeps_both_the_card_and_the_structure_acted_on(client, w):
    barn = w.structure("Barn", floors=1, x=50, y=30)
    signed(client, w.alice)
    sent = {"action": "ba_he", "attacker": uid(w.gun), "weapon": f"w{w.he.pk}", "structure": sid(w.house),
            "target": uid(w.squad), "hit": "no", "went_down": "no", "pins": "1", "dice_mode": "server",
            "card": sid(barn), "client_token": str(uuid.uuid4())}
    response = client.post(url(w, "battle_resolve"), sent)
    assert response.status_code == 303
    again = page(client.get(response["Location"]))
    assert again.find("card-title").text() == "Barn"
    assert chosen(again, "id_structure") == [sid(w.house)]


def test_update_the_form_and_a_refusal_keep_the_card_open(client, w):
    signed(client, w.alice)
    preview = client.post(url(w, "battle_resolve"), {**damage_roll(w), "card": sid(w.house), "preview": "1"})
    assert preview.status_code == 303
    assert text_of(client.get(preview["Location"]), "card-title") == "Brick house"
    # A die out of range: the page again, the message beside the die, the card still open, nothing logged.
    refused = client.post(url(w, "battle_resolve"), {
        **damage_roll(w, structure=""), "card": sid(w.house), "dice_mode": "player", "dice_0": "9", "dice_1": "1",
        "client_token": str(uuid.uuid4())})
    assert refused.status_code == 422
    assert "9 is not a d6 result" in text_of(refused, "error-dice_0")
    assert text_of(refused, "card-title") == "Brick house"
    assert not LogEntry.objects.filter(battle=w.battle, action="ba_damage").exists()


def test_a_turn_buttons_refused_dice_show_beside_their_field(client, lg):
    """The HTMX answer says what is wrong in the turns panel; the plain redirect opened the page at the
    dice field with the message at the top of the page, screens above it on a phone."""
    Battle.objects.filter(pk=lg.battle.pk).update(status=BattleStatus.IN_PROGRESS, collapse_check=True,
                                                  damage_variant=3, upkeep_turn=0)
    lg.structure("House", floors=1, damage_max=10, damage_taken=5)
    signed(client, lg.alice)
    sent = client.post(url(lg, "battle_turn"), {"action": "upkeep", "dice_mode": "player", "dice": "three",
                                                "client_token": str(uuid.uuid4())})
    assert sent.status_code == 303 and sent["Location"].endswith("#dice-upkeep")
    again = client.get(sent["Location"])
    turns = page(again).find("turns")
    assert "Enter the dice as numbers, e.g. 3 7 (not 'three')" in turns.find("dice-error-upkeep").text()
    assert turns.find("dice-upkeep").attrs["aria-invalid"] == "true"
    assert turns.find("dice-upkeep").attrs["value"] == "three"
    assert page(again).text().count("not 'three'") == 1  # not at the top of the page as well
    assert not LogEntry.objects.filter(battle=lg.battle).exists()
    # Shown once: the next page is the battle as usual.
    assert "not 'three'" not in page(client.get(url(lg, "battle"))).text()


def test_a_refused_undo_says_why_in_the_turns_panel(client, w):
    signed(client, w.alice)
    client.post(url(w, "battle_resolve"), {"action": "move", "unit": uid(w.rifles), "x": "11", "y": "5",
                                           "client_token": str(uuid.uuid4())}, **HTMX)
    newest = LogEntry.objects.filter(battle=w.battle).order_by("-seq").first()
    signed(client, w.bob)
    sent = client.post(url(w, "battle_undo"), {"confirmed": "1", "seq": newest.seq})
    assert sent.status_code == 303
    turns = page(client.get(sent["Location"])).find("turns")
    alerts = [p.text() for p in turns.find_all("p", cls="form-errors")]
    assert alerts and "may undo" in alerts[0], turns.text()
    assert not LogEntry.objects.filter(battle=w.battle, action="undo").exists()


def test_the_page_asking_to_confirm_an_undo_or_end_turn_keeps_the_card_open(client, w):
    """"Undo" and "End turn" without JavaScript open a page that asks first: it closed the card, and so
    did the answer to "Yes" (its form sends the card it holds) and "No"."""
    signed(client, w.alice)
    client.post(url(w, "battle_resolve"), {"action": "move", "unit": uid(w.rifles), "x": "11", "y": "5",
                                           "client_token": str(uuid.uuid4())}, **HTMX)
    newest = LogEntry.objects.filter(battle=w.battle).order_by("-seq").first()
    for view, sent in (("battle_undo", {"seq": newest.seq}), ("battle_turn", {"action": "end_turn"})):
        asked = client.post(url(w, view), {**sent, "target": sid(w.house), "client_token": str(uuid.uuid4())})
        assert asked.status_code == 303
        question = client.get(asked["Location"])
        assert text_of(question, "card-title") == "Brick house"
        form = page(question).find_all("form", cls="confirm-form")[0]
        assert [i.attrs["value"] for i in form.find_all("input") if i.attrs.get("name") == "target"] == [sid(w.house)]
        no = form.find_all("a")[0].attrs["href"]
        assert text_of(client.get(no), "card-title") == "Brick house"
    assert not LogEntry.objects.filter(battle=w.battle, action__in=("undo", "end_turn")).exists()


def test_a_turn_button_or_an_undo_keeps_the_attack_forms_choices(client, w):
    """With JavaScript the attack form stays as it was under a turn's or an undo's answer; the plain
    redirect opened the page with the form back on its first action, everything chosen gone."""
    signed(client, w.alice)
    choices = {"action": "ba_he", "attacker": uid(w.gun), "weapon": f"w{w.he.pk}", "dice_mode": "player"}
    html = page(client.get(url(w, "battle"), {**choices, "target": sid(w.house)}))

    def sent_by(form):
        return {i.attrs["name"]: i.attrs.get("value", "") for i in form.find_all("input")}

    def kept(response):
        form = page(response).find("attack-form")
        assert chosen(form, "id_action") == ["ba_he"] and chosen(form, "id_attacker") == [uid(w.gun)]
        assert chosen(form, "id_weapon") == [f"w{w.he.pk}"] and chosen(form, "id_structure") == [sid(w.house)]
        assert "checked" in form.find("id_dice_mode_1").attrs  # "I rolled"
        return page(response)

    upkeep = next(f for f in html.find("turns").find_all("form") if sent_by(f).get("action") == "upkeep")
    done = client.post(url(w, "battle_turn"), sent_by(upkeep))
    assert done.status_code == 303
    again = kept(client.get(done["Location"]))
    assert LogEntry.objects.filter(battle=w.battle, action="upkeep").exists()
    # Undo asks first on a page of its own: the choices go through the question and its "Yes".
    undo = again.find_all("form", cls="undo-form")[0]
    asked = client.post(url(w, "battle_undo"), sent_by(undo))
    question = kept(client.get(asked["Location"]))
    yes = question.find_all("form", cls="confirm-form")[0]
    kept(client.get(yes.find_all("a")[0].attrs["href"]))  # "No, keep it"
    assert "confirm" not in sent_by(yes).get("chosen", "") and "seq" not in sent_by(yes).get("chosen", "")
    undone = client.post(url(w, "battle_undo"), sent_by(yes))
    kept(client.get(undone["Location"]))
    assert LogEntry.objects.filter(battle=w.battle, action="undo").exists()


def test_a_tap_keeps_i_rolled_but_not_the_dice_typed(client, w):
    """`dice_mode` was dropped with the dice (dice_0, dice_1…) by its prefix: a tap on a building put
    the form back on "Roll for me", and the next Resolve had the server roll what the player meant to."""
    barn = w.structure("Barn", floors=1, x=50, y=30)
    signed(client, w.alice)
    html = page(client.get(url(w, "battle"), {"action": "ba_he", "attacker": uid(w.gun), "dice_mode": "player",
                                              "dice_0": "4", "target": sid(w.house)}))
    query = parse_qs(urlsplit(html.find(f"map-{sid(barn)}").attrs["href"]).query)
    assert query["dice_mode"] == ["player"] and "dice_0" not in query
    tapped = page(client.get(html.find(f"map-{sid(barn)}").attrs["href"]))
    assert "checked" in tapped.find("id_dice_mode_1").attrs


def test_a_tap_aims_at_the_one_enemy_inside_as_with_javascript(client, w):
    """battle_card aims the form at the one enemy unit in the structure tapped; the plain link left the
    unit aimed at on "none"."""
    signed(client, w.alice)
    html = page(client.get(url(w, "battle"), {"action": "ba_he", "attacker": uid(w.gun), "weapon": f"w{w.he.pk}"}))
    tapped = page(client.get(html.find(f"map-{sid(w.house)}").attrs["href"]))
    assert chosen(tapped, "id_structure") == [sid(w.house)]
    assert chosen(tapped, "id_target") == [uid(w.squad)]
    # The same page opened by the form's own address (a reload, "Update the form") keeps the player's "none".
    reloaded = page(client.get(url(w, "battle"), {"action": "ba_he", "attacker": uid(w.gun), "structure": sid(w.house),
                                                  "target": sid(w.house)}))
    assert chosen(reloaded, "id_target") in ([], [""])


def test_a_refused_activation_keeps_the_piece_chosen(client, lg):
    """"Activate" refused (Alpha two is in no fireteam): the panel came back with the select on its first
    piece, without JavaScript and with it, and a second press activated Alpha one instead."""
    Battle.objects.filter(pk=lg.battle.pk).update(upkeep_turn=1, fireteam_initiative=True,
                                                  status=BattleStatus.IN_PROGRESS,
                                                  sequence={"initiative": "A", "rolled": True})
    Unit.objects.filter(pk=lg.a1.pk).update(fireteam="1")
    signed(client, lg.alice)
    sent = {"action": "lg_activate", "unit": uid(lg.a2), "fireteam": "yes", "client_token": str(uuid.uuid4())}
    refused = client.post(url(lg, "battle_turn"), sent)
    assert refused.status_code == 303
    again = client.get(refused["Location"])
    assert "Alpha two is not in a fireteam" in text_of(again, "turns")
    assert chosen(page(again), "activate-unit") == [uid(lg.a2)]
    answer = client.post(url(lg, "battle_turn"), {**sent, "client_token": str(uuid.uuid4())}, **HTMX)
    assert "Alpha two is not in a fireteam" in text_of(answer, "turns")
    assert chosen(page(answer), "activate-unit") == [uid(lg.a2)]
    assert not Battle.objects.get(pk=lg.battle.pk).sequence.get("activated")
