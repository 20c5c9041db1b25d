from django.apps import AppConfig


class StructuresConfig(AppConfig):
    name = "apps.structures"
    label = "structures"
    verbose_name = "Structures and bunker sheets"
