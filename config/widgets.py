"""Django's stock input, select, radio and checkbox widgets and field labels drawn in Python, to the character the
HTML their templates draw (tests/config/test_widgets.py compares the two).

Why: each widget is a template, and each of its options another one included per option. The
battle's attack form has a dozen such fields and is redrawn on every attack and form change; the
templates were two thirds of the time spent rendering an attack's answer. Anything else (a custom
template, textarea, file and multi-widgets) still goes through the templates.
"""

from html import escape

from django.forms.renderers import DjangoTemplates

W = "django/forms/widgets/"
INPUTS = {f"{W}{name}.html" for name in ("input", "text", "number", "hidden", "email", "password", "url", "search",
                                         "tel", "color", "date", "datetime", "time", "checkbox")}
CHOICE_LISTS = {f"{W}radio.html": f"{W}radio_option.html", f"{W}checkbox_select.html": f"{W}checkbox_option.html"}
SELECT, SELECT_OPTION = f"{W}select.html", f"{W}select_option.html"
LABEL = "django/forms/label.html"


def esc(value):
    """Django's conditional_escape to the character, without its check of every argument for a lazy
    string (keep_lazy's wrapper): a fifth of drawing a select of a few dozen options. Most words drawn
    (ids, names, numbers) hold none of the five characters escape replaces: those are returned as they
    are, without its five passes over them."""
    if hasattr(value, "__html__"):
        return value.__html__()
    text = str(value)
    if "&" in text or "<" in text or ">" in text or '"' in text or "'" in text:
        return escape(text)
    return text


def _attrs(attrs):
    # attrs.html: True is a bare attribute, False leaves it out.
    return "".join("" if value is False else f" {esc(name)}" if value is True else f' {esc(name)}="{esc(value)}"'
                   for name, value in attrs.items())


def _input(w):
    value = "" if w["value"] is None else f' value="{esc(w["value"])}"'
    return f'<input type="{esc(w["type"])}" name="{esc(w["name"])}"{value}{_attrs(w["attrs"])}>'


def _input_option(option):
    # Included templates keep their closing newline (only the outermost is stripped): hence the "\n"s.
    if not option["wrap_label"]:
        return f"{_input(option)}\n\n"
    label_for = f' for="{esc(option["attrs"]["id"])}"' if option["attrs"].get("id") else ""
    return f'<label{label_for}>{_input(option)}\n {esc(option["label"])}</label>\n'


def _select(w):
    out = [f'<select name="{esc(w["name"])}"{_attrs(w["attrs"])}>']
    for group, options, _ in w["optgroups"]:
        if group:
            out.append(f'\n  <optgroup label="{esc(group)}">')
        out.extend(f'\n  <option value="{esc(o["value"])}"{_attrs(o["attrs"])}>{esc(o["label"])}</option>\n'
                   for o in options)
        if group:
            out.append("\n  </optgroup>")
    out.append("\n</select>")
    return "".join(out)


def _choice_list(w):
    wid, css = w["attrs"].get("id"), w["attrs"].get("class")
    out = [f'<div{f" id=\"{esc(wid)}\"" if wid else ""}{f" class=\"{esc(css)}\"" if css else ""}>']
    for group, options, _ in w["optgroups"]:
        if group:
            out.append(f"\n  <div><label>{esc(group)}</label>")
        out.extend(f"<div>\n    {_input_option(o)}\n</div>" for o in options)
        if group:
            out.append("\n  </div>")
    out.append("\n</div>")
    return "".join(out)


def _options_are(widget, template_name):
    return all(o["template_name"] == template_name for _, options, _ in widget["optgroups"] for o in options)


class PythonWidgets(DjangoTemplates):
    """The project's FORM_RENDERER: stock widgets and labels in Python, everything else from templates."""

    def render(self, template_name, context, request=None):
        if template_name == LABEL:
            label = esc(context["label"])
            if not context["use_tag"]:
                return label.strip()
            return f'<{context["tag"]}{_attrs(context["attrs"] or {})}>{label}</{context["tag"]}>'.strip()
        widget = context.get("widget")
        if template_name in INPUTS:
            return _input(widget)
        if template_name == SELECT and _options_are(widget, SELECT_OPTION):
            return _select(widget)
        if template_name in CHOICE_LISTS and _options_are(widget, CHOICE_LISTS[template_name]):
            return _choice_list(widget)
        return super().render(template_name, context, request)
