from django.contrib import admin
from django.urls import include, path

from config.views import healthz

urlpatterns = [
    path("admin/", admin.site.urls),
    path("healthz", healthz, name="healthz"),
    # Sign in and out (POST), password change and reset, with Django's own views.
    path("accounts/", include("django.contrib.auth.urls")),
    path("battles/", include("apps.battles.urls")),
    path("", include("apps.structures.urls")),
    path("", include("apps.campaigns.urls")),
]
