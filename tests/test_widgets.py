"""config.widgets draws the stock widgets in Python: the HTML must be the templates' to the character."""

import pytest
from django import forms
from django.forms.renderers import DjangoTemplates
from django.utils.safestring import mark_safe
from django.utils.translation import gettext_lazy

from config.widgets import PythonWidgets

GROUPED = [("", "—"), ("Side A", [("u1", "Rifles <1st>"), ("u2", "MG & crew")]), ("Side B", [("u3", 'Say "hi"')])]


class EveryWidget(forms.Form):
    text = forms.CharField(label="Name <b>", initial='a "quoted" <value> & more', max_length=20,
                           widget=forms.TextInput(attrs={"autofocus": True, "readonly": False, "data-x": "1 & 2"}))
    number = forms.IntegerField(initial=3, widget=forms.NumberInput(attrs={"min": 0, "step": "1",
                                                                           "inputmode": "numeric"}))
    hidden = forms.CharField(widget=forms.HiddenInput, required=False)
    email = forms.EmailField(required=False)
    password = forms.CharField(widget=forms.PasswordInput(render_value=False), initial="secret")
    checkbox = forms.BooleanField(initial=True, required=False)
    select = forms.ChoiceField(choices=[("", "Choose"), ("a", "A & B"), (1, 1), ("s", mark_safe("<em>safe</em>"))],
                               initial="a")
    grouped = forms.ChoiceField(choices=GROUPED, initial="u3", widget=forms.Select(attrs={"class": "pick"}))
    lazy = forms.ChoiceField(choices=[("x", gettext_lazy("Yes")), ("y", gettext_lazy("No"))])
    radio = forms.ChoiceField(choices=[("yes", "Yes"), ("no", "No <really>")], initial="no",
                              widget=forms.RadioSelect(attrs={"class": "inline"}))
    radio_grouped = forms.ChoiceField(choices=GROUPED[1:], widget=forms.RadioSelect)
    many = forms.MultipleChoiceField(choices=[("u1", "One"), ("u2", "Two"), ("u3", "Three")], initial=["u1", "u3"],
                                     widget=forms.CheckboxSelectMultiple)
    multi_select = forms.MultipleChoiceField(choices=[("a", "A"), ("b", "B")], initial=["b"])
    date = forms.DateField(required=False, widget=forms.DateInput(attrs={"type": "date"}))
    area = forms.CharField(widget=forms.Textarea, initial="<long> text")


class Labelled(EveryWidget):
    required_css_class = "required"
    label_suffix = " →"


def rendered(form_kwargs, renderer, form_class=EveryWidget):
    form = form_class(renderer=renderer, **form_kwargs)
    return {**{name: str(form[name]) for name in form.fields},
            **{f"{name} label": form[name].label_tag() for name in form.fields},
            "custom label": form["text"].label_tag("Say <what>", attrs={"class": "x", "hidden": True}, tag="span")}


@pytest.mark.parametrize("form_kwargs", [
    {},
    {"data": {"text": "<x>", "number": "-2", "select": "s", "grouped": "u1", "radio": "yes", "radio_grouped": "u2",
              "many": ["u2"], "multi_select": ["a", "b"], "checkbox": "on", "hidden": "h&", "area": "a"}},
    {"data": {}, "auto_id": False},
    {"auto_id": "f-%s", "prefix": "p"},
], ids=["initial", "bound", "no-ids", "prefixed"])
def test_every_stock_widget_draws_exactly_what_its_template_draws(form_kwargs):
    for form_class in (EveryWidget, Labelled):
        expected = rendered(form_kwargs, DjangoTemplates(), form_class)
        assert rendered(form_kwargs, PythonWidgets(), form_class) == expected


def test_the_comparison_covers_escaping_bare_attributes_groups_choices_and_labels():
    joined = "".join(rendered({}, DjangoTemplates()).values())
    for piece in ("&lt;", "&amp;", "&quot;", "<em>safe</em>", "<optgroup", " autofocus", " checked", " selected",
                  "<label", "<textarea", '<label for="id_text">Name &lt;b&gt;:</label>', "<span"):
        assert piece in joined


def test_a_widget_with_its_own_template_still_uses_it():
    class Stars(forms.Select):
        option_template_name = "django/forms/widgets/radio_option.html"

    field = forms.ChoiceField(choices=[("1", "One")], widget=Stars)
    form = forms.Form(renderer=PythonWidgets())
    form.fields["stars"] = field
    assert 'type="select"' in str(form["stars"])  # the radio option template drew it, as Django would


def test_the_project_renders_forms_with_it(settings):
    from django.forms.renderers import get_default_renderer

    assert settings.FORM_RENDERER == "config.widgets.PythonWidgets"
    assert isinstance(get_default_renderer(), PythonWidgets)
