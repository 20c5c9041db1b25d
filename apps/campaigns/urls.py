from django.urls import path

from apps.campaigns import views

urlpatterns = [
    path("", views.home, name="home"),
    path("campaigns/<int:pk>/", views.campaign_detail, name="campaign"),
]
