"""Two answers every app's views give the same way."""

from django.shortcuts import redirect, render


def see_other(url):
    """303 after a POST: the browser follows with a GET, so a reload never posts twice."""
    response = redirect(url)
    response.status_code = 303
    return response


def refused(request, message, *, status=403, title="Not allowed", back=None):
    """A refusal in words, on a page of its own: nothing was changed."""
    return render(request, "refused.html", {"title": title, "message": message, "back": back}, status=status)
