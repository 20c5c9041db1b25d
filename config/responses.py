"""The answers every app's views give the same way: the 303 after a POST and the refusal page."""

from django.http import HttpResponseForbidden
from django.shortcuts import redirect, render


def see_other(url):
    """303 after a POST: the browser follows with a GET, so a reload never posts twice."""
    response = redirect(url)
    response.status_code = 303
    return response


def refused(request, message, *, status=403, title="Not allowed", back=None):
    """A refusal in words, on a page of its own: nothing was changed."""
    return render(request, "refused.html", {"title": title, "message": message, "back": back}, status=status)


def permission_denied(request, exception):
    """handler403: a view's PermissionDenied gets the same refusal page as `refused`, its message
    shown to the person instead of only reaching the server log. An htmx request keeps a short plain
    body: htmx swaps no 403, and a whole page is no use to the script that asked."""
    message = str(exception) or "You may not open this page."
    if getattr(request, "htmx", False):
        return HttpResponseForbidden(message, content_type="text/plain; charset=utf-8")
    return refused(request, message)
