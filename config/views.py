from django.http import HttpResponse
from django.views.decorators.http import require_GET


@require_GET
def healthz(request):
    """For load balancers and uptime checks: the app is up. Touches no database, so it is also the
    do-nothing baseline the HTTP benchmark compares against."""
    return HttpResponse("ok", content_type="text/plain")
