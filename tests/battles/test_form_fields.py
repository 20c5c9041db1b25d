"""The attack form's inputs, drawn in Python (forms.ActionForm.fields_html) to the character the
template partial they replaced drew: a select with its label, error and long choice repeated in
full, a radio group in a fieldset with its legend and help, with the whitespace the partial left
(the answers stay byte for byte what they were)."""

from tests.battles.test_views import HTMX, he_attack, signed, uid, url, w  # noqa: F401 - the fixture

WEAPON = (
    '\n<div class="field field-select has-error" id="field-weapon">\n  \n    <label for="id_weapon">Weapon</label>\n'
    '    <select name="weapon" aria-invalid="true" aria-describedby="id_weapon_error" id="id_weapon">\n'
    '  <option value="">Choose a weapon</option>\n\n  <option value="w{he}" selected>HE shell 2D6 (not carried)</option>'
    '\n\n</select>\n    \n  \n  \n  \n  <div id="id_weapon_error"><p class="field-error" role="alert">Rifles does not'
    ' carry HE shell 2D6</p></div>\n</div>\n')
ATTACKER_TAIL = (
    '</select>\n    <p class="chosen-in-full">Rifles — no weapon that can do this (side A, 10 models, at 10″, 5″)</p>'
    '\n  \n  \n  \n  \n</div>\n')
HIT_HEAD = (
    '\n<div class="field field-radioselect" id="field-hit">\n  \n    <fieldset class="choice-group"'
    ' aria-describedby="id_hit_helptext"><legend>Hit?</legend><div id="id_hit"><div>\n    <label for="id_hit_0">'
    '<input type="radio" name="hit" value="yes" id="id_hit_0" checked>\n Yes</label>\n\n</div>')


def fields(html):
    """Each input's markup, from its div to the next one's."""
    parts = html.split('\n<div class="field ')
    return {part.split('id="field-', 1)[1].split('"', 1)[0]: '\n<div class="field ' + part for part in parts[1:]}


def test_a_refused_attack_draws_each_input_with_its_label_help_and_error(client, w):  # noqa: F811
    signed(client, w.alice)
    html = client.post(url(w, "battle_resolve"), he_attack(w, attacker=uid(w.rifles)), **HTMX).content.decode()
    drawn = fields(html.split("</form>")[0].split('<fieldset class="dice"')[0])
    assert list(drawn) == ["action", "attacker", "weapon", "structure", "target", "floor", "hit", "went_down", "pins"]
    assert drawn["weapon"] == WEAPON.format(he=w.he.pk)
    assert drawn["attacker"].endswith(ATTACKER_TAIL)
    assert drawn["hit"].startswith(HIT_HEAD)
    assert drawn["hit"].endswith('</fieldset>\n  \n  <p class="help" id="id_hit_helptext">'
                                 + drawn["hit"].split('id="id_hit_helptext">')[1].split("</p>")[0] + "</p>\n  \n  \n</div>\n")
