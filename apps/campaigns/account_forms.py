"""Forms for accounts (sign up, throttled sign in) and clubs (new club, invitations, roles, joining).

Every form names its fields: anything else a request carries (club, role, owner, uses…) is never
read, so it can never be saved.
"""

import ipaddress
import secrets
from datetime import timedelta

from django import forms
from django.contrib.admin.forms import AdminAuthenticationForm
from django.contrib.auth import get_user_model
from django.contrib.auth.forms import AuthenticationForm, UserCreationForm
from django.core.exceptions import ValidationError
from django.db import connection, transaction
from django.db.models import Q
from django.utils import timezone
from django.utils.text import slugify

from apps.campaigns.models import (INVITE_ALPHABET, INVITE_CODE_LENGTH, Club, Invite, Membership, Role, SignInFailure)

# Sign-in throttle -------------------------------------------------------------------------------

WINDOW = timedelta(minutes=15)
PER_USERNAME = 5
PER_IP = 20


def client_ip(request):
    """The address the request came from. Behind a reverse proxy this is the proxy's (one shared
    counter for everyone), so a proxy must pass the client's address on as REMOTE_ADDR."""
    raw = (request.META.get("REMOTE_ADDR") or "").strip() if request is not None else ""
    try:
        return str(ipaddress.ip_address(raw))
    except ValueError:
        return None


def throttle_name(username):
    return str(username).strip().lower()[:150]


class Throttled(Exception):
    def __init__(self, message):
        super().__init__(message)
        self.message = message


def _minutes_left(oldest, now):
    seconds = max(60, int((oldest + WINDOW - now).total_seconds()))
    minutes = -(-seconds // 60)
    return f"{minutes} minute{'s' if minutes != 1 else ''}"


def _serialise(*keys):
    """Until the transaction ends, hold a lock per key (a user name, an address), so attempts on the
    same keys are counted one after another, on any number of processes and servers. PostgreSQL's
    advisory locks; SQLite serialises every writing transaction anyway."""
    if connection.vendor != "postgresql":
        return
    with connection.cursor() as cursor:
        for key in sorted(k for k in keys if k):  # one order everywhere: no deadlocks
            cursor.execute("SELECT pg_advisory_xact_lock(hashtextextended(%s, 0))", [f"redoubt.sign-in:{key}"])


def claim_attempt(username, ip, now=None):
    """Count this attempt in before the password is checked, or refuse it if a limit is reached.

    Attempts on the same user name or address are counted one at a time (`_serialise`), so of any
    number of simultaneous attempts exactly as many as the limit allows get to check a password. A
    refused attempt is not counted, so the pause ends 15 minutes after the failures that caused it,
    however often someone knocks meanwhile."""
    now = now or timezone.now()
    since = now - WINDOW
    with transaction.atomic():
        _serialise(f"user:{username}", f"ip:{ip}" if ip else "")
        SignInFailure.objects.filter(at__lt=since).delete()
        recent = SignInFailure.objects.filter(at__gte=since)
        by_name = recent.filter(username=username)
        if by_name.count() >= PER_USERNAME:
            oldest = by_name.order_by("at").values_list("at", flat=True).first()
            raise Throttled(f"Too many failed sign-ins for this user name. To protect the account, signing in is "
                            f"paused: try again in {_minutes_left(oldest, now)}, or reset your password.")
        if ip is not None:
            by_ip = recent.filter(ip=ip)
            if by_ip.count() >= PER_IP:
                oldest = by_ip.order_by("at").values_list("at", flat=True).first()
                raise Throttled(f"Too many failed sign-ins from your network. Signing in from here is paused: "
                                f"try again in {_minutes_left(oldest, now)}.")
        return SignInFailure.objects.create(username=username, ip=ip, at=now)


# Wrong invitation codes count with the failed sign-ins of their address: eight letters are many,
# but not so many that they may be guessed without end. Never a user name (Django's allow no "#").
WRONG_CODE = "#invitation-code"


def code_guessing_paused(ip, now=None):
    """Why this address may not try another invitation code now, or None."""
    if ip is None:
        return None
    now = now or timezone.now()
    recent = SignInFailure.objects.filter(ip=ip, at__gte=now - WINDOW)
    if recent.count() < PER_IP:
        return None
    oldest = recent.order_by("at").values_list("at", flat=True).first()
    return (f"Too many wrong codes or failed sign-ins from your network: trying codes from here is paused. "
            f"Try again in {_minutes_left(oldest, now)}.")


def count_wrong_code(ip, now=None):
    if ip is not None:
        SignInFailure.objects.create(username=WRONG_CODE, ip=ip, at=now or timezone.now())


# Password-reset mail: each request counts with its address's failed sign-ins and wrong codes (a
# script cannot mail without end from one place), and at most PER_ADDRESS mails go to one email
# address in WINDOW, whoever asks (nobody's inbox is flooded). Counted whether or not an account has
# the address, so the answer still tells nothing about who has an account.
RESET = "#password-reset:"
RESETS_PER_ADDRESS = 3


def claim_reset(email, ip, now=None):
    """Count this password-reset request in, or say why it is refused (and count nothing)."""
    now = now or timezone.now()
    marker = (RESET + str(email).strip().lower())[:150]
    with transaction.atomic():
        _serialise(f"reset:{marker}", f"ip:{ip}" if ip else "")
        recent = SignInFailure.objects.filter(at__gte=now - WINDOW)
        limits = [(recent.filter(username=marker), RESETS_PER_ADDRESS,
                   "Reset links were sent to this address a few times already: check its inbox (and spam folder)")]
        if ip is not None:
            limits.append((recent.filter(ip=ip), PER_IP, "Too many reset requests or failed sign-ins from your network"))
        for rows, limit, words in limits:
            if rows.count() >= limit:
                oldest = rows.order_by("at").values_list("at", flat=True).first()
                return f"{words}. Ask again in {_minutes_left(oldest, now)}."
        SignInFailure.objects.create(username=marker, ip=ip, at=now)
    return None


def clear_attempts(username):
    """A successful sign-in wipes the user name's count (its own attempt included)."""
    SignInFailure.objects.filter(username=username).delete()


class ThrottledAuthenticationForm(AuthenticationForm):
    """Django's sign-in form, with at most PER_USERNAME failures per user name and PER_IP per
    address in WINDOW; past that it says so and never asks the database whether the password fits."""

    throttled = False

    def clean(self):
        username = self.cleaned_data.get("username")
        password = self.cleaned_data.get("password")
        if username is None or not password:
            return super().clean()
        name = throttle_name(username)
        try:
            claim_attempt(name, client_ip(self.request))
        except Throttled as refusal:
            self.throttled = True
            raise ValidationError(refusal.message, code="throttled") from None
        cleaned = super().clean()  # a wrong password raises here and its row stays counted
        clear_attempts(name)
        return cleaned


class ThrottledAdminAuthenticationForm(ThrottledAuthenticationForm, AdminAuthenticationForm):
    """The admin's sign-in (staff only) under the same count: the most powerful accounts must not be
    open to guessing where the site's own sign-in would pause it."""


# Sign up ----------------------------------------------------------------------------------------

class SignUpForm(UserCreationForm):
    email = forms.EmailField(help_text="For resetting your password; never shown to other members.")

    class Meta(UserCreationForm.Meta):
        model = get_user_model()
        fields = ("username", "email")

    def clean_email(self):
        email = self.cleaned_data["email"].strip()
        if get_user_model().objects.filter(email__iexact=email).exists():
            raise ValidationError("An account already uses this email address. Sign in, or reset its password.")
        return email


# Clubs ------------------------------------------------------------------------------------------

class ClubForm(forms.ModelForm):
    # The newest club the user belonged to when the page was drawn: a second send of the same form
    # (a double tap) finds the club the first made, of the same name, and goes to it.
    after = forms.IntegerField(widget=forms.HiddenInput, required=False, min_value=0)

    class Meta:
        model = Club
        fields = ["name"]
        help_texts = {"name": "You become its organiser; invite the others with a code."}

    @classmethod
    def for_user(cls, user):
        newest = Membership.objects.filter(user=user).order_by("-club_id").values_list("club_id", flat=True).first()
        return cls(initial={"after": newest or 0})

    def made_meanwhile(self, user):
        """The club a first send of this same form made, if this is the second (call under the new-club lock)."""
        after = self.cleaned_data.get("after")
        if after is None:
            return None
        return (Club.objects.filter(pk__gt=after, name=self.cleaned_data["name"], memberships__user=user,
                                    memberships__role=Role.ORGANISER).order_by("-pk").first())

    def clean_name(self):
        name = self.cleaned_data["name"].strip()
        # Any alphabet's letters: a club called "Бункер" gets the address club-n (unique_club_slug).
        if not any(ch.isalnum() for ch in name):
            raise ValidationError("Use at least one letter or digit in the name.")
        return name


# Addresses under /clubs/ that are pages of their own: a club named "New" must not be hidden behind
# the new-club form.
RESERVED_SLUGS = frozenset({"new"})


def unique_club_slug(name):
    """A free address for a new club. Call it in the transaction that creates the club: it holds the
    new-club lock until then, so two clubs of the same name created at once (a double tap on Create)
    get two addresses instead of the second failing on the unique slug."""
    _serialise("new-club")
    base = slugify(name)[:50] or "club"
    slug, n = base, 2
    while slug in RESERVED_SLUGS or Club.objects.filter(slug=slug).exists():
        slug, n = f"{base}-{n}", n + 1
    return slug


VALID_FOR = [(1, "1 day"), (7, "1 week"), (30, "30 days")]


class InviteForm(forms.Form):
    role = forms.ChoiceField(choices=Role.choices, initial=Role.PLAYER, label="Joins as")
    days = forms.TypedChoiceField(choices=VALID_FOR, coerce=int, initial=7, label="Valid for")
    max_uses = forms.IntegerField(min_value=1, max_value=100, initial=1, label="How many people may use it")

    def create(self, *, club, user):
        """A new invitation with a fresh code (retrying the rare clash with an existing one)."""
        for _ in range(5):
            code = new_invite_code()
            if not Invite.objects.filter(code=code).exists():
                break
        return Invite.objects.create(
            club=club, role=self.cleaned_data["role"], code=code, max_uses=self.cleaned_data["max_uses"],
            expires_at=timezone.now() + timedelta(days=self.cleaned_data["days"]), created_by=user,
        )


def new_invite_code():
    return "".join(secrets.choice(INVITE_ALPHABET) for _ in range(INVITE_CODE_LENGTH))


def normalise_code(raw):
    """What people type: any case, spaces or a dash in the middle (codes are shown as ABCD-EFGH)."""
    return "".join(ch for ch in str(raw).upper() if ch.isalnum())[:32]


def pretty_code(code):
    return f"{code[:4]}-{code[4:]}" if len(code) == INVITE_CODE_LENGTH else code


class JoinForm(forms.Form):
    code = forms.CharField(max_length=40, label="Invitation code",
                           help_text="8 letters and digits, e.g. K7QM-3XPA; the dash is optional.")

    def clean_code(self):
        code = normalise_code(self.cleaned_data["code"])
        if len(code) != INVITE_CODE_LENGTH or any(ch not in INVITE_ALPHABET for ch in code):
            raise ValidationError("That is not an invitation code: codes are 8 letters and digits "
                                  "(no 0, O, 1, I or L).")
        return code


class RoleForm(forms.Form):
    role = forms.ChoiceField(choices=Role.choices)


class SpectatorLinkForm(forms.Form):
    label = forms.CharField(max_length=80, required=False, label="Who is it for? (optional)")


def invite_lookup(code):
    return Invite.objects.select_related("club").filter(Q(code=code)).first()
