from django.apps import AppConfig


class ArmiesConfig(AppConfig):
    name = "apps.armies"
    label = "armies"
    verbose_name = "Armies, units and weapons"
