from django.http import HttpResponse, HttpResponseForbidden
from django.views import csrf
from django.views.decorators.http import require_GET


@require_GET
def healthz(request):
    """For load balancers and uptime checks: the app is up. Touches no database, so it is also the
    do-nothing baseline the HTTP benchmark compares against."""
    return HttpResponse("ok", content_type="text/plain")


STALE_PAGE = "This page is out of date (you signed in or out in another tab or window): reload it, then try again."


def csrf_failure(request, reason=""):
    """CSRF_FAILURE_VIEW. A page left open while its user signed in or out in another tab holds a CSRF
    token that no longer matches; its htmx requests get one plain sentence, which the battle screen
    shows, instead of a whole error page htmx would not swap."""
    if request.headers.get("HX-Request") == "true":
        return HttpResponseForbidden(STALE_PAGE, content_type="text/plain; charset=utf-8")
    return csrf.csrf_failure(request, reason)
