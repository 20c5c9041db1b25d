from django.urls import path

from apps.structures import views

urlpatterns = [
    path("structures/<int:pk>/", views.structure_detail, name="structure"),
    path("sheets/", views.sheet_list, name="sheet_list"),
    path("sheets/<int:pk>/", views.sheet_detail, name="sheet"),
]
