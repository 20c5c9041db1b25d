"""The site's URLs plus one view that fails, for the 500 page's test."""

from django.urls import path

from config.urls import handler400, handler403, urlpatterns as site

__all__ = ["handler400", "handler403", "urlpatterns"]


def broken(request):
    raise RuntimeError("secret-detail: password=hunter2 at /srv/redoubt/apps/views.py")


urlpatterns = [path("broken/", broken), *site]
