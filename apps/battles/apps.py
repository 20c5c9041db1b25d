from django.apps import AppConfig


class BattlesConfig(AppConfig):
    name = "apps.battles"
    label = "battles"
    verbose_name = "Battles and battle logs"
