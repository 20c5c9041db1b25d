from django.urls import path

from apps.structures import views

urlpatterns = [
    path("structures/<int:pk>/", views.structure_detail, name="structure"),
    path("sheets/", views.sheet_list, name="sheet_list"),
    path("sheets/new/", views.sheet_new, name="sheet_new"),
    path("sheets/import/", views.sheet_import, name="sheet_import"),
    path("sheets/reference/", views.reference, name="sheet_reference"),
    path("sheets/<int:pk>/", views.sheet_detail, name="sheet"),
    path("sheets/<int:pk>/edit/", views.sheet_edit, name="sheet_edit"),
    path("sheets/<int:pk>/preview/", views.sheet_preview, name="sheet_preview"),
    path("sheets/<int:pk>/clone/", views.sheet_clone, name="sheet_clone"),
    path("sheets/<int:pk>/delete/", views.sheet_delete, name="sheet_delete"),
    path("sheets/<int:pk>/export/", views.sheet_export, name="sheet_export"),
    path("sheets/<int:pk>/print/", views.sheet_print, name="sheet_print"),
]
