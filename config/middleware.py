"""Answers to htmx requests that Django's own machinery would give as whole pages."""

from urllib.parse import urlencode, urlsplit

from django.conf import settings
from django.http import HttpResponse
from django.shortcuts import resolve_url


class HtmxSignInMiddleware:
    """A page whose session has ended (signed out in another tab, the password changed elsewhere) still
    sends htmx requests; `login_required` redirects them to the sign-in page, the XHR follows, and htmx
    would swap the whole sign-in page into the panel that asked. Send the browser there instead, with
    the page it was on to come back to."""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        response = self.get_response(request)
        if response.status_code != 302 or request.headers.get("HX-Request") != "true":
            return response
        login = resolve_url(settings.LOGIN_URL)
        if urlsplit(response.url).path != login:
            return response
        # Only the page's own path: `next` must never lead off this site.
        page = urlsplit(request.headers.get("HX-Current-URL", ""))
        local = page.path.startswith("/") and not page.path.startswith("//")
        back = page.path + (f"?{page.query}" if page.query else "") if local else "/"
        answer = HttpResponse(status=204)
        answer["HX-Redirect"] = f"{login}?{urlencode({'next': back})}"
        return answer
