from django.http import HttpResponse, HttpResponseForbidden
from django.middleware.csrf import REASON_NO_CSRF_COOKIE, REASON_NO_REFERER
from django.shortcuts import render
from django.views.decorators.http import require_GET


@require_GET
def healthz(request):
    """For load balancers and uptime checks: the app is up. Touches no database, so it is also the
    do-nothing baseline the HTTP benchmark compares against."""
    return HttpResponse("ok", content_type="text/plain")


STALE_PAGE = "This page is out of date (you signed in or out in another tab or window): reload it, then try again."
CSRF_TITLE = "The form was not accepted"
NO_COOKIE = ("Your browser did not send this site's cookie with the form. Redoubt needs cookies to sign you in and "
             "to accept forms: allow them for this site, reload the page, then try again.")
NO_REFERER = ("Your browser did not say which page of this site the form came from, so it could not be checked. Allow "
              "it to send the Referer header to this site, reload the page, then try again.")
OTHER_ORIGIN = ("The form was sent from an address this server does not know as its own, so it was refused. If you "
                "opened Redoubt at its usual address, tell whoever runs the server.")


def csrf_failure(request, reason=""):
    """CSRF_FAILURE_VIEW. A page left open while its user signed in or out in another tab holds a CSRF
    token that no longer matches; its htmx requests get one plain sentence, which the battle screen
    shows, instead of a whole error page htmx would not swap. A plain form gets the site's own page
    saying what to do (Django's shows its debugging text, in a style the CSP blocks)."""
    if request.headers.get("HX-Request") == "true":
        return HttpResponseForbidden(STALE_PAGE, content_type="text/plain; charset=utf-8")
    if reason == REASON_NO_CSRF_COOKIE:
        message = NO_COOKIE
    elif reason == REASON_NO_REFERER:
        message = NO_REFERER
    elif reason.startswith(("Referer checking failed", "Origin checking failed")):  # another site or address
        message = OTHER_ORIGIN
    else:
        message = ("The form was sent from a page that is out of date: you signed in or out in another tab or window "
                   "after it was opened. Go back, reload the page, then try again.")
    return render(request, "refused.html", {"title": CSRF_TITLE, "message": message, "tried_a_change": True}, status=403)
