"""What ends a member's open battle pages (their poll tokens; see apps/battles/watch.py) when it
happens outside our own views: signing out, and a new password or a switched-off account however
it was set (our pages, the reset link, the admin, `manage.py changepassword`). A changed role or a
removal is handled where it is made (club_views)."""

from django.conf import settings
from django.contrib.auth.signals import user_logged_out
from django.db.models.signals import post_save
from django.dispatch import receiver

from apps.campaigns.models import Membership


@receiver(user_logged_out)
def signed_out(sender, request, user, **kwargs):
    # Every page the member has open, on every device: the epoch is the membership's, not the
    # session's. A phone still signed in reloads and carries on with a fresh token.
    if user is not None:
        Membership.objects.filter(user_id=user.pk).end_watches()


@receiver(post_save, sender=settings.AUTH_USER_MODEL)
def password_or_access_changed(sender, instance, created, update_fields=None, **kwargs):
    # set_password keeps the new raw password in `_password` until save() has finished (base_user.py
    # hands it to the validators after saving): the only mark a new password leaves that does not
    # cost a query. Signing in saves `last_login` alone: nothing to end then.
    if created or update_fields == frozenset({"last_login"}):
        return
    if getattr(instance, "_password", None) is not None or not instance.is_active:
        Membership.objects.filter(user_id=instance.pk).end_watches()
