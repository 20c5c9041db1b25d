"""The answers every app's views give the same way: the 303 after a POST and the refusal page."""

from functools import wraps

from django.conf import settings
from django.core.exceptions import RequestDataTooBig
from django.http import HttpResponse, HttpResponseForbidden, HttpResponseNotFound
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views import defaults


def see_other(url):
    """303 after a POST: the browser follows with a GET, so a reload never posts twice."""
    response = redirect(url)
    response.status_code = 303
    return response


def post_or_back(page):
    """POST only, like require_POST; but a GET goes to `page` (a URL name taking the view's pk) instead of
    a bare 405: the address of a page a form without JavaScript answered (a refusal, a confirmation),
    opened again from history or reloaded, lands where that form was."""
    def decorator(view):
        @wraps(view)
        def only_post(request, pk):
            if request.method != "POST":
                return see_other(reverse(page, args=[pk]))
            return view(request, pk=pk)
        return only_post
    return decorator


def refused(request, message, *, status=403, title="Not allowed", back=None):
    """A refusal in words, on a page of its own: nothing was changed. An htmx request gets the words
    alone, as plain text: htmx swaps no refusal, and the page's connection notice (connection.js) shows
    a plain answer's words, where of a whole page it could only say the status."""
    if getattr(request, "htmx", False):
        return HttpResponse(message, status=status, content_type="text/plain; charset=utf-8")
    # Only a request that tried to change something is told that nothing was: a revoked spectator link
    # or another page refused on opening changed nothing because it asked for nothing.
    return render(request, "refused.html", {"title": title, "message": message, "back": back,
                                            "tried_a_change": request.method not in ("GET", "HEAD")}, status=status)


def permission_denied(request, exception):
    """handler403: a view's PermissionDenied gets the same refusal page as `refused`, its message
    shown to the person instead of only reaching the server log. An htmx request keeps a short plain
    body: htmx swaps no 403, and a whole page is no use to the script that asked."""
    message = str(exception) or "You may not open this page."
    if getattr(request, "htmx", False):
        return HttpResponseForbidden(message, content_type="text/plain; charset=utf-8")
    return refused(request, message)


def page_not_found(request, exception):
    """handler404: the site's layout and a way home (templates/404.html), not the server's bare page (a
    member removed from a club reloads its battle page and lands here). One message for every 404,
    whatever the view's own said: what is missing and what is another club's must read the same. htmx
    gets the words alone."""
    if getattr(request, "htmx", False):
        return HttpResponseNotFound("Not found: reload the page.", content_type="text/plain; charset=utf-8")
    return render(request, "404.html", status=404)


def bad_request(request, exception):
    """handler400: text pasted into an import form beyond Django's limit on a request's form data is
    refused before any view runs (the CSRF check reads the form); say so in words, not a bare 400."""
    if isinstance(exception, RequestDataTooBig):
        limit = settings.DATA_UPLOAD_MAX_MEMORY_SIZE
        return refused(request, f"What was sent is more than {limit:,} bytes, so none of it was read. "
                                "To import a file that large, choose it as a file instead of pasting it.",
                       status=400, title="Too much text", back=request.path)
    return defaults.bad_request(request, exception)
