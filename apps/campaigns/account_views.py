"""Accounts: sign up, and sign in with a throttle. Signing out and the password change and reset
pages are Django's own views with our templates (config/urls.py)."""

from django.conf import settings
from django.contrib import messages
from django.contrib.auth import login
from django.contrib.auth.views import LoginView, PasswordResetConfirmView, PasswordResetView
from django.shortcuts import redirect, render, resolve_url
from django.utils.http import url_has_allowed_host_and_scheme
from django.views.decorators.cache import never_cache
from django.views.decorators.csrf import csrf_protect
from django.views.decorators.debug import sensitive_post_parameters

from apps.campaigns.account_forms import (SignUpForm, ThrottledAuthenticationForm, claim_reset, clear_attempts,
                                          client_ip, throttle_name)


class SignInView(LoginView):
    form_class = ThrottledAuthenticationForm

    def form_invalid(self, form):
        response = super().form_invalid(form)
        if form.throttled:
            response.status_code = 429
        return response


class AskResetView(PasswordResetView):
    """Django's reset request, throttled (`claim_reset`): refused beside the address, nothing mailed."""

    def form_valid(self, form):
        refused = claim_reset(form.cleaned_data["email"], client_ip(self.request))
        if refused:
            form.add_error("email", refused)
            response = self.form_invalid(form)
            response.status_code = 429
            return response
        return super().form_valid(form)


class ResetPasswordView(PasswordResetConfirmView):
    def form_valid(self, form):
        # The pause after five failures says "or reset your password": a new password ends it. Without
        # this, anyone typing a member's name wrong five times would keep them out for 15 minutes.
        clear_attempts(throttle_name(form.user.get_username()))
        return super().form_valid(form)


def safe_next(request):
    wanted = request.POST.get("next") or request.GET.get("next") or ""
    if wanted and url_has_allowed_host_and_scheme(wanted, allowed_hosts={request.get_host()},
                                                  require_https=request.is_secure()):
        return wanted
    return ""


@sensitive_post_parameters("password1", "password2")
@csrf_protect
@never_cache
def sign_up(request):
    """A new account, signed in at once; `next` brings someone who followed an invitation back to it."""
    if request.user.is_authenticated:
        return redirect(safe_next(request) or resolve_url(settings.LOGIN_REDIRECT_URL))
    form = SignUpForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        user = form.save()
        login(request, user, backend="django.contrib.auth.backends.ModelBackend")
        back = safe_next(request)
        # Back at the invitation they came from, its Join button right there: not sent to type its code.
        messages.success(request, f"Welcome, {user.get_username()}." if back else
                         f"Welcome, {user.get_username()}. Join a club with an invitation code, or start your own.")
        return redirect(back or "club_list")
    return render(request, "registration/signup.html", {"form": form, "next": safe_next(request)},
                  status=400 if request.method == "POST" else 200)
