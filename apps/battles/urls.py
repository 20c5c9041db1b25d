from django.urls import path

from apps.battles import views

urlpatterns = [
    path("<int:pk>/", views.battle_detail, name="battle"),
]
