from django.apps import AppConfig


class CampaignsConfig(AppConfig):
    name = "apps.campaigns"
    label = "campaigns"
    verbose_name = "Clubs and campaigns"

    def ready(self):
        from apps.campaigns import signals  # noqa: F401 - connects the receivers
