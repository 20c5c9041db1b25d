"""The session controls through the test client: set up the next session, finish a battle from the
battle page, reopen the last session, the campaign's settings. Each works as a plain form (303 and a
message) and over HTMX; every refusal says why and changes nothing (checked in the database)."""

import pytest
from django.urls import reverse

from apps.armies.models import Unit
from apps.battles.models import Battle, BattleStatus, LogEntry
from apps.campaigns import services
from apps.campaigns.models import Campaign
from apps.structures.models import Structure
from tests.campaigns.test_campaign_page import (HTMX, campaign_url, demo, demo_data, finish_first_session,  # noqa: F401
                                                signed)
from tests.campaigns.test_pages import body, fast_passwords, text_of  # noqa: F401
from tests.campaigns.test_pages import page as tree


def state(demo):
    """Everything a session control could change."""
    campaign = Campaign.objects.get(pk=demo.campaign.pk)
    return (
        (campaign.fires_persist, campaign.single_open_battle, campaign.name),
        list(Battle.objects.filter(campaign=campaign).order_by("pk")
             .values("pk", "status", "winner", "result", "finished_at", "version", "campaign_before")),
        LogEntry.objects.filter(battle__campaign=campaign).count(),
        list(Structure.objects.filter(campaign=campaign).order_by("pk").values()),
        list(Unit.objects.filter(army__campaign=campaign).order_by("pk").values()),
    )


def messages_of(response):
    return [str(m) for m in response.wsgi_request._messages]


def start(client, demo, htmx=False, **data):
    return client.post(reverse("campaign_session_start", args=[demo.campaign.pk]),
                       {"name": "", "weather": "clear", **data}, **(HTMX if htmx else {}))


def finish(client, battle, htmx=False, **data):
    """Finish as answered: without JavaScript the page asks first (test_finish_without_javascript_asks_first)."""
    return client.post(reverse("battle_finish", args=[battle.pk]), {"confirmed": "1", **data},
                       **(HTMX if htmx else {}))


def reopen(client, demo, htmx=False, **data):
    return client.post(reverse("campaign_session_reopen", args=[demo.campaign.pk]), data, **(HTMX if htmx else {}))


# ---------------------------------------------------------------------------------- start

def test_organiser_sets_up_the_next_session_and_lands_on_its_battle(client, demo):
    finish_first_session(demo)
    response = start(signed(client, demo.organiser), demo, name="Night raid", weather="rain")
    two = Battle.objects.get(campaign=demo.campaign, session_number=2)
    assert response.status_code == 303 and response["Location"] == reverse("battle", args=[two.pk])
    assert (two.name, two.status, two.weather, two.turn) == ("Night raid", BattleStatus.SETUP, "rain", 1)
    assert two.structures.count() == demo.campaign.structures.count()
    html = body(client.get(response["Location"]))
    assert "Session 2 is set up" in html and "Start battle" in html


def test_htmx_start_sends_the_browser_to_the_new_battle(client, demo):
    finish_first_session(demo)
    response = start(signed(client, demo.organiser), demo, htmx=True)
    two = Battle.objects.get(campaign=demo.campaign, session_number=2)
    assert response.status_code == 200 and response["HX-Redirect"] == reverse("battle", args=[two.pk])
    assert two.name == "Operation Crossroads — session 2"


@pytest.mark.parametrize("htmx", [False, True])
def test_a_second_open_battle_is_refused_when_the_campaign_forbids_it(client, demo, htmx):
    before = state(demo)
    response = start(signed(client, demo.organiser), demo, htmx=htmx)
    problem = "Village crossroads — session 1 is still open: finish it before starting the next session"
    if htmx:
        assert response.status_code == 200 and problem in text_of(response, "sessions")
    else:
        assert response.status_code == 303 and response["Location"] == campaign_url(demo) + "#sessions"
        assert problem in body(client.get(response["Location"]))
    assert state(demo) == before


def test_a_second_open_battle_is_allowed_when_the_campaign_allows_it(client, demo):
    Campaign.objects.filter(pk=demo.campaign.pk).update(single_open_battle=False)
    response = start(signed(client, demo.organiser), demo)
    assert response.status_code == 303
    assert Battle.objects.filter(campaign=demo.campaign).exclude(status=BattleStatus.FINISHED).count() == 2


@pytest.mark.parametrize("single_open_battle", [True, False])
@pytest.mark.parametrize("htmx", [False, True])
def test_the_same_start_form_sent_twice_sets_up_one_session(client, demo, single_open_battle, htmx):
    """A double tap without JavaScript, or the form sent again from another tab: the page offered
    session 2, and the second send lands on session 2 instead of setting up a third (or being
    refused as if someone else's session were in the way)."""
    from tests.structures.test_sheet_editor import form_data

    finish_first_session(demo)
    Campaign.objects.filter(pk=demo.campaign.pk).update(single_open_battle=single_open_battle)
    data = form_data(signed(client, demo.organiser).get(campaign_url(demo)), "start-session")
    assert data["number"] == "2"
    first = client.post(reverse("campaign_session_start", args=[demo.campaign.pk]), data)
    again = client.post(reverse("campaign_session_start", args=[demo.campaign.pk]), data, **(HTMX if htmx else {}))
    two = Battle.objects.get(campaign=demo.campaign, session_number=2)
    assert first.status_code == 303 and first["Location"] == reverse("battle", args=[two.pk])
    if htmx:
        assert again.status_code == 200 and again["HX-Redirect"] == reverse("battle", args=[two.pk])
    else:
        assert again.status_code == 303 and again["Location"] == reverse("battle", args=[two.pk])
    assert messages_of(again)[-1] == ("Session 2 is already set up (the form was sent twice, or from another tab): "
                                      "here it is.")
    assert Battle.objects.filter(campaign=demo.campaign).count() == 2


def test_bad_weather_is_refused_next_to_the_form(client, demo):
    finish_first_session(demo)
    before = state(demo)
    response = start(signed(client, demo.organiser), demo, htmx=True, weather="hail", name="x" * 121)
    assert response.status_code == 200
    sessions = text_of(response, "sessions")
    assert "Select a valid choice. hail is not one of the available choices." in sessions
    assert "at most 120 characters" in sessions
    assert state(demo) == before


@pytest.mark.parametrize("who", ["alice", "bob", "dora"])
def test_members_who_do_not_organise_are_refused_every_control(client, demo, who):
    finish_first_session(demo)
    before = state(demo)
    signed(client, getattr(demo, who))
    for response in (start(client, demo), reopen(client, demo, confirm="on"),
                     finish(client, demo.session1, winner="B"),
                     client.post(reverse("campaign_settings", args=[demo.campaign.pk]), {"fires_persist": "on"})):
        assert response.status_code == 403
        assert f"Only the organisers of {demo.campaign.club.name} " in body(response)
        assert "Nothing was changed." in body(response)
    assert state(demo) == before


def test_a_refused_htmx_tap_gets_the_reason_as_plain_text(client, demo):
    """htmx swaps no refusal: the page's connection notice shows a plain answer's words, which of a
    whole refusal page it could not."""
    finish_first_session(demo)
    before = state(demo)
    response = start(signed(client, demo.alice), demo, htmx=True)
    assert response.status_code == 403 and response["Content-Type"].startswith("text/plain")
    assert body(response).startswith(f"Only the organisers of {demo.campaign.club.name} ")
    assert "<" not in body(response)
    assert state(demo) == before


def test_another_clubs_organiser_finds_nothing(client, demo):
    before = state(demo)
    signed(client, demo.olga)
    for response in (start(client, demo), reopen(client, demo, confirm="on"),
                     finish(client, demo.session1, winner="A"),
                     client.post(reverse("campaign_settings", args=[demo.campaign.pk]), {"fires_persist": "on"}),
                     client.get(reverse("campaign_export", args=[demo.campaign.pk]))):
        assert response.status_code == 404
    assert state(demo) == before


def test_controls_only_answer_posts_and_a_get_goes_back_to_their_page(client, demo):
    """A control's address opened again (from history, or reloaded after a refusal page without JavaScript)
    changes nothing and lands on the page its form was on, not on a bare 405."""
    signed(client, demo.organiser)
    before = state(demo)
    campaign, battle = reverse("campaign", args=[demo.campaign.pk]), reverse("battle", args=[demo.session1.pk])
    for name, pk, page in (("campaign_session_start", demo.campaign.pk, campaign),
                           ("campaign_session_reopen", demo.campaign.pk, campaign),
                           ("campaign_session_discard", demo.campaign.pk, campaign),
                           ("campaign_settings", demo.campaign.pk, campaign),
                           ("campaign_commander", demo.campaign.pk, campaign),
                           ("battle_finish", demo.session1.pk, battle),
                           ("battle_commander", demo.session1.pk, battle)):
        response = client.get(reverse(name, args=[pk]))
        assert (response.status_code, response["Location"]) == (303, page), name
    assert state(demo) == before


def test_signed_out_visitors_are_sent_to_sign_in(client, demo):
    before = state(demo)
    response = start(client, demo)
    assert response.status_code == 302 and "/accounts/login/" in response["Location"]
    assert state(demo) == before


# ---------------------------------------------------------------------------------- finish

def test_the_battle_page_offers_organisers_the_finish_control(client, demo):
    url = reverse("battle", args=[demo.session1.pk])
    html = body(signed(client, demo.organiser).get(url))
    assert 'id="finish-battle"' in html and reverse("battle_finish", args=[demo.session1.pk]) in html
    assert 'id="finish-battle"' not in body(signed(client, demo.alice).get(url))


@pytest.mark.parametrize("htmx", [False, True])
def test_organiser_finishes_the_battle_and_the_campaign_takes_its_end_state(client, demo, htmx):
    barn = Structure.objects.get(battle=demo.session1, name="Thatched barn")
    response = finish(signed(client, demo.organiser), demo.session1, htmx=htmx, winner="B",
                      result="The barn burned", extra="ignored")
    battle = Battle.objects.get(pk=demo.session1.pk)
    assert (battle.status, battle.winner, battle.result) == (BattleStatus.FINISHED, "B", "The barn burned")
    assert Structure.objects.get(pk=barn.origin_id).fire_size == barn.fire_size
    if htmx:
        assert response["HX-Redirect"] == campaign_url(demo).split("#")[0]
    else:
        assert response.status_code == 303 and response["Location"] == reverse("campaign", args=[demo.campaign.pk])
    html = body(client.get(reverse("campaign", args=[demo.campaign.pk])))
    assert "its end state is now the campaign" in html and "Side B won: The barn burned" in html
    assert 'id="finish-battle"' not in body(client.get(reverse("battle", args=[battle.pk])))


@pytest.mark.parametrize("data", [{}, {"winner": "C"}, {"winner": "A", "result": "x" * 301}])
def test_a_finish_without_a_proper_result_changes_nothing(client, demo, data):
    before = state(demo)
    response = finish(signed(client, demo.organiser), demo.session1, **data)
    assert response.status_code == 303 and response["Location"].startswith(reverse("battle", args=[demo.session1.pk]))
    assert messages_of(response)[0] in ("Choose who won: side A, side B or a draw.",
                                        "Select a valid choice. C is not one of the available choices.",
                                        "Ensure this value has at most 300 characters (it has 301).")
    assert state(demo) == before


def test_finishing_twice_is_refused(client, demo):
    finish_first_session(demo)
    before = state(demo)
    response = finish(signed(client, demo.organiser), demo.session1, winner="B")
    assert messages_of(response) == ["This battle is already finished"]
    # Without JavaScript, from a page drawn before: said at once, not asked first on a page with no
    # Finish form left to ask in.
    response = client.post(reverse("battle_finish", args=[demo.session1.pk]), {"winner": "B"})
    assert "confirm" not in response["Location"] and messages_of(response)[-1] == "This battle is already finished"
    assert state(demo) == before


@pytest.mark.parametrize("htmx", [False, True])
def test_a_session_never_started_is_not_finished_nor_counted(client, demo, htmx):
    """Session 2 set up but never started: finishing it had written its untouched copy back and made
    it the second session played. Now refused, saying why and what to do; nothing changes."""
    finish_first_session(demo)
    two = services.start_session(campaign_id=demo.campaign.pk, user=demo.organiser)
    before = state(demo)
    signed(client, demo.organiser)
    page = text_of(client.get(reverse("battle", args=[two.pk])), "finish-battle")
    assert "has not started, so it cannot be finished" in page
    response = finish(client, two, htmx=htmx, winner="A", result="Walkover")
    if htmx:
        assert text_of(response, "finish-error") == services.NEVER_STARTED.format(name=two.name)
    else:
        assert messages_of(response) == [services.NEVER_STARTED.format(name=two.name)]
    assert state(demo) == before
    assert Battle.objects.get(pk=two.pk).status == BattleStatus.SETUP
    assert "1 session played, 1 open." in text_of(client.get(campaign_url(demo)), "tally")


def finish_form(response):
    """The "Finish battle" details as the page draws them: whether open, each form's inputs as sent."""
    details = tree(response).find("finish-battle")
    forms = []
    for form in details.find_all("form"):
        fields = {}
        for i in form.find_all("input"):
            if i.attrs.get("type") not in ("radio", "checkbox") or "checked" in i.attrs:
                fields.setdefault(i.attrs.get("name"), i.attrs.get("value", ""))
        forms.append((form.attrs.get("class", ""), fields))
    return "open" in details.attrs, forms


def test_finish_without_javascript_asks_first_and_keeps_the_result(client, demo):
    """hx-confirm asked only with JavaScript: a plain press of "Finish battle" finished the battle at once.
    Now it lands on the page with the question, the result and text chosen, and Yes or No."""
    before = state(demo)
    response = signed(client, demo.organiser).post(reverse("battle_finish", args=[demo.session1.pk]),
                                                   {"winner": "B", "result": "The barn burned"})
    assert response.status_code == 303 and response["Location"].endswith("#finish-battle")
    assert state(demo) == before
    asked = client.get(response["Location"])
    is_open, ((question, yes), (_, form)) = finish_form(asked)
    assert is_open and "confirm-form" in question
    assert f"Finish {demo.session1.name}? Nothing more can happen in it" in text_of(asked, "finish-battle")
    assert "Side B won: The barn burned." in text_of(asked, "finish-battle")
    assert (yes["confirmed"], yes["winner"], yes["result"]) == ("1", "B", "The barn burned")
    assert (form["winner"], form["result"]) == ("B", "The barn burned")
    # "No, not yet": the form as it was, asking nothing.
    no = next(a for a in tree(asked).find("finish-battle").find_all("a") if a.text() == "No, not yet")
    is_open, forms = finish_form(client.get(no.attrs["href"]))
    assert is_open and len(forms) == 1 and (forms[0][1]["winner"], forms[0][1]["result"]) == ("B", "The barn burned")
    assert state(demo) == before
    del yes["csrfmiddlewaretoken"]
    client.post(reverse("battle_finish", args=[demo.session1.pk]), yes)
    battle = Battle.objects.get(pk=demo.session1.pk)
    assert (battle.status, battle.winner, battle.result) == (BattleStatus.FINISHED, "B", "The barn burned")


@pytest.mark.parametrize("htmx", [False, True])
def test_a_refused_finish_says_so_beside_the_result(client, demo, htmx):
    """No winner chosen: the message was at the page's top (and over HTMX the page reloaded, the form
    closed and emptied). Now beside the Result field, the form open with the text typed."""
    before = state(demo)
    response = finish(signed(client, demo.organiser), demo.session1, htmx=htmx, result="Held")
    shown = response if htmx else client.get(response["Location"])
    assert text_of(shown, "finish-error") == "Choose who won: side A, side B or a draw."
    is_open, [(_, form)] = finish_form(shown)
    assert is_open and form["result"] == "Held" and "winner" not in form
    if htmx:
        assert tree(shown).find("finish-battle").attrs.get("hx-swap-oob") == "true"
    else:
        assert "Choose who won" not in "".join(m.text() for m in tree(shown).find_all("ul", cls="messages"))
    assert state(demo) == before


# ---------------------------------------------------------------------------------- reopen

@pytest.mark.parametrize("htmx", [False, True])
def test_reopen_needs_its_confirmation(client, demo, htmx):
    finish_first_session(demo)
    before = state(demo)
    response = reopen(signed(client, demo.organiser), demo, htmx=htmx)
    problem = "Tick the box to confirm: reopening undoes the session&#x27;s write-back."
    if htmx:
        assert problem in body(response)
    else:
        assert messages_of(response) == ["Tick the box to confirm: reopening undoes the session's write-back."]
    assert state(demo) == before


@pytest.mark.parametrize("htmx", [False, True])
def test_reopen_puts_the_campaign_back_and_opens_the_battle(client, demo, htmx):
    before = state(demo)
    finish_first_session(demo)
    assert state(demo)[3:] != before[3:]
    response = reopen(signed(client, demo.organiser), demo, htmx=htmx, confirm="on")
    if htmx:
        assert response["HX-Refresh"] == "true"
    else:
        assert response.status_code == 303 and response["Location"] == campaign_url(demo) + "#sessions"
    after = state(demo)
    assert after[3:] == before[3:]
    assert Battle.objects.get(pk=demo.session1.pk).status == BattleStatus.IN_PROGRESS
    html = body(client.get(campaign_url(demo)))
    assert "is open again" in html and 'id="reopen-session"' not in html


def test_nothing_to_reopen(client, demo):
    before = state(demo)
    response = reopen(signed(client, demo.organiser), demo, confirm="on")
    assert messages_of(response) == ["No finished battle to reopen"]
    assert state(demo) == before


@pytest.mark.parametrize("htmx", [False, True])
def test_a_session_set_up_by_mistake_is_discarded_from_the_campaign_page(client, demo, htmx):
    finish_first_session(demo)
    before = state(demo)
    start(signed(client, demo.organiser), demo)
    two = Battle.objects.get(campaign=demo.campaign, session_number=2)
    page = body(client.get(campaign_url(demo)))
    assert 'id="discard-session"' in page and "Discard session 2" in page
    assert "A session set up by mistake can be discarded first" in page  # why session 1 cannot reopen now
    assert '<input type="hidden" name="session" value="2">' in page  # the session it discards, and no other
    response = client.post(reverse("campaign_session_discard", args=[demo.campaign.pk]), {"session": "2"},
                           **(HTMX if htmx else {}))
    if htmx:
        assert response["HX-Refresh"] == "true"
    else:
        assert response.status_code == 303 and response["Location"] == campaign_url(demo) + "#sessions"
    assert not Battle.objects.filter(pk=two.pk).exists() and state(demo) == before
    page = body(client.get(campaign_url(demo)))
    assert f"{two.name} is discarded" in page and 'id="discard-session"' not in page and 'id="reopen-session"' in page
    # The same form sent again: refused in words, session 1 kept.
    again = client.post(reverse("campaign_session_discard", args=[demo.campaign.pk]), {"session": "2"},
                        **(HTMX if htmx else {}))
    said = body(again) if htmx else body(client.get(again["Location"]))
    assert "Session 2 has already been discarded: nothing more was discarded" in said
    assert Battle.objects.filter(campaign=demo.campaign, session_number=1).exists()


def test_a_discard_sent_again_after_the_session_was_set_up_anew_discards_nothing(client, demo):
    """Session 2 set up by mistake, discarded, and set up again (from another tab, or by another
    organiser): the first discard's form sent again late (a resend after a lost answer) named
    "session 2" only, so it discarded the new session 2 too and said it had. It now names the battle
    it was drawn for, and the new one is kept."""
    finish_first_session(demo)
    start(signed(client, demo.organiser), demo)
    first = Battle.objects.get(campaign=demo.campaign, session_number=2)
    page = body(client.get(campaign_url(demo)))
    form = {"session": "2", "battle": str(first.pk)}
    assert f'<input type="hidden" name="battle" value="{first.pk}">' in page
    url = reverse("campaign_session_discard", args=[demo.campaign.pk])
    assert client.post(url, form).status_code == 303
    start(client, demo)
    again = Battle.objects.get(campaign=demo.campaign, session_number=2)
    response = client.post(url, form)
    said = body(client.get(response["Location"]))
    assert "Session 2 was discarded and set up again since: nothing was discarded" in said
    assert Battle.objects.filter(pk=again.pk).exists()
    # From the page drawn now, the new session 2 is discarded as usual.
    assert client.post(url, {"session": "2", "battle": str(again.pk)}).status_code == 303
    assert not Battle.objects.filter(pk=again.pk).exists()


# ---------------------------------------------------------------------------------- settings

@pytest.mark.parametrize("htmx", [False, True])
def test_organisers_change_the_two_session_settings_and_nothing_else(client, demo, htmx):
    url = reverse("campaign_settings", args=[demo.campaign.pk])
    response = signed(client, demo.organiser).post(
        url, {"fires_persist": "on", "name": "Renamed", "club": demo.olga.clubs.get().pk, "ruleset": "lg"},
        **(HTMX if htmx else {}))
    campaign = Campaign.objects.get(pk=demo.campaign.pk)
    assert (campaign.fires_persist, campaign.single_open_battle) == (True, False)
    assert (campaign.name, campaign.club_id, campaign.ruleset) == ("Operation Crossroads", demo.campaign.club_id, "ba")
    if htmx:
        assert "Saved." in text_of(response, "campaign-settings")
        assert 'id="sessions" class="card" aria-labelledby="sessions-title" hx-swap-oob="true"' in body(response)
    else:
        assert response.status_code == 303 and messages_of(response) == ["The campaign's settings are saved."]


@pytest.mark.parametrize("htmx", [False, True])
def test_saving_settings_opened_before_another_tab_changed_them_does_not_put_them_back(client, demo, htmx):
    """Tab 1 lets fires keep burning; tab 2, opened before, allows several open battles. Its form still
    has fires going out: saved, it would have put that back without a word. Nothing of tab 2's is
    saved, the panel says what changed, and saving again (now knowingly) keeps what its form holds."""
    from django.test import Client
    from tests.structures.test_sheet_editor import form_data

    url = reverse("campaign_settings", args=[demo.campaign.pk])
    mine = form_data(signed(client, demo.organiser).get(campaign_url(demo)), "settings-form")
    other = signed(Client(), demo.organiser)
    theirs = form_data(other.get(campaign_url(demo)), "settings-form")
    assert "fires_persist" not in mine and mine["single_open_battle"] == "on"
    assert other.post(url, {**theirs, "fires_persist": "on"}, **(HTMX if htmx else {})).status_code in (200, 303)

    del mine["single_open_battle"]
    response = client.post(url, mine, **(HTMX if htmx else {}))
    assert response.status_code == 409
    assert ("These settings were changed since this page was opened (in another tab, or by another organiser), so "
            "nothing was saved. Changed meanwhile: Fires keep burning into the next session (now on). Save again to "
            "put what this form holds over that change") in text_of(response, "campaign-settings")
    assert "Saved." not in text_of(response, "campaign-settings")
    campaign = Campaign.objects.get(pk=demo.campaign.pk)
    assert (campaign.fires_persist, campaign.single_open_battle) == (True, True)

    again = form_data(response, "settings-form")
    assert "fires_persist" not in again and "single_open_battle" not in again and again["seen"] != mine["seen"]
    response = client.post(url, again, **(HTMX if htmx else {}))
    if htmx:
        assert response.status_code == 200 and "Saved." in text_of(response, "campaign-settings")
    else:
        assert response.status_code == 303 and messages_of(response) == ["The campaign's settings are saved."]
    campaign = Campaign.objects.get(pk=demo.campaign.pk)
    assert (campaign.fires_persist, campaign.single_open_battle) == (False, False)


@pytest.mark.parametrize("htmx", [False, True])
def test_the_same_settings_sent_twice_are_saved_not_a_conflict_with_themselves(client, demo, htmx):
    from tests.structures.test_sheet_editor import form_data

    url = reverse("campaign_settings", args=[demo.campaign.pk])
    data = {**form_data(signed(client, demo.organiser).get(campaign_url(demo)), "settings-form"), "fires_persist": "on"}
    assert client.post(url, data).status_code == 303
    response = client.post(url, data, **(HTMX if htmx else {}))
    if htmx:
        assert response.status_code == 200 and "Saved." in text_of(response, "campaign-settings")
        assert "changed since" not in body(response)
    else:
        assert response.status_code == 303 and messages_of(response)[-1] == "The campaign's settings are saved."
    campaign = Campaign.objects.get(pk=demo.campaign.pk)
    assert (campaign.fires_persist, campaign.single_open_battle) == (True, True)


# ---------------------------------------------------------------------------------- commanders

def test_an_organiser_gives_a_side_to_another_member_here_and_in_the_open_session(client, demo):
    """Bob takes over side A (alice cannot come): the campaign's army and session 1's change; bob may
    then fire side A's gun, alice may not. Someone outside the club is refused and nothing changes."""
    from apps.armies.models import Army
    from apps.battles import services as battles
    from apps.rules import ActionRefused

    signed(client, demo.organiser)
    page = body(client.get(campaign_url(demo)))
    assert 'id="commander-A"' in page and 'id="commander-B"' in page
    url = reverse("campaign_commander", args=[demo.campaign.pk])
    version = Battle.objects.get(pk=demo.session1.pk).version
    response = client.post(url, {"side": "A", "owner": str(demo.bob.pk)})
    army = Army.objects.get(campaign=demo.campaign, side="A")
    assert response.status_code == 303 and response["Location"] == campaign_url(demo) + f"#army-{army.pk}"
    assert f'id="army-{army.pk}"' in body(client.get(campaign_url(demo)))  # where the redirect lands
    assert army.owner == demo.bob
    assert Army.objects.get(battle=demo.session1, side="A").owner == demo.bob
    assert Battle.objects.get(pk=demo.session1.pk).version == version + 1
    assert messages_of(response) == [f"Side A, {army.name}, is commanded by bob here and in {demo.session1.name}."]
    ids = demo.ids(demo.session1)
    he = {"weapon": ids.w["he-2d6"], "structure": ids.s["Brick townhouse"],
          "target": ids.u["B", "Grenadier Squad 2"], "hit": "no"}
    with pytest.raises(ActionRefused):  # alice commands nothing here now
        battles.perform(battle_id=demo.session1.pk, user=demo.alice, action="ba_he",
                        attacker=ids.u["A", "Field gun team"], inputs=he)
    battles.perform(battle_id=demo.session1.pk, user=demo.bob, action="ba_he", attacker=ids.u["A", "Field gun team"],
                    inputs=he)

    before = state(demo), list(Army.objects.order_by("pk").values_list("owner_id", flat=True))
    response = client.post(url, {"side": "B", "owner": str(demo.olga.pk)})  # olga is in another club
    assert messages_of(response)[-1] == f"Only a member of {demo.campaign.club.name} may command a side."
    assert (state(demo), list(Army.objects.order_by("pk").values_list("owner_id", flat=True))) == before
    # "Nobody yet": the organisers act for the side.
    client.post(url, {"side": "B", "owner": ""})
    assert Army.objects.get(campaign=demo.campaign, side="B").owner is None
    assert Army.objects.get(battle=demo.session1, side="B").owner is None
    # Players see who commands, not the control.
    page = body(signed(client, demo.alice).get(campaign_url(demo)))
    assert 'id="commander-A"' not in page and "Commanded by bob" in page
