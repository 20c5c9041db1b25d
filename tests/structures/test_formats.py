"""The "redoubt.sheet" format: export → import → export gives the same bytes for every library
sheet; a bad document lists every problem with its path and saves nothing; size, encoding and
envelope are checked first; the import page."""

import json
import re
from pathlib import Path
from unittest import mock

import pytest
from django.conf import settings
from django.core.exceptions import PermissionDenied
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import call_command
from django.urls import reverse

from apps.campaigns.models import Club, Role
from apps.structures import formats
from apps.structures.formats import (MAX_BYTES, FormatErrors, dumps, export_sheet, import_sheet, parse_document,
                                     sheet_body)
from apps.structures.models import BunkerSheet
from tests.campaigns.test_pages import assert_csp_clean, body, fast_passwords, page, signed_in, user  # noqa: F401

DOCS = Path(settings.BASE_DIR) / "docs" / "formats.md"
REFERENCE = ("materials.json", "weapons.json", "bunker_sheets.json")


def load_reference():
    """The seeds' materials, the weapon catalogue and the library sheets, as the demo loads them."""
    call_command("loaddata", *[str(Path(settings.BASE_DIR) / "fixtures" / name) for name in REFERENCE], verbosity=0)


def designers_world():
    """The reference data; our club with a designer, an organiser and a player; another club's
    organiser."""
    load_reference()
    w = type("World", (), {})()
    w.club = Club.objects.create(name="Home Guard", slug="home-guard")
    w.other = Club.objects.create(name="Rivals", slug="rivals")
    w.designer = user("dora", w.club, Role.DESIGNER)
    w.organiser = user("org", w.club, Role.ORGANISER)
    w.player = user("pat", w.club, Role.PLAYER)
    w.outsider = user("olga", w.other, Role.ORGANISER)
    return w


@pytest.fixture
def world(db):
    return designers_world()


def loghouse():
    return export_sheet(BunkerSheet.objects.get(club=None, slug="soviet-at-hmg-loghouse"))


def errors_of(data, world):
    with pytest.raises(FormatErrors) as caught:
        import_sheet(data, club=world.club, user=world.designer)
    return caught.value.errors


# ---------------------------------------------------------------------------------- round trips

def test_the_library_holds_the_eight_samples_and_the_blank_card(world):
    sheets = BunkerSheet.objects.filter(club=None)
    assert sheets.filter(is_blank=False).count() == 8
    assert sheets.filter(is_blank=True).count() == 1


def test_every_library_sheet_round_trips_byte_for_byte(world):
    for sheet in BunkerSheet.objects.filter(club=None):
        first = dumps(export_sheet(sheet))
        imported = import_sheet(json.loads(first), club=world.club, user=world.designer)
        assert imported.club == world.club and imported.pk != sheet.pk
        assert dumps(export_sheet(imported)) == first, sheet.slug
        # and the imported row is the same card the rules read
        assert sheet_body(imported) == sheet_body(sheet)


def test_export_is_the_documented_envelope_in_a_stable_order(world):
    data = loghouse()
    assert list(data)[:4] == ["format", "version", "slug", "name"]
    assert data["format"] == "redoubt.sheet" and data["version"] == 1
    assert list(data["locations"]) == ["front", "side", "rear", "top"]
    assert list(data["weapons"][0]) == ["crew", "name", "location", "range", "rof", "ap", "mm", "dm", "special"]
    text = dumps(data)
    assert text.endswith("}\n") and json.loads(text) == data


def test_a_slug_the_club_already_uses_gets_a_suffix(world):
    data = loghouse()
    first = import_sheet(data, club=world.club, user=world.designer)
    second = import_sheet(data, club=world.club, user=world.designer)
    assert (first.slug, second.slug) == ("soviet-at-hmg-loghouse", "soviet-at-hmg-loghouse-2")
    # The name too: the builder lists sheets by name, and two alike could not be told apart.
    third = import_sheet(data, club=world.club, user=world.designer)
    assert (second.name, third.name) == (f"{first.name} (2)", f"{first.name} (3)")


def test_optional_keys_take_their_defaults(world):
    minimal = {"format": "redoubt.sheet", "version": 1, "name": "Pillbox", "kind": "bunker", "locations": {
        "front": [{"location": "Walls", "d10_from": 1, "d10_to": 10, "av": 40}],
        "side": [{"location": "Walls", "d10_from": 1, "d10_to": 10, "av": 40}],
        "rear": [{"location": "Walls", "d10_from": 1, "d10_to": 10, "av": 30}], "top": {"av": None}}}
    sheet = import_sheet(minimal, club=world.club, user=world.designer)
    assert sheet.slug == "pillbox" and sheet.dm == 0 and sheet.weapons == [] and sheet.penetration_row == []


def test_the_documented_sheet_example_imports(world):
    blocks = re.findall(r"```json\n(.*?)```", DOCS.read_text(encoding="utf-8"), re.S)
    sheet_doc = next(json.loads(b) for b in blocks if '"redoubt.sheet"' in b)
    sheet = import_sheet(sheet_doc, club=world.club, user=world.designer)
    assert sheet_body(sheet) == sheet_body(BunkerSheet.objects.get(club=None, slug="soviet-at-hmg-loghouse"))


# ---------------------------------------------------------------------------------- bad documents

def test_every_error_is_listed_with_its_path_and_nothing_is_saved(world):
    data = loghouse()
    data["kind"] = "castle"
    data["dm"] = "high"
    data["locations"]["front"][1]["av"] = -5
    data["locations"]["side"][0]["d10_to"] = 11
    data["weapons"][1]["crew"] = "lots"
    data["penetration_row"][3] = "x"
    data["colour"] = "grey"
    before = BunkerSheet.objects.count()
    errors = dict(errors_of(data, world))
    assert errors.keys() == {"kind", "dm", "locations.front[1].av", "locations.side[0].d10_to",
                             "weapons[1].crew", "penetration_row[3]", "colour"}
    assert "castle" in errors["kind"] and "at least 0" in errors["locations.front[1].av"]
    assert "not a field" in errors["colour"]
    assert BunkerSheet.objects.count() == before


@pytest.mark.parametrize("change, path, words", [
    (lambda d: d["locations"]["front"].pop(), "locations.front", "9, 10 hit no location"),
    (lambda d: d["locations"]["rear"][1].update(d10_from=8), "locations.rear", "8 hit two locations"),
    (lambda d: d.update(crew_total=5), "crew_total", "cannot man weapons needing 6"),
    (lambda d: d["penetration_row"].__setitem__(4, 10), "penetration_row[4]", "lower than the column before"),
    (lambda d: d.update(penetration_row=[1, 2, 3]), "penetration_row", "needs 10 values"),
    (lambda d: d["locations"]["top"].update(av=-1), "locations.top.av", "at least 0"),
    (lambda d: d["locations"]["front"][0].update(d10_from=9, d10_to=3), "locations.front[0].d10_to", "below"),
    (lambda d: d.update(name=""), "name", "must not be empty"),
    (lambda d: d.update(leaders={"NCO": -1}), 'leaders["NCO"]', "at least 0"),
    (lambda d: d.update(slug="no spaces"), "slug", "not a slug"),
    (lambda d: d.update(note="a\x00b"), "note", "NUL"),
    (lambda d: d.update(name="\ud800"), "name", "not valid Unicode"),
    (lambda d: d.pop("locations"), "locations", "is missing"),
    (lambda d: d["weapons"][0].update(range=12.5), "weapons[0].range", "whole number"),
    (lambda d: d["locations"]["front"][1].update(location=d["locations"]["front"][0]["location"].upper()),
     "locations.front[1].location", "is already a location on the front facing"),
])
def test_each_rule_names_its_field(world, change, path, words):
    data = loghouse()
    change(data)
    errors = errors_of(data, world)
    assert any(p == path and words in m for p, m in errors), errors


@pytest.mark.parametrize("data, path, words", [
    ([], "document", "must be a JSON object"),
    ({"version": 1}, "format", "is missing"),
    ({"format": "redoubt.scenario", "version": 1}, "format", '"redoubt.scenario" file'),
    ({"format": "redoubt.sheet"}, "version", "is missing"),
    ({"format": "redoubt.sheet", "version": 2}, "version", "reads version 1"),
])
def test_the_envelope_is_checked_first(world, data, path, words):
    assert errors_of(data, world) == [(path, next(m for p, m in errors_of(data, world)))]
    assert errors_of(data, world)[0][0] == path and words in errors_of(data, world)[0][1]


@pytest.mark.parametrize("raw, words", [
    (b"", "is empty"),
    (b"{", "not valid JSON"),
    (b'{"a": NaN}', "NaN is not a number"),
    (b'{"a": 1, "a": 2}', 'the key "a" appears twice'),
    (b"\xff\xfe", "not UTF-8"),
    (b"[" * 100000, "nested too deeply"),
    (b"1" * 5000, "not valid JSON"),
])
def test_parse_errors_name_the_document(raw, words):
    with pytest.raises(FormatErrors) as caught:
        parse_document(raw)
    (path, message), = caught.value.errors
    assert path == "document" and words in message


# Characters of every width: Latin-1, the rest of the first plane, beyond it (a surrogate pair in JSON),
# in keys and values, after an escaped backslash, and escapes of the file's own beside them.
WIDE = '\ufeff{"Église — 東京 😀": ["é", "—", "😀", "\\\\é", "\\u00e9\\ud83d\\ude00 é"], "n": "a\\"b ₂"}'


def test_a_file_beyond_ascii_is_parsed_from_narrow_text_to_the_same_data():
    """A str is stored at the width of its widest character: one "—" in a 51 MB campaign file made the
    text json parses 103 MB, held beside the parsed tree. The file's bytes become ASCII text with each
    wider character as its JSON escape, which reads back the same."""
    with mock.patch.object(formats.json, "loads", wraps=json.loads) as loads:
        data = parse_document(WIDE.encode())
    assert data == json.loads(WIDE.removeprefix("\ufeff"))
    assert data["Église — 東京 😀"][3] == "\\é" and data["Église — 東京 😀"][4] == "é😀 é"
    assert loads.call_args.args[0].isascii()


@pytest.mark.parametrize("text", [
    '{"a": "— é 😀", "b": }',  # after wide characters on the same line
    '[\n"😀😀", "—"\n "é" é]',  # on a later line
    '{"a": "x"} é',  # a wide character is the error
    '{"a": "😀\\é"}',  # a backslash escaping a wide character: an invalid escape, not "\\" and "u00e9"
    '{"a": "\\\\\\é"}',
    '{"a": "\\u00é"}',
    '"😀\u0001"',
])
def test_a_json_error_after_wide_characters_is_named_at_the_files_own_column(text):
    with pytest.raises(json.JSONDecodeError) as plain:
        json.loads(text)
    with pytest.raises(FormatErrors) as caught:
        parse_document(text.encode())
    e = plain.value
    assert caught.value.errors == [("document", f"is not valid JSON: {e.msg} at line {e.lineno}, column {e.colno}")]


def test_files_above_the_limit_are_refused_before_parsing():
    raw = b" " * (MAX_BYTES + 1)
    with mock.patch.object(formats.json, "loads") as loads, pytest.raises(FormatErrors) as caught:
        parse_document(raw)
    loads.assert_not_called()
    assert "refused" in caught.value.errors[0][1]


def test_only_designers_of_the_club_may_import(world):
    with pytest.raises(PermissionDenied):
        import_sheet(loghouse(), club=world.club, user=world.player)
    with pytest.raises(PermissionDenied):
        import_sheet(loghouse(), club=world.club, user=world.outsider)


# ---------------------------------------------------------------------------------- the pages

def test_export_download(client, world):
    sheet = BunkerSheet.objects.get(club=None, slug="german-at-bunker")
    response = signed_in(client, world.player).get(reverse("sheet_export", args=[sheet.pk]))
    assert response.status_code == 200
    assert response["Content-Type"].startswith("application/json")
    assert "attachment" in response["Content-Disposition"] and "german-at-bunker" in response["Content-Disposition"]
    assert response.content.decode() == dumps(export_sheet(sheet))
    BunkerSheet.objects.filter(pk=sheet.pk).update(name="Dora's Bunker")
    renamed = client.get(reverse("sheet_export", args=[sheet.pk]))
    assert 'filename="doras-bunker.redoubt-sheet.json"' in renamed["Content-Disposition"]


def test_import_page_upload_and_paste(client, world):
    signed_in(client, world.designer)
    response = client.get(reverse("sheet_import"))
    assert response.status_code == 200
    assert_csp_clean(response)
    upload = SimpleUploadedFile("sheet.json", dumps(loghouse()).encode(), content_type="application/json")
    response = client.post(reverse("sheet_import"), {"club": world.club.pk, "file": upload})
    sheet = BunkerSheet.objects.get(club=world.club)
    assert response.status_code == 302 and response["Location"] == reverse("sheet", args=[sheet.pk])
    response = client.post(reverse("sheet_import"), {"club": world.club.pk, "text": dumps(loghouse())})
    assert response.status_code == 302 and BunkerSheet.objects.filter(club=world.club).count() == 2


def error_list(response):
    items = page(response).find("import-errors").find_all("li")
    return [(li.find_all("code")[0].text(), li.text()) for li in items]


def test_import_page_lists_every_error(client, world):
    data = loghouse()
    data["kind"] = "castle"
    data["locations"]["front"][0]["av"] = -1
    response = signed_in(client, world.designer).post(reverse("sheet_import"),
                                                      {"club": world.club.pk, "text": json.dumps(data)})
    assert response.status_code == 400
    assert [path for path, _ in error_list(response)] == ["kind", "locations.front[0].av"]
    assert "Nothing was imported: 2 problems" in page(response).text()
    assert not BunkerSheet.objects.filter(club=world.club).exists()


def test_import_page_refuses_a_big_upload_unread(client, world):
    upload = SimpleUploadedFile("big.json", b" " * (MAX_BYTES + 10), content_type="application/json")
    with mock.patch("apps.structures.views.parse_document") as parse:
        response = signed_in(client, world.designer).post(reverse("sheet_import"),
                                                          {"club": world.club.pk, "file": upload})
    parse.assert_not_called()
    assert response.status_code == 400
    assert error_list(response)[0][0] == "document" and "refused" in body(response)


def test_import_page_needs_a_file_or_text_and_a_club_i_design_for(client, world):
    signed_in(client, world.designer)
    response = client.post(reverse("sheet_import"), {"club": world.club.pk})
    assert response.status_code == 400 and "Choose a file or paste the JSON." in body(response)
    response = client.post(reverse("sheet_import"), {"club": world.other.pk, "text": dumps(loghouse())})
    assert response.status_code == 400 and not BunkerSheet.objects.filter(club=world.other).exists()


def test_players_cannot_import(client, world):
    assert signed_in(client, world.player).get(reverse("sheet_import")).status_code == 403
    response = client.post(reverse("sheet_import"), {"club": world.club.pk, "text": dumps(loghouse())})
    assert response.status_code == 403 and not BunkerSheet.objects.filter(club=world.club).exists()


def test_text_pasted_beyond_the_form_data_limit_is_refused_in_words(world):
    """Above Django's 2.5 MB of form data the CSRF check cannot read the form: the page says what
    happened and how to import instead (a campaign file may be up to 20 MB), and nothing is saved."""
    from django.test import Client

    browser = Client(enforce_csrf_checks=True)
    browser.force_login(world.designer)
    browser.get(reverse("sheet_import"))  # the CSRF cookie, as a browser holds it
    text = json.dumps({**loghouse(), "note": "x" * (settings.DATA_UPLOAD_MAX_MEMORY_SIZE + 1000)})
    before = BunkerSheet.objects.count()
    response = browser.post(reverse("sheet_import"), {"club": world.club.pk, "text": text})
    assert response.status_code == 400
    page_text = response.content.decode()
    assert "Too much text" in page_text and "choose it as a file instead of pasting it" in page_text
    assert BunkerSheet.objects.count() == before


@pytest.mark.parametrize("field, words", [
    ("crew", "must be at least 1 man: write null when it needs none of its own"),
    ("rof", "must be at least 1: write null when it has none"),
])
def test_a_weapon_crew_or_rof_of_0_is_refused_at_its_path_as_the_editor_does(world, field, words):
    """The editor refuses a crew or ROF of 0 (the rules take a crew of 0 as a heavy weapon nobody serves,
    and fire a ROF of 0 as 1): a hand-edited sheet file is held to the same, every 0 named."""
    data = loghouse()
    data["weapons"][0][field] = 0
    data["weapons"][1][field] = 0
    before = BunkerSheet.objects.count()
    errors = errors_of(data, world)
    assert [p for p, _ in errors] == [f"weapons[0].{field}", f"weapons[1].{field}"]
    assert all(words in m for _, m in errors), errors
    assert BunkerSheet.objects.count() == before
    data["weapons"][0][field] = data["weapons"][1][field] = None  # what the message says to write
    assert import_sheet(data, club=world.club, user=world.designer).weapons[0][field] is None
