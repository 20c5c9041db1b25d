"""The poll token: who is watching which battle, signed into the page so the poll never needs the
session or the user row.

Every phone at the table asks "anything new?" every two seconds. Answering from the token and one
battle-row query keeps that answer as cheap as a request can be; access is checked properly (is
the token's user still a member of the club?) only when there is something to send.
"""

from django.core import signing

SALT = "redoubt.battle-watch"
MAX_AGE = 12 * 60 * 60  # a long session at the table; after that the page reloads for a new one


class InvalidToken(Exception):
    pass


def issue(battle_id, user_id):
    return signing.dumps({"b": battle_id, "u": user_id}, salt=SALT, compress=False)


def read(token, battle_id):
    """The user id the token was issued to, if it is genuine, fresh and for this battle."""
    try:
        data = signing.loads(token or "", salt=SALT, max_age=MAX_AGE)
    except signing.BadSignature:  # SignatureExpired is a BadSignature too
        raise InvalidToken from None
    if not isinstance(data, dict) or data.get("b") != battle_id or not isinstance(data.get("u"), int):
        raise InvalidToken
    return data["u"]
