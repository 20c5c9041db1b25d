from django.contrib.auth.decorators import login_required
from django.shortcuts import render

from apps.campaigns import permissions


@login_required
def home(request):
    return render(request, "campaigns/home.html", {"clubs": permissions.clubs_for(request.user)})
