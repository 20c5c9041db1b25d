"""A campaign's sessions from the campaign page and the battle page: start the next session, finish a
battle, reopen the last one, the campaign's two session settings, and the whole-campaign file.

Every change goes through `apps.campaigns.services` (or `export`); these views check who is asking,
read the form and answer. A plain browser gets a 303 back to the page with a message; an HTMX caller
gets the panel again (with the problem in it) or is sent to the page that changed. A member who is
not an organiser is refused with 403 and the reason; another club's campaign is not found (404).
"""

from django import forms
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import HttpResponse, StreamingHttpResponse
from django.shortcuts import render
from django.urls import reverse
from django.views.decorators.http import require_GET

from apps import rules
from apps.battles.views import FINISH_PROBLEM, finish_offered, finish_shown, page_url, unconfirmed
from apps.campaigns import permissions, services
from apps.campaigns.export import campaign_file, import_campaign, max_bytes
from apps.campaigns.models import Campaign, Weather
from apps.campaigns.scenario_forms import SeenValues
from apps.campaigns.views import campaign_context
from apps.structures.formats import parse_document
from apps.structures.views import ImportForm, download_name, run_import
from config.responses import post_or_back, refused, see_other

WINNERS = (("A", "Side A won"), ("B", "Side B won"), ("D", "A draw"))


class StartSessionForm(forms.Form):
    name = forms.CharField(max_length=120, required=False, label="Name",
                           help_text="Leave empty for “campaign — session N”")
    weather = forms.ChoiceField(choices=Weather.choices, label="Weather")
    # The session number the page offered: a second send of the same form finds it set up.
    number = forms.IntegerField(widget=forms.HiddenInput, required=False, min_value=1)


class FinishForm(forms.Form):
    winner = forms.ChoiceField(choices=WINNERS, widget=forms.RadioSelect, label="Result",
                               error_messages={"required": "Choose who won: side A, side B or a draw."})
    result = forms.CharField(max_length=300, required=False, label="What happened",
                             help_text="One line for the campaign's timeline, e.g. “The Soviets hold the crossroads”")


class ReopenForm(forms.Form):
    confirm = forms.BooleanField(
        label="Yes: put the campaign back as it was before this session ended, and reopen it",
        error_messages={"required": "Tick the box to confirm: reopening undoes the session's write-back."})


class SettingsForm(SeenValues, forms.ModelForm):
    CHANGED = ("These settings were changed since this page was opened (in another tab, or by another organiser), "
               "so nothing was saved. Changed meanwhile: {what}. Save again to put what this form holds over that "
               "change, or reload the page to see it.")

    class Meta:
        model = Campaign
        fields = ["fires_persist", "single_open_battle"]
        labels = {"fires_persist": "Fires keep burning into the next session",
                  "single_open_battle": "One open battle at a time"}

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.remember_values()


class CommanderForm(forms.Form):
    """Who commands one side; the choices are the club's members, read once for both sides."""

    side = forms.ChoiceField(choices=(("A", "A"), ("B", "B")), widget=forms.HiddenInput)
    owner = forms.TypedChoiceField(label="Commanded by", required=False, coerce=int, empty_value=None)

    def __init__(self, *args, members=(), club=None, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["owner"].choices = [("", "Nobody yet (the organisers)")] + list(members)
        self.fields["owner"].error_messages["invalid_choice"] = f"Only a member of {club} may command a side."


class CampaignImportForm(ImportForm):
    """The shared import form (club, file or pasted text) with the campaign format's own size limit,
    said beside the field that is over it (a file is measured before it is read)."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["file"].help_text = f"A .json file of at most {max_bytes() // 1_000_000:,} MB"

    def over_limit(self, size):
        limit = max_bytes()
        if size > limit:
            raise forms.ValidationError(
                f"This is {size:,} bytes; this server imports campaign files of at most {limit:,} bytes, so nothing "
                "was imported. Whoever runs the server can raise the limit (CAMPAIGN_FILE_MAX_BYTES).")

    def clean_file(self):
        upload = self.cleaned_data.get("file")
        if upload:
            self.over_limit(upload.size)
        return upload

    def clean_text(self):
        text = self.cleaned_data.get("text") or ""
        self.over_limit(len(text.encode("utf-8", "surrogatepass")))
        return text

    def document(self):
        upload = self.cleaned_data.get("file")
        return parse_document(upload.read() if upload else self.cleaned_data["text"], limit=max_bytes())


# ---------------------------------------------------------------------------------- helpers

def member_campaign(request, pk):
    return permissions.get_or_404(permissions.campaigns_with_role(request.user).select_related("club"), pk=pk)


def campaign_url(campaign, anchor="sessions"):
    return reverse("campaign", args=[campaign.pk]) + f"#{anchor}"


def settings_url(campaign):
    return campaign_url(campaign, "campaign-settings")


def organised_campaign(doing, back):
    """For the views only the campaign's club's organisers use: they get the campaign, not its pk."""
    return permissions.organisers_only(member_campaign, "pk", doing, back)


def htmx_redirect(url):
    response = HttpResponse(status=200)
    response["HX-Redirect"] = url
    return response


def htmx_refresh():
    response = HttpResponse(status=200)
    response["HX-Refresh"] = "true"
    return response


def panel_again(request, campaign, partial, problem="", **forms_):
    """The panel with the problem (or the bound form's errors) in it. HTMX only swaps 2xx answers, so
    the panel comes back with 200; nothing was changed."""
    context = campaign_context(request, campaign, **forms_)
    context["problem"] = problem
    return render(request, f"campaigns/campaign.html#{partial}", context)


def not_done(request, campaign, problem, partial="sessions", anchor="sessions", **forms_):
    if request.htmx:
        return panel_again(request, campaign, partial, problem, **forms_)
    messages.error(request, problem)
    return see_other(campaign_url(campaign, anchor))


def _number(value):
    try:
        return int(str(value))
    except ValueError:
        return None


def first_error(form):
    return next(iter(e for errors in form.errors.values() for e in errors), "Check the form.")


# ---------------------------------------------------------------------------------- sessions

@login_required
@post_or_back("campaign")
@organised_campaign("start a session", campaign_url)
def session_start(request, campaign):
    """The next session: a battle set up from the campaign's ground and rosters as they stand. The
    battle page's "Start battle" then starts it."""
    form = StartSessionForm(request.POST)
    if not form.is_valid():
        return not_done(request, campaign, first_error(form), start_form=form)
    try:
        battle = services.start_session(campaign_id=campaign.pk, user=request.user, name=form.cleaned_data["name"],
                                        weather=form.cleaned_data["weather"], number=form.cleaned_data["number"])
    except services.AlreadySetUp as done:
        battle = done.battle
        messages.info(request, done.message)
    except rules.ActionRefused as error:
        return not_done(request, campaign, error.message, start_form=form)
    else:
        messages.success(request, f"Session {battle.session_number} is set up from the campaign's ground and "
                                  "rosters. Start the battle when the table is ready.")
    url = reverse("battle", args=[battle.pk])
    return htmx_redirect(url) if request.htmx else see_other(url)


@login_required
@post_or_back("campaign")
@organised_campaign("discard a session", campaign_url)
def session_discard(request, campaign):
    """Take back the newest session while nothing has happened in it (set up by mistake)."""
    try:
        name = services.discard_session(campaign_id=campaign.pk, user=request.user,
                                        number=_number(request.POST.get("session")),
                                        battle_id=_number(request.POST.get("battle")))
    except rules.ActionRefused as error:
        return not_done(request, campaign, error.message)
    messages.success(request, f"{name} is discarded; the campaign is as it was before it was set up.")
    if request.htmx:
        return htmx_refresh()
    return see_other(campaign_url(campaign, "sessions"))


@login_required
@post_or_back("battle")
def battle_finish(request, pk):
    """End a battle from the battle page: the result, and for a campaign battle its end state written
    back to the campaign."""
    battle = permissions.get_or_404(permissions.battles_for(request.user).select_related("campaign", "club"), pk=pk)
    back = reverse("battle", args=[battle.pk])
    if not permissions.is_organiser(request.user, battle.club_id):
        return refused(request, f"Only the organisers of {battle.club.name} finish a battle.", back=back)
    form = FinishForm(request.POST)
    problem = "" if form.is_valid() else first_error(form)
    winner, result = str(request.POST.get("winner", "")), str(request.POST.get("result", ""))
    chosen = [(k, v) for k, v in (("finish_winner", winner), ("finish_result", result)) if v]
    if not problem and unconfirmed(request) and finish_offered(battle):
        # No dialog asked first (no JavaScript): the page asks, as for Undo and End turn. Not where it
        # has no Finish form to ask in (finished meanwhile): the refusal says why at once.
        return see_other(page_url(battle, chosen, confirm="finish") + "#finish-battle")
    if not problem:
        try:
            services.finish_battle(battle_id=battle.pk, user=request.user, winner=form.cleaned_data["winner"],
                                   result=form.cleaned_data["result"])
        except rules.ActionRefused as error:
            problem = error.message
    if problem:
        # Beside the field it is about, the form open with what was chosen; not at the page's top.
        field = "result" if "result" in form.errors else "winner"
        if request.htmx:
            shown = finish_shown(winner, result, problem=problem, field=field)
            return render(request, "battles/battle.html#finish", {"battle": battle, "finish": shown, "finish_oob": True})
        messages.error(request, problem, extra_tags=f"{FINISH_PROBLEM} {field}")
        return see_other(page_url(battle, chosen) + "#finish-battle")
    done = f"{battle.name} is finished"
    if battle.campaign_id:
        done += ": its end state is now the campaign's ground and rosters"
        url = reverse("campaign", args=[battle.campaign_id])
    else:
        url = back
    messages.success(request, done + ".")
    return htmx_redirect(url) if request.htmx else see_other(url)


@login_required
@post_or_back("campaign")
@organised_campaign("reopen a session", campaign_url)
def session_reopen(request, campaign):
    """Reopen the last finished session: the campaign goes back to exactly what it was before it ended."""
    form = ReopenForm(request.POST)
    if not form.is_valid():
        return not_done(request, campaign, first_error(form), reopen_form=form)
    try:
        battle = services.reopen_last(campaign_id=campaign.pk, user=request.user)
    except rules.ActionRefused as error:
        return not_done(request, campaign, error.message)
    messages.success(request, f"{battle.name} is open again; the campaign is back as it was before it ended.")
    if request.htmx:
        return htmx_refresh()
    return see_other(campaign_url(campaign))


@login_required
@post_or_back("campaign")
@organised_campaign("change the campaign's settings", settings_url)
def campaign_settings(request, campaign):
    form = SettingsForm(request.POST, instance=campaign)
    problem = "" if form.is_valid() else first_error(form)
    if not problem:
        try:
            services.change_settings(campaign_id=campaign.pk, user=request.user, seen=form.seen_values(),
                                     **form.values())
        except services.ChangedMeanwhile as change:
            return settings_refused(request, campaign, form, change)
        except rules.ActionRefused as error:
            problem = error.message
    if problem:
        return not_done(request, campaign, problem, partial="settings", anchor="campaign-settings",
                        settings_form=form)
    if request.htmx:
        context = campaign_context(request, campaign)
        context["settings_saved"] = True
        return render(request, "campaigns/campaign.html#settings_update", context)
    messages.success(request, "The campaign's settings are saved.")
    return see_other(campaign_url(campaign, "campaign-settings"))


def settings_refused(request, campaign, form, change):
    """409: the form says what someone else changed and now carries it; nothing was saved. Without
    JavaScript the whole page, as a redirect would lose what this form holds."""
    form.refuse(change.changed, change.stored)
    campaign.refresh_from_db(fields=list(change.stored))  # validating the form put this form's values on it
    page = "campaigns/campaign.html#settings" if request.htmx else "campaigns/campaign.html"
    return render(request, page, campaign_context(request, campaign, settings_form=form), status=409)


@login_required
@post_or_back("campaign")
@organised_campaign("choose who commands a side", lambda campaign: campaign_url(campaign, "rosters"))
def campaign_commander(request, campaign):
    members = permissions.club_members(campaign.club_id)
    form = CommanderForm(request.POST, members=members, club=campaign.club.name)
    if not form.is_valid():
        return not_done(request, campaign, first_error(form), anchor="rosters")
    side, owner_id = form.cleaned_data["side"], form.cleaned_data["owner"]
    try:
        army, battles = services.set_commander(campaign_id=campaign.pk, user=request.user, side=side,
                                               owner_id=owner_id)
    except rules.ActionRefused as error:
        return not_done(request, campaign, error.message, anchor="rosters")
    who = dict(members).get(owner_id, "nobody: the organisers act for it")
    done = f"Side {side}, {army.name}, is commanded by {who}"
    if battles:
        done += " here and in " + ", ".join(b.name for b in battles)
    messages.success(request, done + ".")
    return see_other(campaign_url(campaign, f"army-{army.pk}"))


@login_required
@post_or_back("battle")
def battle_commander(request, pk):
    """Who plays a side, from the battle page (organisers): a campaign's battle changes with its campaign."""
    battle = permissions.get_or_404(permissions.battles_for(request.user).select_related("club"), pk=pk)
    back = reverse("battle", args=[battle.pk]) + "#commanders"
    if not permissions.is_organiser(request.user, battle.club_id):
        return refused(request, f"Only the organisers of {battle.club.name} choose who plays a side.", back=back)
    members = permissions.club_members(battle.club_id)
    form = CommanderForm(request.POST, members=members, club=battle.club.name)
    problem = "" if form.is_valid() else first_error(form)
    if not problem:
        side, owner_id = form.cleaned_data["side"], form.cleaned_data["owner"]
        try:
            army, battles = services.set_battle_commander(battle_id=battle.pk, user=request.user, side=side,
                                                          owner_id=owner_id)
        except rules.ActionRefused as error:
            problem = error.message
    if problem:
        messages.error(request, f"Nothing was changed: {problem}")
        return see_other(back)
    done = f"Side {side}, {army.name}, is played by {dict(members).get(owner_id, 'nobody: the organisers act for it')}"
    if battle.campaign_id:
        done += " in the campaign and in " + ", ".join(b.name for b in battles)
    messages.success(request, done + ".")
    return see_other(back)


# ---------------------------------------------------------------------------------- the campaign file

@login_required
@require_GET
def campaign_export(request, pk):
    # Who may read it is settled here, before the first byte: the file is written as it is sent (a long
    # campaign's, built whole, took a worker 500 MB), and a refusal must not be half a download.
    campaign = member_campaign(request, pk)
    response = StreamingHttpResponse(campaign_file(campaign_id=campaign.pk),
                                     content_type="application/json; charset=utf-8")
    response["Content-Disposition"] = f'attachment; filename="{download_name(campaign.name, "campaign", campaign.pk)}"'
    return response


@login_required
def campaign_import(request):
    """A whole campaign from its file, into a club the user organises. A bad file lists every problem
    with its path and nothing is saved."""
    clubs = list(permissions.organised_clubs(request.user).order_by("name"))
    if not clubs:
        return refused(request, "Only a club's organisers import campaigns into it.", back=reverse("home"))

    def done(campaign):
        messages.success(request, f"Imported the campaign {campaign.name} into {campaign.club.name}.")
        for warning in campaign.import_warnings:
            messages.warning(request, warning)
        return see_other(reverse("campaign", args=[campaign.pk]))

    return run_import(request, "campaigns/import.html", import_campaign, done, clubs=clubs,
                      form_class=CampaignImportForm, extra={"action": request.path})
