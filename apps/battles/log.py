"""The battle log: append-only and tamper-evident.

Each entry's hash covers its own content and the previous entry's hash, so editing, deleting or
reordering any entry breaks the chain from that entry on.
"""

import hashlib
import json

from django.db.models import Max

from apps.battles.models import LogEntry

HASHED_FIELDS = ("seq", "turn", "actor_name", "side", "action", "inputs", "dice", "outcome", "summary", "undo")


def content_of(entry):
    """What the hash covers. `undone` is deliberately outside: undoing marks an entry, and the
    undo itself is a later entry that names it."""
    data = {name: getattr(entry, name) for name in HASHED_FIELDS}
    data["undoes"] = entry.undoes.seq if entry.undoes_id else None
    return data


def entry_hash(entry, prev_hash):
    payload = json.dumps(content_of(entry), sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha256(f"{prev_hash}\n{payload}".encode()).hexdigest()


def append_entry(battle, *, save_head=True, last=False, **fields):
    """Add the next entry to the battle's log (`new_entry` says what goes in it) and save it. The
    battle's `log_head` becomes the new entry's hash; `save_head=False` leaves saving it to the
    caller, which saves the battle row straight after anyway."""
    entry = new_entry(battle, last=last, **fields)
    entry.save()
    if save_head:
        type(battle).objects.filter(pk=battle.pk).update(log_head=entry.entry_hash)
    return entry


def new_entry(battle, *, action, summary, turn=None, actor=None, side="", inputs=None, dice=None, outcome=None,
              undo=None, undoes=None, client_token=None, last=False):
    """The battle's next log entry, hashed and not yet saved; `battle.log_head` is set to its hash.
    Save it inside the transaction that changed the battle, with the battle row locked, so sequence
    numbers and the hash chain stay gapless. `last`, the newest entry's (seq, entry_hash) or None
    for an empty log, spares the query for them when the caller read them with the lock."""
    if last is False:
        last = battle.log_entries.order_by("-seq").values_list("seq", "entry_hash").first()
    entry = LogEntry(
        battle=battle,
        seq=(last[0] + 1) if last else 1,
        turn=battle.turn if turn is None else turn,
        actor=actor,
        actor_name=actor.get_username() if actor else "",
        side=side,
        action=action,
        inputs=inputs or {},
        dice=dice or [],
        outcome=outcome or {},
        summary=summary[:500],
        undo=undo or {},
        undoes=undoes,
        client_token=client_token,
        prev_hash=last[1] if last else "",
    )
    # Round-trip through JSON first so the hash sees exactly what the database will hand back.
    for name in ("inputs", "dice", "outcome", "undo"):
        setattr(entry, name, json.loads(json.dumps(getattr(entry, name), default=str)))
    entry.entry_hash = entry_hash(entry, entry.prev_hash)
    battle.log_head = entry.entry_hash
    return entry


def first_broken_entry(battle):
    """The first entry whose stored hash no longer matches the chain, or None if the log is intact.

    Returns (seq, reason). A deleted entry shows as a gap in the sequence numbers; a reordered or
    edited one as a hash that no longer matches its content and predecessor.
    """
    prev_hash = ""
    expected_seq = 1
    for entry in battle.log_entries.order_by("seq").select_related("undoes").iterator(chunk_size=500):
        if entry.seq != expected_seq:
            return expected_seq, f"entry #{expected_seq} is missing (next stored entry is #{entry.seq})"
        if entry.prev_hash != prev_hash:
            return entry.seq, f"entry #{entry.seq} does not follow entry #{entry.seq - 1} (previous hash differs)"
        if entry.entry_hash != entry_hash(entry, prev_hash):
            return entry.seq, f"entry #{entry.seq} was changed after it was written (hash differs)"
        prev_hash = entry.entry_hash
        expected_seq += 1
    battle.refresh_from_db(fields=["log_head"])
    if battle.log_head != prev_hash:
        return expected_seq, f"entry #{expected_seq} and any after it are missing (the log's head hash differs)"
    return None


def last_seq(battle):
    return battle.log_entries.aggregate(m=Max("seq"))["m"] or 0
