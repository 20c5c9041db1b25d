from django.urls import path

from apps.campaigns import views

urlpatterns = [
    path("", views.home, name="home"),
]
