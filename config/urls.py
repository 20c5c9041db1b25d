from django.contrib import admin
from django.contrib.auth import views as auth_views
from django.urls import include, path

from apps.campaigns import account_views
from apps.campaigns.account_forms import ThrottledAdminAuthenticationForm
from config.views import healthz

# A PermissionDenied raised anywhere answers with the refusal page, in the site's layout.
handler403 = "config.responses.permission_denied"
# So does a 404: a page of the site with a way home, never the server's bare "Not Found".
handler404 = "config.responses.page_not_found"
# Pasted text beyond the form-data limit is refused in words (an import page's own limit can be larger).
handler400 = "config.responses.bad_request"
# The admin's sign-in counts failures with the site's own.
admin.site.login_form = ThrottledAdminAuthenticationForm

urlpatterns = [
    path("admin/", admin.site.urls),
    path("healthz", healthz, name="healthz"),
    # Accounts: sign up and a throttled sign in are ours; signing out (POST) and the password change
    # and reset pages are Django's views with our templates (templates/registration/).
    path("accounts/signup/", account_views.sign_up, name="signup"),
    path("accounts/login/", account_views.SignInView.as_view(), name="login"),
    path("accounts/logout/", auth_views.LogoutView.as_view(), name="logout"),
    path("accounts/password_change/", auth_views.PasswordChangeView.as_view(), name="password_change"),
    path("accounts/password_change/done/", auth_views.PasswordChangeDoneView.as_view(), name="password_change_done"),
    path("accounts/password_reset/", account_views.AskResetView.as_view(), name="password_reset"),
    path("accounts/password_reset/done/", auth_views.PasswordResetDoneView.as_view(), name="password_reset_done"),
    path("accounts/reset/<uidb64>/<token>/", account_views.ResetPasswordView.as_view(), name="password_reset_confirm"),
    path("accounts/reset/done/", auth_views.PasswordResetCompleteView.as_view(), name="password_reset_complete"),
    path("battles/", include("apps.battles.urls")),
    path("", include("apps.structures.urls")),
    path("", include("apps.campaigns.urls")),
]
