"""The poll token: who is watching which battle, signed into the page so the poll never needs the
session or the user row. And the spectator link's URL token, signed the same way.

Every phone at the table asks "anything new?" every two seconds. Answering from the token and one
battle-row query keeps that answer as cheap as a request can be. The token names the membership it
was issued under and that membership's `watch_epoch`; the same query reads the epoch, so a token
stops the moment its member signs out, sets a new password, is switched off, removed or given
another role (each bumps or deletes the row), or the account is switched off (that query reads
is_active too), not when it expires. The member's role is read again only when there is something
to send.

A spectator has no account: their poll token names the spectator link instead of a user, and the
spectator poll checks the link is still live inside its one query.
"""

import secrets

from django.core import signing
from django.utils.crypto import constant_time_compare

SALT = "redoubt.battle-watch"
LINK_SALT = "redoubt.spectator-link"
MAX_AGE = 12 * 60 * 60  # a long session at the table; after that the page reloads for a new one
# What the poll's query reads in place of the epoch once the account is switched off (epochs count up
# from 0).
SWITCHED_OFF = -1


class InvalidToken(Exception):
    pass


def issue(battle_id, user_id, membership=None):
    """`membership` is (id, watch_epoch), as `snapshot.member_battle` reads it with the battle
    (`battle.viewer_watch`); without it, one query (tests, the shell). No membership: a token the poll
    always refuses."""
    if membership is None:
        from apps.campaigns.models import Membership

        membership = (Membership.objects.filter(user_id=user_id, club__battles__pk=battle_id)
                      .values_list("pk", "watch_epoch").first()) or (None, None)
    membership_id, epoch = membership
    return signing.dumps({"b": battle_id, "u": user_id, "m": membership_id, "e": epoch}, salt=SALT, compress=False)


def _load(token, battle_id):
    try:
        data = signing.loads(token or "", salt=SALT, max_age=MAX_AGE)
    except signing.BadSignature:  # SignatureExpired is a BadSignature too
        raise InvalidToken from None
    if not isinstance(data, dict) or data.get("b") != battle_id:
        raise InvalidToken
    return data


def read(token, battle_id):
    """(user id, membership id, watch epoch) the token was issued with, if it is genuine, fresh and for
    this battle. A spectator's token carries no user, so it never passes here; nor does one issued
    before tokens named the membership (its page reloads for a new one)."""
    data = _load(token, battle_id)
    if "s" in data or not all(isinstance(data.get(key), int) for key in ("u", "m", "e")):
        raise InvalidToken
    return data["u"], data["m"], data["e"]


def issue_spectator(battle_id, link_id):
    return signing.dumps({"b": battle_id, "s": link_id}, salt=SALT, compress=False)


def read_spectator(token, battle_id):
    """The spectator link id the token was issued for, if genuine, fresh and for this battle."""
    data = _load(token, battle_id)
    if not isinstance(data.get("s"), int) or "u" in data:
        raise InvalidToken
    return data["s"]


# The spectator link's own URL ----------------------------------------------------------------

def new_link_secret():
    return secrets.token_urlsafe(18)


def link_token(link):
    """What /battles/spectate/<token>/ carries: the link's id and secret, signed. No expiry: the
    link lives until an organiser revokes it, and no timestamp either: the club page shows the same
    address for a link every time, so the one copied last week is still the one on the page."""
    return signing.Signer(salt=LINK_SALT).sign_object([link.pk, link.secret])


def read_link_token(token):
    """(link id, secret) from a genuine token; InvalidToken otherwise."""
    try:
        data = signing.Signer(salt=LINK_SALT).unsign_object(token or "")
    except signing.BadSignature:
        raise InvalidToken from None
    if (not isinstance(data, list) or len(data) != 2 or not isinstance(data[0], int)
            or not isinstance(data[1], str)):
        raise InvalidToken
    return data[0], data[1]


def same_secret(link, secret):
    return constant_time_compare(link.secret, secret)
